/**
 * One system on one synthetic corpus, in a process of its own (so its memory is its own):
 *
 *   npm run bench:scale -- [N] [--system ours|orama|minisearch|orama-vectors] [--queries 300] [--json]
 *
 * N documents (default 50000) made of SciFact and XQuAD paragraphs, queries of 2-4 words from them
 * (bench/scale-corpus.ts). `bench/perf.ts` runs it for every size and system and writes the tables.
 *
 * - `ours`: the lexical index (OramaSearchService: build, bm25 latency, memory), its cache file as
 *   openBacklog writes it and the warm start from it, then the vector half on synthetic 512-dim vectors
 *   (SemanticIndex through its embedding cache, one vector per document; build, memory, the cache file
 *   and the warm start to hybrid ready) and the latency of `semantic` (vector top 100, as the service
 *   asks) and `hybrid` (bm25 top 100 + vector top 100, fused by `hybridRank` with the service's facts).
 * - `orama`, `minisearch`: lexical baselines with default settings (bench/baselines.ts).
 * - `orama-vectors`: Orama with title, body and the same vectors, `mode: 'vector'` and `mode: 'hybrid'`
 *   with its default threshold and weights.
 *
 * Memory: heap growth after GC (run node with --expose-gc), external memory (ArrayBuffers and our
 * WebAssembly matrix live outside the heap), and process RSS after the build and the queries, next to
 * the RSS before any index (the corpus and queries loaded).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUNDLED_MAX_TOKENS,
  EmbeddingCache,
  SemanticIndex,
  chunkOptionsFor,
  chunkText,
} from '../src/embeddings/index.js';
import { hybridRank } from '../src/search/hybrid.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { readIndexCache, writeIndexCache } from '../src/service/index-cache.js';
import type { BacklogItem } from '../src/storage/types.js';
import { miniSearchRetriever, oramaRetriever, oramaVectors } from './baselines.js';
import {
  ONE_CHUNK,
  SYNTHETIC_DIMS,
  SyntheticEmbedder,
  latencyOf,
  loadPool,
  nearby,
  oneChunkText,
  synthesize,
  wordQueriesFrom,
  type Latency,
} from './scale-corpus.js';
import { EVAL_DIR, argValue, timed } from './common.js';

export type ScaleSystem = 'ours' | 'orama' | 'minisearch' | 'orama-vectors';

export interface Memory {
  heap_mb: number;
  external_mb: number;
  rss_mb: number;
}

export interface ScaleResult {
  n: number;
  system: ScaleSystem;
  name: string;
  queries: number;
  text_mb: number;
  /** RSS with the corpus and queries loaded, before any index. */
  base_rss_mb: number;
  /** Index build (ours, orama, minisearch: lexical; orama-vectors: text and vectors). */
  build_ms: number;
  /** Build plus the first query: start to first result with nothing cached. */
  first_result_ms: number;
  /** Growth over the base after the build and the queries. */
  memory: Memory;
  /** Highest RSS of the process (process.resourceUsage().maxRSS). */
  peak_rss_mb: number;
  latency: Partial<Record<'bm25' | 'semantic' | 'hybrid' | 'vector', Latency>>;
  /** ours: the vector half. */
  vectors?: {
    build_ms: number;
    /** Growth over the base with both halves built and queried. */
    memory: Memory;
    /** Chunks per document if chunked for the bundled model (70-word windows) instead of one vector. */
    deployed_chunks_per_doc: number;
  };
  /** ours: the cache files and the warm start from them. */
  cache?: {
    index_file_mb: number;
    restore_to_first_result_ms: number;
    vectors_file_mb: number;
    restore_to_hybrid_ready_ms: number;
  };
  /** orama-vectors: documents Orama's vector mode returned per query (above its 0.8 threshold), mean. */
  vector_hits_mean?: number;
}

const MB = 2 ** 20;
const round = (n: number, d = 1) => Number(n.toFixed(d));
/** What the service asks each retriever for in hybrid and semantic mode (HYBRID_CANDIDATES). */
const CANDIDATES = 100;
const PAGE = 10;

function memoryNow() {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage();
}

function growth(base: NodeJS.MemoryUsage): Memory {
  const m = memoryNow();
  return {
    heap_mb: round((m.heapUsed - base.heapUsed) / MB),
    external_mb: round((m.external - base.external) / MB),
    rss_mb: round((m.rss - base.rss) / MB),
  };
}

/** A BacklogItem for a synthetic document, as the cache file stores items. */
function itemOf(d: { id: string; title: string; text: string }): BacklogItem {
  return {
    id: d.id,
    type: 'task',
    state: 'active',
    title: d.title,
    status: 'To Do',
    parent_id: null,
    tags: [],
    author: null,
    assignee: null,
    priority: null,
    references: [],
    created_at: null,
    updated_at: null,
    body: d.text,
    path: `tasks/${d.id}.md`,
    folder: 'tasks',
    file_type: 'md',
    size: d.text.length,
    mtime_ms: 0,
    frontmatter: {},
  };
}

export async function measure(n: number, system: ScaleSystem, queryCount: number): Promise<ScaleResult> {
  const pool = await loadPool(EVAL_DIR);
  const docs = synthesize(pool, n);
  pool.length = 0;
  const queries = wordQueriesFrom(
    docs.map((d) => d.text),
    queryCount,
    n,
  );
  const texts = queries.map((q) => q.text);
  // Vectors: each query's is a perturbation of the vector of the document its words come from.
  const embedder = new SyntheticEmbedder();
  const qvec = queries.map((q, i) => nearby(embedder.passageVector(oneChunkText(docs[q.source])), 1e6 + i));
  queries.forEach((q, i) => embedder.setQuery(q.text, qvec[i]));
  const text_mb = round(docs.reduce((a, d) => a + d.title.length + d.text.length, 0) / MB);
  const base = memoryNow();
  const result = {
    n,
    system,
    queries: queries.length,
    text_mb,
    base_rss_mb: round(base.rss / MB, 0),
    latency: {},
  } as ScaleResult;

  if (system === 'orama' || system === 'minisearch') {
    const r = system === 'orama' ? oramaRetriever(false) : miniSearchRetriever();
    result.name = r.name;
    [, result.build_ms] = await timed(() => r.build(docs));
    const [, first] = await timed(() => r.search(texts[0], PAGE));
    result.first_result_ms = result.build_ms + first;
    result.latency.bm25 = await latencyOf((q) => r.search(q, PAGE), texts);
    result.memory = growth(base);
  } else if (system === 'orama-vectors') {
    const r = oramaVectors(SYNTHETIC_DIMS);
    result.name = r.name;
    // Orama requires a plain array per document; made before the clock starts, as ours gets its vectors.
    let input: { id: string; title: string; body: string; embedding: number[] }[] | null = docs.map((d) => ({
      id: d.id,
      title: d.title,
      body: d.text,
      embedding: Array.from(embedder.passageVector(oneChunkText(d))),
    }));
    [, result.build_ms] = await timed(() => r.build(input!));
    input = null; // Orama holds the documents it was given; the bench keeps no other reference.
    const [, first] = await timed(() => r.search('hybrid', texts[0], qvec[0], PAGE));
    result.first_result_ms = result.build_ms + first;
    const indexes = queries.map((_, i) => i);
    const hits: number[] = [];
    result.latency.vector = await latencyOf(async (i) => {
      hits[i] = (await r.search('vector', texts[i], qvec[i], PAGE)).length;
    }, indexes);
    result.vector_hits_mean = round(hits.reduce((a, b) => a + b, 0) / hits.length, 2);
    result.latency.hybrid = await latencyOf((i) => r.search('hybrid', texts[i], qvec[i], PAGE), indexes);
    result.memory = growth(base);
  } else {
    result.name = 'backlog-search';
    const lexical = new OramaSearchService();
    const searchDocs = docs.map((d) => ({ id: d.id, title: d.title, body: d.text }));
    [, result.build_ms] = await timed(() => lexical.build(searchDocs));
    const [, first] = await timed(() => lexical.search({ query: texts[0], limit: PAGE }));
    result.first_result_ms = result.build_ms + first;
    result.latency.bm25 = await latencyOf((q) => lexical.search({ query: q, limit: PAGE }), texts);
    result.memory = growth(base);

    // The vector half, through its cache as the service runs it (int8 on disk).
    const dir = mkdtempSync(join(os.tmpdir(), 'bench-scale-'));
    try {
      embedder.precompute(docs.map(oneChunkText));
      const cache = await EmbeddingCache.open(dir, embedder.id, embedder.dims, { encoding: 'i8' });
      const semantic = new SemanticIndex({ embedder, cache, chunk: ONE_CHUNK });
      const [, vectorBuild] = await timed(() => semantic.upsert(searchDocs));
      embedder.forgetPassages();
      const titles = new Map(docs.map((d) => [d.id, d.title]));
      const semanticSearch = async (q: string) =>
        (await semantic.search(q, CANDIDATES)).map((h) => ({ id: h.docId, score: h.score })).slice(0, PAGE);
      // BacklogService.search in hybrid mode without filters: both lists, then hybridRank with the facts.
      const hybridSearch = async (q: string) => {
        const vector = (await semantic.search(q, CANDIDATES)).map((h) => ({ id: h.docId, score: h.score }));
        const found = lexical.search({ query: q, sort: 'relevant', limit: CANDIDATES, offset: 0 });
        return hybridRank({
          lexical: found.hits.map((h) => ({ id: h.id, score: h.score })),
          vector,
          lexicalUpperBound: lexical.upperBound(q),
          queryTerms: lexical.analyzer.queryTerms(q),
          queryIdKey: undefined,
          facts: (id) => ({
            titleTerms: lexical.analyzer.queryTerms(titles.get(id)!),
            idKey: id,
            type: 'task',
            updatedMs: 0,
          }),
        }).slice(0, PAGE);
      };
      result.latency.semantic = await latencyOf(semanticSearch, texts);
      result.latency.hybrid = await latencyOf(hybridSearch, texts);
      const bundled = chunkOptionsFor({ maxTokens: BUNDLED_MAX_TOKENS });
      const sample = docs.slice(0, 1000);
      const chunks = sample.reduce((a, d) => a + chunkText(d.title, d.text, bundled).length, 0);
      result.vectors = {
        build_ms: round(vectorBuild, 0),
        memory: growth(base),
        deployed_chunks_per_doc: round(chunks / sample.length, 2),
      };

      // The cache files, and a start from them.
      const indexFile = join(dir, 'index.bin');
      const bytes = await lexical.serialize();
      const written = await writeIndexCache(indexFile, 'bench', {
        files: {},
        items: docs.map(itemOf),
        diagnostics: [],
        index: bytes,
      });
      semantic.pruneCache();
      await cache.save();
      const vectorsFile = await cache.sizeOnDisk();
      const [, warm] = await timed(async () => {
        const read = await readIndexCache(indexFile, 'bench');
        if (!('snapshot' in read)) throw new Error(`cache not read back: ${read.reason}`);
        const svc = new OramaSearchService();
        svc.restore(read.snapshot.index);
        svc.search({ query: texts[0], limit: PAGE });
      });
      const [, warmHybrid] = await timed(async () => {
        const reopened = await EmbeddingCache.open(dir, embedder.id, embedder.dims, { encoding: 'i8' });
        const again = new SemanticIndex({ embedder, cache: reopened, chunk: ONE_CHUNK });
        const res = await again.upsert(searchDocs);
        if (res.embedded > 0) throw new Error(`warm start embedded ${res.embedded} chunks`);
        await again.search(texts[0], CANDIDATES);
      });
      result.cache = {
        index_file_mb: round(written / MB),
        restore_to_first_result_ms: round(warm, 0),
        vectors_file_mb: round(vectorsFile / MB),
        restore_to_hybrid_ready_ms: round(warm + warmHybrid, 0),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  result.build_ms = round(result.build_ms, 0);
  result.first_result_ms = round(result.first_result_ms, 0);
  result.peak_rss_mb = round(process.resourceUsage().maxRSS / 1024, 0);
  return result;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 50000);
  const system = (argValue('--system') ?? 'ours') as ScaleSystem;
  const r = await measure(n, system, Number(argValue('--queries') ?? 300));
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    // The first two lines as this script printed them before it measured more.
    const first = r.latency.bm25 ?? r.latency.hybrid;
    process.stdout.write(
      `build ${r.build_ms}\np50 ${first?.p50.toFixed(2)} p95 ${first?.p95.toFixed(2)}\n${JSON.stringify(r, null, 2)}\n`,
    );
  }
}
