/**
 * The query lane (EmbeddingPool.queryLane): during an initial build, a query's embedding runs on a worker
 * of its own instead of waiting for the build's running batch, with the same vector; the lane's worker is
 * gone once the build is over. Real worker threads and the bundled model.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingPool } from '../src/embeddings/pool.js';
import { SemanticSearch } from '../src/embeddings/semantic-search.js';
import { SharedEmbeddingPool } from '../src/embeddings/shared-pool.js';
import type { BacklogItem } from '../src/storage/types.js';

/** About 128 tokens each: 4 are one full run of the bundled model (~125 ms on a quiet core). */
const long = (i: number) =>
  `case ${i} ` +
  Array.from({ length: 14 }, (_, k) => `step ${k} of case ${i} checks the sign-in form again`).join(' ');

/**
 * Embeds 4 batches of 8 long texts (two runs each) on the pool's one build worker; 30 ms after batches 1
 * and 3 land (the next one is running; the query before has long been answered), embeds a new query. Per
 * query: whether its vector came before the batch running when it was asked, and how long it took.
 */
async function queriesDuringBuild(pool: EmbeddingPool, tag: string) {
  const texts = Array.from({ length: 32 }, (_, i) => long(i));
  const chars = texts.slice(0, 8).reduce((n, t) => n + t.length, 0);
  const events: string[] = [];
  const asked: Promise<{ ms: number; vector: Float32Array }>[] = [];
  let last = performance.now();
  const batchMs: number[] = [];
  let batches = 0;
  await pool.embedAll(texts, {
    maxBatchChars: chars + 10,
    onProgress: () => {
      batchMs.push(performance.now() - last);
      last = performance.now();
      const n = ++batches;
      events.push(`batch ${n}`);
      if (n !== 1 && n !== 3) return;
      const t = setTimeout(() => {
        const start = performance.now();
        asked.push(
          pool.embedQuery(`${tag} query ${n} about billing exports`).then((vector) => {
            events.push(`query ${n}`);
            return { ms: performance.now() - start, vector };
          }),
        );
      }, 30);
      t.unref();
    },
  });
  const queries = await Promise.all(asked);
  // The query asked during batch n + 1: before it, or after it.
  const early = [1, 3].map((n) => events.indexOf(`query ${n}`) < events.indexOf(`batch ${n + 1}`));
  return { early, queries, batchMs: batchMs.slice(1) };
}

describe('EmbeddingPool query lane (bundled model, real workers)', () => {
  let pool: EmbeddingPool;
  beforeAll(async () => {
    const started = await EmbeddingPool.start({ provider: 'bundled', workers: 1 });
    if (!started.embedder) throw new Error(`pool did not start: ${started.warnings.join('; ')}`);
    pool = started.embedder;
  }, 60_000);
  // Closed once this block is done, whatever its outcome (close waits for every worker to exit): a lowered
  // worker left behind by a failure here would be counted by the next block's nicedThreads().
  afterAll(async () => {
    await pool?.close();
  });

  it('without the lane a query waits for the running batch; with it, it does not, with the same vector, and the lane leaves', async () => {
    // The control: what the lane is for (one worker, the query waits for the batch it runs).
    const without = await queriesDuringBuild(pool, 'plain');
    expect(without.early).toEqual([false, false]);

    await pool.queryLane(true);
    expect(pool.stats().lane).toBe('on');
    const lane = (pool as unknown as { lane: { worker: import('node:worker_threads').Worker } }).lane;
    const withLane = await queriesDuringBuild(pool, 'lane');
    expect(withLane.early).toEqual([true, true]);
    // A query waiting for the running batch would take most of a batch (~250 ms on a quiet machine); a
    // lane's query takes 10-30 ms of CPU (its first ones the most: the lane is warmed when it loads). With
    // batches of one run (~125 ms), a lane query right after the lane loaded went over half of one on a
    // quiet machine (65 against 62 ms): two runs a batch keep the same test apart from that.
    const slowest = Math.max(...withLane.queries.map((q) => q.ms));
    const batch = [...withLane.batchMs].sort((a, b) => a - b)[Math.floor(withLane.batchMs.length / 2)];
    expect(slowest).toBeLessThan(batch / 2);

    // The same vectors as the build's worker gives for the same text (the lane changes no output).
    for (const [i, q] of withLane.queries.entries()) {
      const [again] = await pool.embedAll([`lane query ${2 * i + 1} about billing exports`]);
      expect(Array.from(q.vector)).toEqual(Array.from(again));
    }

    // Linux: the build's worker ran at a lower priority, which cannot be raised again, so the lane stays
    // as the pool's worker and the build's leaves. Elsewhere the lane leaves.
    const slots = (pool as unknown as { slots: { worker: import('node:worker_threads').Worker }[] }).slots;
    const leaving = process.platform === 'linux' ? slots[0] : lane;
    const exited = new Promise<number>((resolve) => leaving.worker.once('exit', resolve));
    await pool.queryLane(false);
    expect(pool.stats().lane).toBe('off');
    await exited;
    expect(pool.stats().workers).toBe(1);
    expect((await pool.workerMemory()).length).toBe(1);
    if (process.platform === 'linux') expect(slots[0]).toBe(lane);
  }, 60_000);
});

describe('a background build opens the lane after its first pass and closes it when done', () => {
  it('lane loading or on while the rest is embedded, gone once every chunk is in; in a workspace, kept while any build wants it', async () => {
    // Two chunks each (two windows of the body; the title is embedded on its own first): the first pass embeds the titles, the rest waits.
    const words = (i: number) => Array.from({ length: 90 }, (_, k) => `w${(i * 7 + k) % 50}`).join(' ');
    const items = Array.from(
      { length: 6 },
      (_, i) =>
        ({ id: `TASK-${i + 1}`, title: `item ${i + 1} about billing`, body: words(i) }) as BacklogItem,
    );
    // Through a workspace's shared pool: the path every backlog of a workspace takes.
    const shared = new SharedEmbeddingPool({ provider: 'bundled' });
    const semantic = new SemanticSearch({
      provider: 'bundled',
      cacheDir: null,
      embedMissing: 'background',
      queryLaneMinChunks: 0,
      sharedPool: shared,
    });
    try {
      await semantic.start(() => items);
      const poolOf = () => (semantic as unknown as { pool: EmbeddingPool | null }).pool;
      const seen = new Set<string>();
      let done = false;
      const ready = semantic.ready.then(() => (done = true));
      while (!done) {
        const lane = poolOf()?.stats().lane;
        if (lane) seen.add(lane);
        await new Promise((r) => setTimeout(r, 5));
      }
      await ready;
      expect(semantic.info()).toMatchObject({ state: 'ready', total: 6 * 2 });
      expect(semantic.info().missing).toBeUndefined();
      expect(seen.has('loading')).toBe(true);
      expect(poolOf()?.stats().lane).toBe('off');
      expect(poolOf()?.stats().workers).toBe(1);
      // Linux: when the lane was on during the build, the build's lowered worker left (the lane took its
      // place); its thread may take a while to exit on a busy machine, and is not counted below once gone.
      if (process.platform === 'linux') await until(() => nicedThreads() === 0, 15_000);

      // Two more backlogs building at once: the lane stays while either wants it, and goes with the last.
      const a = {};
      const b = {};
      await shared.acquire();
      await shared.acquire();
      await Promise.all([shared.queryLane(a, true), shared.queryLane(b, true)]);
      expect(poolOf()?.stats().lane).toBe('on');
      // Linux: the build's worker thread now runs 10 nicer than the rest (the lane and the main thread do not).
      if (process.platform === 'linux') await until(() => nicedThreads() === 1);
      await shared.queryLane(a, false);
      expect(poolOf()?.stats().lane).toBe('on');
      await shared.release(b); // closed mid-build: its wish goes with it
      expect(poolOf()?.stats().lane).toBe('off');
      // The lane took the lowered worker's place: one worker, at the normal priority, and it still embeds.
      expect(poolOf()?.stats().workers).toBe(1);
      if (process.platform === 'linux') await until(() => nicedThreads() === 0);
      expect((await poolOf()!.embed(['after the build'], 'query'))[0]).toHaveLength(512);
      await shared.release(a);
    } finally {
      await semantic.close();
    }
  }, 60_000);
});

/** A thread's nice value (Linux: /proc/self/task/<tid>/stat, field 19). */
function niceOf(tid: string | number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/**
 * Threads of this process nicer than its main thread (by 10, or up to 19: also when the tests themselves
 * run under `nice -n 10`).
 */
function nicedThreads(): number {
  const own = niceOf(process.pid);
  let n = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      if (niceOf(tid) === Math.min(19, own + 10)) n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${check.toString()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
