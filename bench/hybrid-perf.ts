/**
 * Hybrid search on the Backlog.md folder, for `npm run bench` (bench/perf.ts): start-up from cold and
 * warm caches, time to first result, the embedding build, query latency per mode next to the query
 * embedding's own latency, memory and the size of `.cache/`. The folder is read in place; its derived
 * data goes to this project's `.cache/bench/` (never into ../shared).
 *
 * Start-up and memory come from bench/rss.ts, run as a process of its own (compiled JavaScript, plain
 * node): the service's own RSS, not this bench process's with everything measured before it.
 */
import { execFileSync } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { EmbeddingPool } from '../src/embeddings/index.js';
import { percentile } from '../src/eval/metrics.js';

const round = (n: number, d = 1) => Number(n.toFixed(d));
const ms = (times: number[]) => ({
  p50: round(percentile(times, 50), 2),
  p95: round(percentile(times, 95), 2),
  p99: round(percentile(times, 99), 2),
});

const RSS_SCRIPT = fileURLToPath(new URL('./rss.ts', import.meta.url));

interface RssPhase {
  chunks: number;
  build_workers?: number;
  build_note?: string;
  semantic_state: string;
  first_result_ms: number;
  semantic_ready_ms: number;
  rss_mb: { before: number; peak: number; after_build: number; after_queries: number; idle: number };
  peak_during: string;
  detail: {
    after_queries: {
      main_heap_total_mb: number;
      workers?: { heap_total_mb: number; wasm_mb?: number }[];
      vector_index_mb?: number;
      embedding_cache_mb?: number;
    };
  };
}

/** Cold then warm start of the service in processes of their own (bench/rss.ts), with their memory. */
function measureStartAndMemory(backlogDir: string, cacheDir: string, queries: string[]) {
  const out = execFileSync(
    process.execPath,
    [
      ...['--import', 'tsx', RSS_SCRIPT, '--phase', 'both', '--dir', backlogDir, '--cache', cacheDir],
      ...['--queries', '-', '--limit', '100', '--idle-ms', '30000'],
    ],
    { input: JSON.stringify(queries), stdio: ['pipe', 'pipe', 'inherit'], maxBuffer: 64 * 2 ** 20 },
  );
  const lines = out.toString().trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as { cold: RssPhase; warm: RssPhase };
}

async function folderBytes(dir: string, skipHidden: boolean): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (skipHidden && e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    total += e.isDirectory() ? await folderBytes(p, skipHidden) : (await stat(p)).size;
  }
  return total;
}

/**
 * Query latency per mode on an opened service, next to the query embedding's own latency.
 *
 * The embedding alone runs on a pool of its own (one worker, as the service queries with), interleaved
 * query by query with the fresh hybrid queries, so that both see the same load on a shared machine: the
 * target compares the two p95s. Needs the cache the cold run leaves (or embeds every chunk first).
 */
export async function measureQueryLatency(
  backlogDir: string,
  cacheDir: string,
  queries: string[],
  log: (s: string) => void,
) {
  const service = await openBacklog({
    dir: backlogDir,
    cacheDir,
    embeddings: 'bundled',
    embedMissing: 'background',
  });
  await service.semanticReady();
  const alone = (await EmbeddingPool.start({ provider: 'bundled', workers: 1 })).embedder!;
  try {
    log('hybrid: query latency ...');
    const time = async (run: () => Promise<unknown>, into: number[]) => {
      const s = performance.now();
      await run();
      into.push(performance.now() - s);
    };
    for (const q of queries.slice(0, 20)) await service.searchUnified(q, { mode: 'bm25' });
    await alone.embedQuery('warm up the worker');
    const bm25: number[] = [];
    for (const q of queries) await time(() => service.searchUnified(q, { limit: 10, mode: 'bm25' }), bm25);
    // Fresh queries: each pays its embedding; the embedding alone of a query neither pool has seen, in turn.
    const fresh: number[] = [];
    const embed: number[] = [];
    for (const q of queries) {
      await time(() => alone.embedQuery(`${q} (alone)`), embed);
      await time(() => service.searchUnified(q, { limit: 10, mode: 'hybrid' }), fresh);
    }
    // The same queries again: the embedding is cached.
    const repeat: number[] = [];
    for (const q of queries)
      await time(() => service.searchUnified(q, { limit: 10, mode: 'hybrid' }), repeat);
    return { bm25: ms(bm25), hybridFresh: ms(fresh), hybridRepeat: ms(repeat), embed: ms(embed) };
  } finally {
    await alone.close();
    await closeBacklog(service);
  }
}

export async function measureHybrid(
  backlogDir: string,
  cacheDir: string,
  queries: string[],
  log: (s: string) => void,
) {
  // Cold (nothing cached: lexical answers at once, embeddings follow in the background), then warm,
  // each in a process of its own. The cold run leaves the cache the rest of this section uses.
  log('hybrid: cold and warm start, memory (bench/rss.ts; the cold run embeds every chunk, minutes) ...');
  const { cold, warm } = measureStartAndMemory(backlogDir, cacheDir, queries);
  if (cold.semantic_state !== 'ready' || warm.semantic_state !== 'ready')
    throw new Error(`semantic index not ready (cold ${cold.semantic_state}, warm ${warm.semantic_state})`);

  const { bm25, hybridFresh, hybridRepeat, embed } = await measureQueryLatency(
    backlogDir,
    cacheDir,
    queries,
    log,
  );

  const corpus = await folderBytes(backlogDir, true);
  const cache = await folderBytes(cacheDir, false);
  const worker = warm.detail.after_queries.workers?.[0];
  const result = {
    chunks: cold.chunks,
    cold_first_result_ms: cold.first_result_ms,
    cold_semantic_ready_s: round(cold.semantic_ready_ms / 1000, 1),
    cold_build_workers: cold.build_workers,
    cold_build_note: cold.build_note,
    warm_first_result_ms: warm.first_result_ms,
    warm_semantic_ready_ms: warm.semantic_ready_ms,
    bm25,
    hybrid_fresh: hybridFresh,
    hybrid_repeat: hybridRepeat,
    query_embedding: embed,
    // RSS of the service's own process (bench/rss.ts): cold = embedding every chunk (the workers its
    // memory budget allows, then 1),
    // warm = everything cached; after the build, after 2 x 100 hybrid queries, and 30 s later (idle).
    rss_mb: {
      cold: cold.rss_mb,
      warm: warm.rss_mb,
      where_warm: {
        main_heap: warm.detail.after_queries.main_heap_total_mb,
        worker_heap: worker?.heap_total_mb,
        worker_wasm: worker?.wasm_mb,
        vector_index: warm.detail.after_queries.vector_index_mb,
        embedding_cache: warm.detail.after_queries.embedding_cache_mb,
      },
    },
    cache_mb: round(cache / 2 ** 20, 2),
    corpus_mb: round(corpus / 2 ** 20, 2),
  };
  const md = [
    `## Hybrid on the Backlog.md folder (bundled model, ${cold.chunks} chunks)`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| start from a cold cache to first (lexical) result | ${result.cold_first_result_ms} ms | |`,
    `| embedding every chunk (background, ${workersLabel(cold.build_workers)}) | ${result.cold_semantic_ready_s} s | |`,
    `| start from a warm cache to first result | ${result.warm_first_result_ms} ms | ≤ 500 ms |`,
    `| start from a warm cache to hybrid ready | ${result.warm_semantic_ready_ms} ms | |`,
    `| lexical query p50 / p95 | ${bm25.p50} / ${bm25.p95} ms | p95 ≤ 5 ms |`,
    `| query embedding alone p50 / p95 (bundled, 1 worker) | ${embed.p50} / ${embed.p95} ms | (reported) |`,
    `| hybrid query, new query, p50 / p95 | ${hybridFresh.p50} / ${hybridFresh.p95} ms | p95 ≤ embedding p95 + 5 = ${round(embed.p95 + 5, 2)} ms |`,
    `| hybrid query, repeated (cached embedding), p50 / p95 | ${hybridRepeat.p50} / ${hybridRepeat.p95} ms | |`,
    `| RSS of the service in a process of its own (bench/rss.ts, compiled), cold cache: before opening / peak while embedding (${workersLabel(cold.build_workers)}) / after the build and 100 hybrid queries / 30 s later | ${cold.rss_mb.before} / ${cold.rss_mb.peak} / ${cold.rss_mb.after_queries} / ${cold.rss_mb.idle} MB | ≤ 400 MB |`,
    `| RSS of the service in a process of its own, warm cache: before opening / peak / after 100 hybrid queries / 30 s later | ${warm.rss_mb.before} / ${warm.rss_mb.peak} / ${warm.rss_mb.after_queries} / ${warm.rss_mb.idle} MB | ≤ 400 MB |`,
    `| \`.cache/\` size vs the corpus text | ${result.cache_mb} MB vs ${result.corpus_mb} MB (${round(cache / corpus, 2)}x) | ≤ 3x |`,
    '',
    ...(cold.build_note ? [`The service on the cold build: "${cold.build_note}".`, ''] : []),
    'The query embedding alone runs interleaved with the fresh hybrid queries (one each in turn), so both',
    'p95s see the same load; `npm run bench:hybrid-latency` runs that comparison alone.',
    '',
  ];
  return { result, md };
}

/** "1 worker", or "2 workers, then 1" when the initial build grew the pool. */
function workersLabel(n: number | undefined): string {
  if (n === undefined) return 'workers not reported';
  return n > 1 ? `${n} workers, then 1` : '1 worker';
}
