/**
 * Hybrid search on the Backlog.md folder, for `npm run bench` (bench/perf.ts): start-up from cold and
 * warm caches, time to first result, the embedding build, query latency per mode next to the query
 * embedding's own latency, process memory and the size of `.cache/`. The folder is read in place; its
 * derived data goes to this project's `.cache/bench/` (never into ../shared).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { EmbeddingPool } from '../src/embeddings/index.js';
import { percentile } from '../src/eval/metrics.js';

const round = (n: number, d = 1) => Number(n.toFixed(d));
const ms = (times: number[]) => ({
  p50: round(percentile(times, 50), 2),
  p95: round(percentile(times, 95), 2),
  p99: round(percentile(times, 99), 2),
});

async function folderBytes(dir: string, skipHidden: boolean): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (skipHidden && e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    total += e.isDirectory() ? await folderBytes(p, skipHidden) : (await stat(p)).size;
  }
  return total;
}

export async function measureHybrid(
  backlogDir: string,
  cacheDir: string,
  queries: string[],
  log: (s: string) => void,
) {
  await rm(cacheDir, { recursive: true, force: true });
  const rssBefore = process.memoryUsage().rss;

  // Cold: nothing cached. Lexical answers as soon as openBacklog resolves; embeddings follow.
  log('hybrid: cold start (embedding every chunk, a few minutes with the bundled model) ...');
  let t = performance.now();
  let service = await openBacklog({
    dir: backlogDir,
    cacheDir,
    embeddings: 'bundled',
    embedMissing: 'background',
  });
  await service.searchUnified(queries[0], { limit: 10 });
  const coldFirstResult = performance.now() - t;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 200);
  await service.semanticReady();
  const coldSemanticReady = performance.now() - t;
  const status = service.semanticStatus();
  await closeBacklog(service);
  clearInterval(sampler);

  // Warm: everything cached.
  log('hybrid: warm start ...');
  t = performance.now();
  service = await openBacklog({
    dir: backlogDir,
    cacheDir,
    embeddings: 'bundled',
    embedMissing: 'background',
  });
  await service.searchUnified(queries[0], { limit: 10 });
  const warmFirstResult = performance.now() - t;
  await service.semanticReady();
  const warmSemanticReady = performance.now() - t;

  log('hybrid: query latency ...');
  const timed = async (mode: 'bm25' | 'hybrid' | 'semantic', qs: string[]) => {
    const times: number[] = [];
    for (const q of qs) {
      const s = performance.now();
      await service.searchUnified(q, { limit: 10, mode });
      times.push(performance.now() - s);
    }
    return ms(times);
  };
  for (const q of queries.slice(0, 20)) await service.searchUnified(q, { mode: 'bm25' });
  const bm25 = await timed('bm25', queries);
  // Fresh queries: each pays its embedding. Then the same queries again: the embedding is cached.
  const hybridFresh = await timed('hybrid', queries);
  const hybridRepeat = await timed('hybrid', queries);
  const rssSteady = process.memoryUsage().rss;
  await closeBacklog(service);

  // The query embedding alone, on one worker, for queries it has not seen.
  const pool = (await EmbeddingPool.start({ provider: 'bundled', workers: 1 })).embedder!;
  const embedTimes: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    await pool.embedQuery(`${q} (fresh)`);
    embedTimes.push(performance.now() - s);
  }
  await pool.close();
  const embed = ms(embedTimes);

  const corpus = await folderBytes(backlogDir, true);
  const cache = await folderBytes(cacheDir, false);
  const result = {
    items: status.total,
    chunks: status.total,
    cold_first_result_ms: round(coldFirstResult, 0),
    cold_semantic_ready_s: round(coldSemanticReady / 1000, 1),
    warm_first_result_ms: round(warmFirstResult, 0),
    warm_semantic_ready_ms: round(warmSemanticReady, 0),
    bm25,
    hybrid_fresh: hybridFresh,
    hybrid_repeat: hybridRepeat,
    query_embedding: embed,
    rss_mb: {
      before: round(rssBefore / 2 ** 20, 0),
      peak_while_embedding: round(peakRss / 2 ** 20, 0),
      steady: round(rssSteady / 2 ** 20, 0),
    },
    cache_mb: round(cache / 2 ** 20, 2),
    corpus_mb: round(corpus / 2 ** 20, 2),
  };
  const md = [
    `## Hybrid on the Backlog.md folder (bundled model, ${status.total} chunks)`,
    '',
    '| measure | value | target |',
    '|---|---|---|',
    `| start from a cold cache to first (lexical) result | ${result.cold_first_result_ms} ms | |`,
    `| embedding every chunk (background, 2 workers, then 1) | ${result.cold_semantic_ready_s} s | |`,
    `| start from a warm cache to first result | ${result.warm_first_result_ms} ms | ≤ 500 ms |`,
    `| start from a warm cache to hybrid ready | ${result.warm_semantic_ready_ms} ms | |`,
    `| lexical query p50 / p95 | ${bm25.p50} / ${bm25.p95} ms | p95 ≤ 5 ms |`,
    `| query embedding alone p50 / p95 (bundled, 1 worker) | ${embed.p50} / ${embed.p95} ms | (reported) |`,
    `| hybrid query, new query, p50 / p95 | ${hybridFresh.p50} / ${hybridFresh.p95} ms | p95 ≤ embedding p95 + 5 = ${round(embed.p95 + 5, 2)} ms |`,
    `| hybrid query, repeated (cached embedding), p50 / p95 | ${hybridRepeat.p50} / ${hybridRepeat.p95} ms | |`,
    `| RSS of this bench process (it also holds the sections above): before / peak while embedding / steady after | ${result.rss_mb.before} / ${result.rss_mb.peak_while_embedding} / ${result.rss_mb.steady} MB | ≤ 400 MB |`,
    `| \`.cache/\` size vs the corpus text | ${result.cache_mb} MB vs ${result.corpus_mb} MB (${round(cache / corpus, 2)}x) | ≤ 3x |`,
    '',
  ];
  return { result, md };
}
