import { performance } from 'node:perf_hooks';
// Type-only import: erased at run time, so this module loads even where the service is missing; the
// service itself is imported lazily in `oramaServiceRetriever().build`.
import type { OramaSearchService } from '../search/orama-search-service.js';
import type { SearchEngine, SearchFilters, SearchQuery } from '../search/types.js';
import { errors } from '../errors.js';
import type { BeirDataset } from './beir.js';
import { mrrAtK, ndcgAtK, percentile, recallAtK } from './metrics.js';

/** A search system under evaluation: indexes a corpus once, then answers queries with ranked ids (best first). */
export interface Retriever {
  name: string;
  build(docs: { id: string; title: string; text: string }[]): Promise<void>;
  search(query: string, k: number): string[] | Promise<string[]>;
}

/**
 * Result of one retriever on one dataset. Metrics are means over the queries (4 decimals), computed at
 * `options.k` (10 unless changed; the field names assume 10). Times in ms (2 decimals): `p50_ms`/`p95_ms` per
 * query (nearest-rank percentiles), `build_ms` for indexing the whole corpus.
 */
export interface EvalReport {
  ndcg_at_10: number;
  recall_at_10: number;
  mrr_at_10: number;
  queries: number;
  docs: number;
  p50_ms: number;
  p95_ms: number;
  build_ms: number;
}

export interface EvalOptions {
  /** Cut-off for the metrics. Default 10. */
  k?: number;
  /** Untimed queries run before timing (the dataset's queries, cycled). Default 20. */
  warmup?: number;
  /** Called after each timed query. */
  onProgress?: (done: number, total: number) => void;
}

const round = (x: number, digits: number): number => Number(x.toFixed(digits));

/**
 * Builds the retriever's index over the dataset and runs every query once, timed one by one. Follows the BEIR
 * convention of ignoring a hit whose id equals the query id: asks for k + 1 results, drops that id, then cuts
 * to k.
 */
export async function runEval(
  dataset: BeirDataset,
  retriever: Retriever,
  { k = 10, warmup = 20, onProgress }: EvalOptions = {},
): Promise<EvalReport> {
  const t0 = performance.now();
  await retriever.build(dataset.docs);
  const buildMs = performance.now() - t0;

  const { queries } = dataset;
  for (let i = 0; i < warmup && queries.length > 0; i++)
    await retriever.search(queries[i % queries.length].text, k + 1);

  const times: number[] = [];
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [i, q] of queries.entries()) {
    const start = performance.now();
    const raw = await retriever.search(q.text, k + 1);
    times.push(performance.now() - start);
    const ranked = raw.filter((id) => id !== q.id).slice(0, k);
    const rels = dataset.qrels.get(q.id) ?? new Map<string, number>();
    ndcg += ndcgAtK(ranked, rels, k);
    recall += recallAtK(ranked, rels, k);
    mrr += mrrAtK(ranked, rels, k);
    onProgress?.(i + 1, queries.length);
  }
  const n = Math.max(1, queries.length);
  return {
    ndcg_at_10: round(ndcg / n, 4),
    recall_at_10: round(recall / n, 4),
    mrr_at_10: round(mrr / n, 4),
    queries: queries.length,
    docs: dataset.docs.length,
    p50_ms: round(percentile(times, 50), 2),
    p95_ms: round(percentile(times, 95), 2),
    build_ms: round(buildMs, 2),
  };
}

/** A short multi-line summary of a report; `mode` labels it (e.g. the search mode `bm25`, or a system name). */
export function formatReport(report: EvalReport, mode: string): string {
  const r = report;
  return [
    `${mode}: nDCG@10 ${r.ndcg_at_10.toFixed(4)}  Recall@10 ${r.recall_at_10.toFixed(4)}  MRR@10 ${r.mrr_at_10.toFixed(4)}`,
    `  ${r.queries} queries over ${r.docs} docs`,
    `  query p50 ${r.p50_ms.toFixed(2)} ms, p95 ${r.p95_ms.toFixed(2)} ms; build ${r.build_ms.toFixed(2)} ms`,
  ].join('\n');
}

/** Settings accepted by the project's engine (whatever `new OramaSearchService(settings)` takes). */
export type OramaServiceSettings = ConstructorParameters<typeof OramaSearchService>[0];

/**
 * A Retriever over the project's own engine (`OramaSearchService`), BEIR docs mapped to
 * `{ id, title, body: text }`. The service module is imported on `build`.
 */
export function oramaServiceRetriever(settings?: OramaServiceSettings, name = 'backlog-search'): Retriever {
  let svc: OramaSearchService | undefined;
  return {
    name,
    async build(docs) {
      const { OramaSearchService } = await import('../search/orama-search-service.js');
      svc = new OramaSearchService(settings);
      await svc.build(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
      // Counted in the build: a small corpus is indexed again once the language detector answered.
      await svc.languagesSettled();
    },
    search(query, k) {
      if (!svc) throw errors.internal(`${name}: search() called before build()`);
      return svc.search({ query, limit: k }).hits.map((h) => h.id);
    },
  };
}

/**
 * A Retriever over any engine behind the `SearchEngine` seam (src/search/types.ts): the corpus goes in
 * through `build`, each query out through `query` as BacklogService sends it (simple match mode, no
 * filters, relevance order, bm25). This is how an adapter for another engine is held to the numbers of
 * the embedded one (`npx tsx bench/engine-eval.ts --engine <module>`, docs/scaling.md).
 */
export function engineRetriever(name: string, create: () => SearchEngine | Promise<SearchEngine>): Retriever {
  let engine: SearchEngine | undefined;
  return {
    name,
    async build(docs) {
      engine = await create();
      await engine.build(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
    },
    async search(query, k) {
      if (!engine) throw errors.internal(`${name}: search() called before build()`);
      const outcome = await engine.query(engineQuery(query, k));
      return outcome.results.map((r) => r.id);
    },
  };
}

/** A validated request as BacklogService would send it for `searchUnified(text, { mode: 'bm25', limit })`. */
export function engineQuery(text: string, limit: number, filters: SearchFilters = {}): SearchQuery {
  return {
    text,
    matchMode: 'simple',
    filters,
    sort: 'relevant',
    conjunctive: false,
    mode: 'bm25',
    limit,
    offset: 0,
    includeScores: false,
  };
}

/**
 * A Retriever for `hybrid` or `semantic` mode: BM25F plus vector search with an embedding provider
 * (default the bundled model), fused as searchUnified fuses them (search/hybrid.ts). Embeddings are
 * cached in `cacheDir` when given, so a second run embeds nothing. Call `close()` to stop the workers.
 * `provider` reports which embedding provider actually ran (`none`: the run fell back to bm25).
 */
export function embeddingRetriever(
  mode: 'hybrid' | 'semantic',
  options: { provider?: 'auto' | 'bundled' | 'transformers'; cacheDir?: string; name?: string } = {},
): Retriever & { close(): Promise<void>; provider(): string } {
  const name = options.name ?? `backlog-search (${mode})`;
  let lexical: OramaSearchService | undefined;
  let semantic: import('../embeddings/index.js').SemanticIndex | undefined;
  let pool: import('../embeddings/index.js').EmbeddingPool | null = null;
  let provider = 'none';
  const titles = new Map<string, string[]>();
  return {
    name,
    provider: () => provider,
    async build(docs) {
      const { OramaSearchService } = await import('../search/orama-search-service.js');
      const { EmbeddingPool, EmbeddingCache, SemanticIndex } = await import('../embeddings/index.js');
      lexical = new OramaSearchService();
      await lexical.build(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
      await lexical.languagesSettled();
      for (const d of docs) titles.set(d.id, lexical.analyzer.queryTerms(d.title));
      pool = (await EmbeddingPool.start({ provider: options.provider ?? 'bundled' })).embedder;
      if (!pool) return;
      provider = pool.provider;
      const cache = options.cacheDir
        ? await EmbeddingCache.open(options.cacheDir, pool.id, pool.dims)
        : undefined;
      semantic = new SemanticIndex({ embedder: pool, cache });
      await semantic.upsert(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
      await cache?.save();
    },
    async search(query, k) {
      if (!lexical) throw errors.internal(`${name}: search() called before build()`);
      const { hybridRank } = await import('../search/hybrid.js');
      const { englishOnlyQuerySupported } = await import('../embeddings/query-language.js');
      const depth = Math.max(100, k);
      const lex = lexical.search({ query, limit: depth }).hits.map((h) => ({ id: h.id, score: h.score }));
      const vec =
        semantic && (await englishOnlyQuerySupported(query))
          ? (await semantic.search(query, depth)).map((h) => ({ id: h.docId, score: h.score }))
          : [];
      if (mode === 'semantic') return vec.slice(0, k).map((h) => h.id);
      const fused = hybridRank({
        lexical: lex,
        vector: vec,
        lexicalUpperBound: lexical.upperBound(query),
        queryTerms: lexical.analyzer.queryTerms(query),
        facts: (id) => ({ titleTerms: titles.get(id) ?? [], idKey: '' }),
      });
      return fused.slice(0, k).map((h) => h.id);
    },
    async close() {
      await pool?.close();
    },
  };
}
