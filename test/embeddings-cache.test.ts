import { execFileSync } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readdir, readFile, rm, mkdtemp, symlink, writeFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { cacheFileFor, EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { embedWithCache, SemanticIndex } from '../src/embeddings/semantic-index.js';
import type { Embedder } from '../src/embeddings/types.js';
import { dot, l2normalize } from '../src/embeddings/vector.js';

const MODEL = 'test:model';
const DIMS = 8;
let dir: string;

/** Vector derived from the text's hash: deterministic, unit length. */
function fakeVector(text: string, dims = DIMS): Float32Array {
  const h = Buffer.from(hashText(text), 'hex');
  return l2normalize(Float32Array.from({ length: dims }, (_, i) => h[i % h.length] - 127.5));
}

/** An embedder that counts the texts it is asked to embed. */
function countingEmbedder(): Embedder & { calls: string[] } {
  const calls: string[] = [];
  return {
    id: MODEL,
    dims: DIMS,
    maxTokens: 128,
    calls,
    embed: async (texts) => {
      calls.push(...texts);
      return texts.map((t) => fakeVector(t));
    },
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bs-emb-cache-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function filledCache(texts = ['alpha', 'beta', 'gamma']) {
  const cache = await EmbeddingCache.open(dir, MODEL, DIMS);
  cache.put(
    texts.map(hashText),
    texts.map((t) => fakeVector(t)),
  );
  await cache.save();
  return cache;
}

describe('EmbeddingCache', () => {
  test('round trip: binary Float32 file, exact size, same vectors after reopening', async () => {
    const cache = await filledCache();
    expect(cache.path).toBe(cacheFileFor(dir, MODEL));
    expect(cache.path.endsWith('.bin')).toBe(true);
    const idBytes = Buffer.byteLength(MODEL);
    const expected = 28 + Math.ceil(idBytes / 4) * 4 + 3 * (20 + DIMS * 4) + 32; // HMAC-SHA256 last
    expect(await cache.sizeOnDisk()).toBe(expected);
    expect(await cache.save()).toBe(false); // nothing changed

    const again = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(again.warnings).toEqual([]);
    expect(again.size).toBe(3);
    const { vectors, missing } = again.get(['gamma', 'delta', 'alpha'].map(hashText));
    expect(missing).toEqual([1]);
    expect(Array.from(vectors[0]!)).toEqual(Array.from(fakeVector('gamma')));
    expect(Array.from(vectors[2]!)).toEqual(Array.from(fakeVector('alpha')));
    expect(vectors[1]).toBeUndefined();
  });

  test('saves atomically: no temp files left, a half-written temp file is never read', async () => {
    await filledCache();
    await writeFile(`${cacheFileFor(dir, MODEL)}.999.dead.tmp`, 'partial');
    const files = (await readdir(dir)).filter((f) => !f.endsWith('.dead.tmp'));
    expect(files).toEqual([cacheFileFor(dir, MODEL).slice(dir.length + 1)]);
    const again = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(again.size).toBe(3);
  });

  test.each([
    ['truncated', async (p: string) => truncate(p, 100), /truncated or corrupt/],
    [
      'a flipped byte',
      async (p: string) => {
        const b = await readFile(p);
        b[b.length - 30] ^= 0xff;
        await writeFile(p, b);
      },
      /checksum/,
    ],
    [
      'not a cache file',
      async (p: string) => writeFile(p, 'hello world, not a cache at all'),
      /not an embedding cache/,
    ],
    ['empty', async (p: string) => writeFile(p, ''), /not an embedding cache/],
    [
      'another format version',
      async (p: string) => {
        const b = await readFile(p);
        b.writeUInt32LE(99, 8);
        await writeFile(p, b);
      },
      /format version 99/,
    ],
  ])('%s file: ignored with a warning, then rebuilt', async (_name, damage, warning) => {
    const cache = await filledCache();
    await damage(cache.path);
    const again = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(again.size).toBe(0);
    expect(again.warnings).toHaveLength(1);
    expect(again.warnings[0]).toMatch(warning);
    again.put([hashText('x')], [fakeVector('x')]);
    await again.save();
    const fixed = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(fixed.warnings).toEqual([]);
    expect(fixed.size).toBe(1);
  });

  // A `.cache/` arrives with a pull: a file in it that checks out would give a chunk any vector (a hybrid
  // result moved up or down). Only a file signed with this user's key is read (docs/security.md).
  test('a planted file (any checksum its writer can compute, or another key) is refused, never trusted, then rebuilt', async () => {
    const cache = await filledCache();
    const mine = await readFile(cache.path);
    // The bytes before the trailer: header, model id, 3 hashes, 3 f32 vectors.
    const end = 28 + Math.ceil(Buffer.byteLength(MODEL) / 4) * 4 + 3 * (20 + DIMS * 4);
    const planted = (version: number, trailer: (body: Buffer) => Buffer) => {
      const body = Buffer.from(mine.subarray(0, end));
      body.writeUInt32LE(version, 8);
      body.writeFloatLE(0.99, end - DIMS * 4); // the last chunk's vector, changed
      return Buffer.concat([body, trailer(body)]);
    };
    const sha1 = (b: Buffer) => createHash('sha1').update(b).digest();
    const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();
    const otherKey = (b: Buffer) => createHmac('sha256', randomBytes(32)).update(b).digest();
    const files = [
      planted(1, sha1), // the first format: an unkeyed SHA-1
      planted(mine.readUInt32LE(8), sha1),
      planted(mine.readUInt32LE(8), sha256),
      planted(mine.readUInt32LE(8), otherKey),
    ];
    for (const bytes of files) {
      await writeFile(cache.path, bytes);
      const again = await EmbeddingCache.open(dir, MODEL, DIMS);
      expect(again.size).toBe(0);
      expect(again.get([hashText('gamma')]).missing).toEqual([0]);
      expect(again.warnings).toHaveLength(1);
      expect(again.warnings[0]).toMatch(/ignored: .*(format version|checksum mismatch|bytes, expected)/);
      again.put([hashText('x')], [fakeVector('x')]);
      await again.save();
      const rebuilt = await EmbeddingCache.open(dir, MODEL, DIMS);
      expect(rebuilt.warnings).toEqual([]);
      expect(rebuilt.size).toBe(1);
    }
  });

  test('a link or a FIFO planted as the cache is neither followed nor waited on (a link to /dev/zero never ends)', async () => {
    const path = cacheFileFor(dir, MODEL);
    await symlink('/dev/zero', path);
    expect(await EmbeddingCache.peekDims(dir, MODEL)).toBeUndefined();
    expect(EmbeddingCache.peekDimsSync(dir, MODEL)).toBeUndefined();
    const linked = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(linked.size).toBe(0);
    expect(linked.warnings[0]).toMatch(/unreadable/);
    await rm(path);
    execFileSync('mkfifo', [path]);
    expect(await EmbeddingCache.peekDims(dir, MODEL)).toBeUndefined();
    expect(EmbeddingCache.peekDimsSync(dir, MODEL)).toBeUndefined();
    const fifo = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(fifo.size).toBe(0);
    expect(fifo.warnings[0]).toMatch(/not a regular file/);
  });

  test("the header peeks give the dims of this format's files only (a version 1 file is not read)", async () => {
    const cache = await filledCache();
    expect(await EmbeddingCache.peekDims(dir, MODEL)).toBe(DIMS);
    expect(EmbeddingCache.peekDimsSync(dir, MODEL)).toBe(DIMS);
    const bytes = await readFile(cache.path);
    bytes.writeUInt32LE(1, 8);
    await writeFile(cache.path, bytes);
    expect(await EmbeddingCache.peekDims(dir, MODEL)).toBeUndefined();
    expect(EmbeddingCache.peekDimsSync(dir, MODEL)).toBeUndefined();
  });

  test('another model or dims: stale, ignored with a warning', async () => {
    const cache = await filledCache();
    const otherDims = await EmbeddingCache.open(dir, MODEL, 16);
    expect(otherDims.size).toBe(0);
    expect(otherDims.warnings[0]).toMatch(/8 dims, expected 16/);
    // A file of model A where model B's cache would be.
    const b = 'test:other-model';
    await writeFile(cacheFileFor(dir, b), await readFile(cache.path));
    const other = await EmbeddingCache.open(dir, b, DIMS);
    expect(other.size).toBe(0);
    expect(other.warnings[0]).toMatch(/written by model "test:model"/);
  });

  test('retain drops unused vectors; save compacts; earlier views stay valid', async () => {
    const texts = Array.from({ length: 50 }, (_, i) => `text ${i}`);
    const cache = await filledCache(texts);
    const before = await cache.sizeOnDisk();
    const view = cache.get([hashText('text 7')]).vectors[0]!;
    const copy = Array.from(view);
    expect(cache.retain(['text 7', 'text 8'].map(hashText))).toBe(48);
    cache.put([hashText('new')], [fakeVector('new')]);
    expect(await cache.save()).toBe(true);
    expect(await cache.sizeOnDisk()).toBeLessThan(before / 10);
    expect(Array.from(view)).toEqual(copy);
    const again = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(again.size).toBe(3);
    expect(Array.from(again.get([hashText('text 7')]).vectors[0]!)).toEqual(copy);
  });

  test('i8 encoding: a quarter of the vector bytes, cosines within 1e-2, converts an f32 file on save', async () => {
    const dims = 512;
    const texts = Array.from({ length: 40 }, (_, i) => `text ${i}`);
    const vectors = texts.map((t) => fakeVector(t, dims));
    const f32 = await EmbeddingCache.open(dir, MODEL, dims);
    f32.put(texts.map(hashText), vectors);
    await f32.save();
    const f32Size = await f32.sizeOnDisk();

    const i8 = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    expect(i8.size).toBe(40);
    expect(i8.dirty).toBe(true); // stored as f32, asked for i8
    await i8.save();
    const i8Size = await i8.sizeOnDisk();
    expect(i8Size).toBeLessThan(f32Size / 3);

    const back = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    expect(back.warnings).toEqual([]);
    expect(back.dirty).toBe(false);
    const got = back.get(texts.map(hashText)).vectors;
    got.forEach((v, i) => {
      let cos = 0;
      let norm = 0;
      for (let j = 0; j < dims; j++) {
        cos += v![j] * vectors[i][j];
        norm += v![j] * v![j];
      }
      expect(norm).toBeCloseTo(1, 5);
      expect(cos).toBeGreaterThan(0.99);
    });
    // Read back by an f32 cache too (same model, either encoding is valid).
    expect((await EmbeddingCache.open(dir, MODEL, dims)).size).toBe(40);
  });

  test('i8 in memory too: a quarter of the bytes, and get gives what a reload of the file gives', async () => {
    const dims = 512;
    const texts = Array.from({ length: 100 }, (_, i) => `text ${i}`);
    const hashes = texts.map(hashText);
    const vectors = texts.map((t) => fakeVector(t, dims));
    const f32 = await EmbeddingCache.open(join(dir, 'f32'), MODEL, dims);
    const i8 = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    f32.put(hashes, vectors);
    i8.put(hashes, vectors);
    expect(i8.memoryBytes).toBeLessThan(f32.memoryBytes / 3);
    const beforeSave = i8.get(hashes).vectors.map((v) => Array.from(v!));
    await i8.save();
    const afterSave = i8.get(hashes).vectors.map((v) => Array.from(v!));
    const reloaded = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    const fromFile = reloaded.get(hashes).vectors.map((v) => Array.from(v!));
    expect(afterSave).toEqual(beforeSave);
    expect(fromFile).toEqual(beforeSave);
    // Each is the unit vector nearest the original that int8 can hold.
    beforeSave.forEach((v, i) => expect(dot(Float32Array.from(v), vectors[i])).toBeGreaterThan(0.999));
  });

  test('i8: many vectors at once (the WebAssembly kernel) give the same bits as a few at a time (JavaScript)', async () => {
    const dims = 512;
    // Real-looking vectors (a normal-ish spread, one zero vector, one with a single non-zero entry).
    const texts = Array.from({ length: 300 }, (_, i) => `chunk ${i}`);
    const vectors = texts.map((t) => {
      const h = Buffer.from(hashText(t).repeat(60), 'hex');
      return l2normalize(Float32Array.from({ length: dims }, (_, i) => (h[i] - 127.5) * (1 + (i % 7))));
    });
    vectors[17] = new Float32Array(dims);
    vectors[42] = new Float32Array(dims);
    vectors[42][3] = 1;
    const hashes = texts.map(hashText);
    const cache = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    cache.put(hashes, vectors);
    const many = cache.get([...hashes, 'absent', ...hashes.slice(0, 5)]);
    expect(many.missing).toEqual([300]);
    const few = hashes.map((h) => cache.get([h]).vectors[0]!);
    const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));
    hashes.forEach((_, i) => expect(bits(many.vectors[i]!)).toEqual(bits(few[i])));
    expect(bits(many.vectors[301]!)).toEqual(bits(few[0]));
    expect(Array.from(many.vectors[17]!).every((x) => x === 0)).toBe(true);
  });

  test('save builds a large file in slices: the event loop runs between them, the file is what it was at the start', async () => {
    // 6,000 chunks of 512 dims (about the Backlog.md folder): built in one piece, the file took 40-60 ms of
    // this thread; a query arriving meanwhile waited for all of it.
    const dims = 512;
    const texts = Array.from({ length: 6000 }, (_, i) => `chunk ${i}`);
    const cache = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    cache.put(
      texts.map(hashText),
      texts.map((t) => fakeVector(t, dims)),
    );
    const hexWrites = vi.spyOn(Buffer.prototype, 'write');
    try {
      const saving = cache.save();
      // The first turn of the event loop after save() began: a slice of the hashes is written, not all.
      const written = await new Promise<number>((resolve) =>
        setImmediate(() => {
          // A chunk embedded while the file is being built: not in this file, written by the next save.
          cache.put([hashText('late')], [fakeVector('late', dims)]);
          resolve(hexWrites.mock.calls.filter((c) => c[3] === 'hex').length);
        }),
      );
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(texts.length / 2);
      expect(await saving).toBe(true);
    } finally {
      hexWrites.mockRestore();
    }
    const reread = await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' });
    expect(reread.size).toBe(texts.length);
    expect(reread.has(hashText('late'))).toBe(false);
    const probe = texts.filter((_, i) => i % 97 === 0).map(hashText);
    expect(reread.get(probe).vectors.map((v) => Array.from(v!))).toEqual(
      cache.get(probe).vectors.map((v) => Array.from(v!)),
    );
    expect(cache.dirty).toBe(true);
    expect(await cache.save()).toBe(true);
    expect((await EmbeddingCache.open(dir, MODEL, dims, { encoding: 'i8' })).size).toBe(texts.length + 1);
  });

  test('put rejects vectors of the wrong size', async () => {
    const cache = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(() => cache.put([hashText('a')], [new Float32Array(3)])).toThrow(/dims/);
  });
});

describe('embedding only what changed', () => {
  const docs = (n: number, edit: Record<number, string> = {}) =>
    Array.from({ length: n }, (_, i) => ({
      id: `TASK-${i}`,
      title: `Task ${i}`,
      body:
        edit[i] ??
        `Body of task ${i}. ${'Words about the task and what it needs. '.repeat(i % 3 === 0 ? 30 : 2)}`,
    }));

  test('embedWithCache embeds each distinct uncached text once', async () => {
    const cache = await EmbeddingCache.open(dir, MODEL, DIMS);
    const e = countingEmbedder();
    const first = await embedWithCache(e, cache, ['a', 'b', 'a', 'c']);
    expect(e.calls).toEqual(['a', 'b', 'c']);
    expect(first).toMatchObject({ embedded: 3, reused: 1 });
    expect(Array.from(first.vectors[2])).toEqual(Array.from(fakeVector('a')));
    const second = await embedWithCache(e, cache, ['c', 'd']);
    expect(e.calls).toEqual(['a', 'b', 'c', 'd']);
    expect(second).toMatchObject({ embedded: 1, reused: 1 });
  });

  test('a restart embeds only new and changed documents', async () => {
    const e1 = countingEmbedder();
    const cache1 = await EmbeddingCache.open(dir, MODEL, DIMS);
    const index1 = new SemanticIndex({ embedder: e1, cache: cache1 });
    const r1 = await index1.upsert(docs(20));
    expect(r1.embedded).toBe(e1.calls.length);
    expect(r1.chunks).toBeGreaterThan(20); // the long ones have several chunks
    // Re-upserting unchanged documents does nothing.
    const again = await index1.upsert(docs(20));
    expect(again).toMatchObject({ documents: 0, unchanged: 20, embedded: 0 });
    index1.pruneCache();
    await cache1.save();

    // "Restart": a new cache object and index read the same folder; doc 4 changed, doc 20 is new.
    const e2 = countingEmbedder();
    const cache2 = await EmbeddingCache.open(dir, MODEL, DIMS);
    expect(cache2.warnings).toEqual([]);
    const index2 = new SemanticIndex({ embedder: e2, cache: cache2 });
    const changed = docs(21, { 4: 'Completely rewritten body about billing exports.' });
    const progress: number[] = [];
    const r2 = await index2.upsert(changed, { onProgress: (d) => progress.push(d) });
    expect(e2.calls).toEqual([
      'Task 4\nCompletely rewritten body about billing exports.',
      `Task 20\nBody of task 20. ${'Words about the task and what it needs. '.repeat(2).trim()}`,
    ]);
    expect(r2.embedded).toBe(2);
    expect(r2.reused).toBe(r2.chunks - 2);
    expect(progress.at(-1)).toBe(r2.chunks);
    expect(index2.size).toBe(21);

    // Search finds a document by its own text's vector.
    const hits = await index2.search('Task 4\nCompletely rewritten body about billing exports.', 3);
    expect(hits[0]).toMatchObject({ docId: 'TASK-4', chunk: 0 });
    expect(hits[0].score).toBeCloseTo(1, 5);
    expect(index2.remove('TASK-4')).toBe(true);
    expect(
      (await index2.search('Task 4\nCompletely rewritten body about billing exports.', 3))[0].docId,
    ).not.toBe('TASK-4');
  });
});
