/**
 * The early start of a hybrid one-shot's model (src/embeddings/early-start.ts): the model's worker is on
 * the one-shot's critical path, so once the start's modules are loaded it decides and starts the worker
 * without waiting on the event loop; each wait let the rest of the open (queued meanwhile, ~0.05-0.1 s
 * of the main thread in the bundled command) run before the worker started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { BUNDLED_DIMS, bundledId } from '../src/embeddings/bundled.js';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { dropEarlyPool, startModelEarly } from '../src/embeddings/early-start.js';

const threads = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
const RealWorker = threads.Worker;
let dir: string | undefined;

afterEach(async () => {
  threads.Worker = RealWorker;
  dropEarlyPool();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the model worker starts before the event loop turns, once the early start has its modules', async () => {
  dir = await mkdtemp(join(tmpdir(), 'bs-early-'));
  const cache = await EmbeddingCache.open(dir, bundledId(), BUNDLED_DIMS);
  cache.put([hashText('x')], [new Float32Array(BUNDLED_DIMS).fill(1 / Math.sqrt(BUNDLED_DIMS))]);
  await cache.save();
  // The modules it imports, loaded already (as the bundle's chunks are by then): what is left is its own work.
  await Promise.all([
    import('../src/embeddings/resolve.js'),
    import('../src/embeddings/cache.js'),
    import('../src/embeddings/pool.js'),
  ]);
  let started = 0;
  // pool-slots.ts requires node:worker_threads when it spawns: it gets this class.
  threads.Worker = class extends RealWorker {
    constructor(...args: ConstructorParameters<typeof RealWorker>) {
      started++;
      super(...args);
    }
  } as typeof RealWorker;
  startModelEarly({ provider: 'bundled', cacheDir: dir, query: 'board view windows' });
  let turns = 0;
  while (started === 0 && turns < 50) {
    await new Promise((resolve) => setImmediate(resolve));
    turns++;
  }
  // 1 here; reading the cache's header asynchronously (open, stat, read, close) took 4 turns or more,
  // each one the open's chance to run first (no start within 50 turns in this test, under load).
  expect(started).toBe(1);
  expect(turns).toBeLessThanOrEqual(3);
});
