import { execFileSync } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { chunkText } from '../src/embeddings/chunk.js';
import {
  chunkerFingerprint,
  chunkPlansPath,
  documentKey,
  readChunkPlans,
  writeChunkPlans,
} from '../src/embeddings/chunk-plans.js';
import { SemanticIndex } from '../src/embeddings/semantic-index.js';
import type { Embedder } from '../src/embeddings/types.js';
import { l2normalize } from '../src/embeddings/vector.js';

const MODEL = 'test:model';
const DIMS = 16;
let dir: string;

const embedder: Embedder = {
  id: MODEL,
  dims: DIMS,
  maxTokens: 64,
  embed: async (texts) =>
    texts.map((t) => {
      const h = Buffer.from(hashText(t), 'hex');
      return l2normalize(Float32Array.from({ length: DIMS }, (_, i) => h[i % h.length] - 127.5));
    }),
};
const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i % 13}`).join(' ');
const docs = [
  {
    id: 'A',
    title: 'Board view',
    body: `## One\n\n${words(120, 'alpha')}\n\n## Two\n\n${words(40, 'beta')}`,
  },
  { id: 'B', title: 'Windows paths', body: words(20, 'gamma') },
  { id: 'C', title: 'Title only', body: '' },
];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bs-chunk-plans-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function built(): Promise<{ cache: EmbeddingCache; index: SemanticIndex }> {
  const cache = await EmbeddingCache.open(dir, MODEL, DIMS, { encoding: 'i8' });
  const index = new SemanticIndex({ embedder, cache });
  await index.upsert(docs);
  await cache.save();
  await index.saveChunkPlans();
  return { cache, index };
}

describe('chunk plans beside the embedding cache', () => {
  test('a reader finds each document by its title and body, with the hashes chunking gives', async () => {
    const { cache, index } = await built();
    const path = chunkPlansPath(cache.path);
    const plans = await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions));
    expect(plans.size).toBe(3);
    for (const d of docs) {
      const fresh = chunkText(d.title, d.body, index.chunkOptions).map((c) => hashText(c.text));
      expect(plans.get(documentKey(d.title, d.body))).toEqual(fresh);
    }
    // Another chunker (other options) or a damaged file: nothing.
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, { maxWords: 10 }))).size).toBe(0);
    const bytes = await readFile(path);
    bytes[bytes.length - 30] ^= 1;
    await writeFile(path, bytes);
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions))).size).toBe(0);
    await writeFile(path, bytes.subarray(0, 40));
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions))).size).toBe(0);
    // A link to /dev/zero (read like a file, it never ends) or a FIFO: not read, not waited on.
    await rm(path);
    await symlink('/dev/zero', path);
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions))).size).toBe(0);
    await rm(path);
    execFileSync('mkfifo', [path]);
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions))).size).toBe(0);
  });

  // A `.cache/` arrives with a pull: plans that check out would send a document to other chunks' vectors.
  test('a planted plans file (any checksum its writer can compute, or another key) is not read', async () => {
    const { cache, index } = await built();
    const path = chunkPlansPath(cache.path);
    const fingerprint = chunkerFingerprint(MODEL, index.chunkOptions);
    expect((await readChunkPlans(path, fingerprint)).size).toBe(3);
    const mine = await readFile(path);
    // The bytes before the trailer: magic, fingerprint, count, then each document's key, count and hashes.
    let end = 8 + 20 + 4;
    for (let d = 0; d < mine.readUInt32LE(28); d++) end += 24 + mine.readUInt32LE(end + 20) * 20;
    const planted = (magic: string, trailer: (body: Buffer) => Buffer) => {
      const body = Buffer.from(mine.subarray(0, end));
      body.write(magic, 0, 'latin1');
      body.fill(7, end - 20); // the last document's last chunk: another chunk's hash
      return Buffer.concat([body, trailer(body)]);
    };
    const sha1 = (b: Buffer) => createHash('sha1').update(b).digest();
    const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();
    const otherKey = (b: Buffer) => createHmac('sha256', randomBytes(32)).update(b).digest();
    for (const bytes of [
      planted('BSCHUNK\0', sha1), // the first layout: an unkeyed SHA-1
      planted(mine.toString('latin1', 0, 8), sha1),
      planted(mine.toString('latin1', 0, 8), sha256),
      planted(mine.toString('latin1', 0, 8), otherKey),
    ]) {
      await writeFile(path, bytes);
      expect((await readChunkPlans(path, fingerprint)).size).toBe(0);
    }
    // The index then chunks again, and saves plans of its own that it reads.
    const reader = new SemanticIndex({ embedder, cache });
    await reader.useChunkPlans();
    await reader.upsert(docs);
    await reader.saveChunkPlans();
    expect((await readChunkPlans(path, fingerprint)).size).toBe(3);
  });

  test('an index that reads them takes their hashes (not chunking), and finds the same as one that chunks', async () => {
    const { cache, index } = await built();
    const reader = new SemanticIndex({ embedder, cache });
    await reader.useChunkPlans();
    await reader.upsert(docs, { embed: 0 });
    const chunking = new SemanticIndex({ embedder, cache });
    await chunking.upsert(docs, { embed: 0 });
    const q = (await embedder.embed(['board view']))[0];
    expect(reader.index.search(q, 3)).toEqual(chunking.index.search(q, 3));
    for (const d of docs) expect(reader.hashes(d)).toEqual(index.hashes(d));
    // The file is what decides: a document it says other hashes for gets those (a hint trusted as the cache is).
    const fingerprint = chunkerFingerprint(MODEL, index.chunkOptions);
    const b = docs[1];
    await writeChunkPlans(chunkPlansPath(cache.path), fingerprint, [
      [documentKey(b.title, b.body), [hashText('something else')]],
    ]);
    const told = new SemanticIndex({ embedder, cache });
    await told.useChunkPlans();
    expect(told.hashes(b)).toEqual([hashText('something else')]);
    expect(told.hashes(docs[0])).toEqual(index.hashes(docs[0]));
  });

  test('written again only after a change', async () => {
    const { cache, index } = await built();
    const path = chunkPlansPath(cache.path);
    await writeFile(path, 'kept');
    await index.saveChunkPlans();
    expect(await readFile(path, 'utf8')).toBe('kept');
    index.remove('B');
    await index.saveChunkPlans();
    expect((await readChunkPlans(path, chunkerFingerprint(MODEL, index.chunkOptions))).size).toBe(2);
  });
});
