/**
 * The query lane (EmbeddingPool.queryLane): during an initial build, a query's embedding runs on a worker
 * of its own instead of waiting for the build's running batch, with the same vector; the lane's worker is
 * gone once the build is over. Real worker threads and the bundled model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddingPool } from '../src/embeddings/pool.js';
import { QUERY_LANE_MIN_CHUNKS, type SemanticSearch } from '../src/embeddings/semantic-search.js';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';

let pool: EmbeddingPool;

/** About 128 tokens each: a batch of 4 is one full run of the bundled model (~250 ms on a quiet core). */
const long = (i: number) =>
  `case ${i} ` +
  Array.from({ length: 14 }, (_, k) => `step ${k} of case ${i} checks the sign-in form again`).join(' ');

/**
 * Embeds 6 batches of 4 long texts on the pool's one build worker; 30 ms after each of the first 4 batches
 * lands (the next one is running), embeds a new query. Per query: whether its vector came before the batch
 * running when it was asked, and how long it took against that batch.
 */
async function queriesDuringBuild(tag: string) {
  const texts = Array.from({ length: 24 }, (_, i) => long(i));
  const chars = texts.slice(0, 4).reduce((n, t) => n + t.length, 0);
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
      if (n > 4) return;
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
  const early = queries.map((_, i) => events.indexOf(`query ${i + 1}`) < events.indexOf(`batch ${i + 2}`));
  return { early, queries, batchMs: batchMs.slice(1) };
}

beforeAll(async () => {
  const started = await EmbeddingPool.start({ provider: 'bundled', workers: 1 });
  if (!started.embedder) throw new Error(`pool did not start: ${started.warnings.join('; ')}`);
  pool = started.embedder;
}, 60_000);

afterAll(async () => {
  await pool?.close();
});

describe('EmbeddingPool query lane (bundled model, real workers)', () => {
  it('without the lane a query waits for the running batch; with it, it does not, with the same vector, and the lane leaves', async () => {
    // The control: what the lane is for (one worker, the query waits for the batch it runs).
    const without = await queriesDuringBuild('plain');
    expect(without.early).toEqual([false, false, false, false]);

    await pool.queryLane(true);
    expect(pool.stats().lane).toBe('on');
    const lane = (pool as unknown as { lane: { worker: import('node:worker_threads').Worker } }).lane;
    const withLane = await queriesDuringBuild('lane');
    expect(withLane.early).toEqual([true, true, true, true]);
    // A single query is ~12 ms of the model against a run's ~250 ms.
    const slowest = Math.max(...withLane.queries.map((q) => q.ms));
    const batch = [...withLane.batchMs].sort((a, b) => a - b)[Math.floor(withLane.batchMs.length / 2)];
    expect(slowest).toBeLessThan(batch / 2);

    // The same vectors as the build's worker gives for the same text (the lane changes no output).
    for (const [i, q] of withLane.queries.entries()) {
      const [again] = await pool.embedAll([`lane query ${i + 1} about billing exports`]);
      expect(Array.from(q.vector)).toEqual(Array.from(again));
    }

    const exited = new Promise<number>((resolve) => lane.worker.once('exit', resolve));
    await pool.queryLane(false);
    expect(pool.stats().lane).toBe('off');
    await exited;
    expect(pool.stats().workers).toBe(1);
    expect((await pool.workerMemory()).length).toBe(1);
  }, 60_000);
});

describe('a background build opens the lane and closes it when done', () => {
  let base: string;
  let service: BacklogService | undefined;
  afterAll(async () => {
    if (service) await closeBacklog(service);
    if (base) await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  it(`over ${QUERY_LANE_MIN_CHUNKS} chunks to embed: lane open during the build, gone after`, async () => {
    base = await mkdtemp(join(tmpdir(), 'backlog-lane-'));
    await mkdir(join(base, 'tasks'), { recursive: true });
    // One short chunk each (title and body): enough chunks for the lane, few tokens (a build of seconds).
    const count = QUERY_LANE_MIN_CHUNKS + 10;
    for (let i = 1; i <= count; i++) {
      const id = `TASK-${String(i).padStart(4, '0')}`;
      await writeFile(
        join(base, 'tasks', `${id}.md`),
        `---\nid: ${id}\ntitle: item ${i} about topic ${i % 7}\nstatus: open\n---\nThe body of item ${i} says a little more.\n`,
      );
    }
    service = await openBacklog({
      dir: base,
      cacheDir: join(base, '.cache'),
      embeddings: 'bundled',
      embedMissing: 'background',
    });
    const semantic = (service as unknown as { semantic: SemanticSearch }).semantic;
    const poolOf = () => (semantic as unknown as { pool: EmbeddingPool | null }).pool;
    const seen = new Set<string>();
    let done = false;
    const ready = service.semanticReady().then(() => (done = true));
    while (!done) {
      const lane = poolOf()?.stats().lane;
      if (lane) seen.add(lane);
      await new Promise((r) => setTimeout(r, 5));
    }
    await ready;
    expect(service.semanticStatus()).toMatchObject({ state: 'ready', total: count });
    expect(service.semanticStatus().missing).toBeUndefined();
    expect(seen.has('loading')).toBe(true);
    expect(poolOf()?.stats().lane).toBe('off');
    expect(poolOf()?.stats().workers).toBe(1);
  }, 60_000);
});
