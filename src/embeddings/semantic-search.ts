/**
 * The vector half of hybrid search for a backlog: resolves an embedding provider, embeds every item's
 * chunks off the main thread (through the binary embedding cache, so a restart embeds only what
 * changed), keeps the vector index in step with the files, and answers vector queries. Lexical search
 * never waits for it: until it is ready, searches run bm25 and say so.
 */
import { dropEarlyPool, takeEarlyPool } from './early-start.js';
import { englishOnlyQuerySupported, MULTILINGUAL, prepareQueryGate } from './query-language.js';
import { availableParallelism } from 'node:os';
import type { EmbeddingCache } from './cache.js';
import type { EmbeddingPool, WorkerMemory } from './pool.js';
import type { DescribedEmbedder } from './resolve.js';
import type { SharedEmbeddingPool } from './shared-pool.js';
import type { SemanticIndex, IndexEmbedder } from './semantic-index.js';
import type { EmbedKind, EmbeddingProvider, ResolvedProvider, TransformersOptions } from './types.js';
import { searchableBody, type BacklogItem } from '../storage/types.js';
import type { Scored, VectorRetriever } from '../search/types.js';

/**
 * `incomplete`: embeddings are on, but some chunks have no cached vector and this process does not embed
 * (one-shot commands, `embedMissing: 'never'`): searches run bm25 and say how many are missing.
 */
export type SemanticState = 'off' | 'loading' | 'indexing' | 'ready' | 'failed' | 'incomplete';

/** When to embed the chunks the cache does not have. */
export type EmbedMissing = 'background' | 'wait' | 'never';

export interface SemanticOptions {
  provider: EmbeddingProvider;
  cacheDir: string | null;
  /**
   * `background` (servers, the library): embed in worker threads while lexical search answers;
   * `wait`: embed before resolving (the `index` command, with its progress bar); `never`: use only
   * cached vectors, and stay off unless every chunk is cached (one-shot CLI commands).
   */
  embedMissing: EmbedMissing;
  transformers?: TransformersOptions;
  /**
   * Workers for the initial embedding; one stays for queries and edits. Default: as many (at most 2) as
   * `memoryBudgetMb` has room for; with the bundled model at the default budget, one.
   */
  workers?: number;
  /** RSS (MB) the initial embedding plans to stay under when it picks its workers (default 400). */
  memoryBudgetMb?: number;
  onProgress?: (done: number, total: number) => void;
  /** A pool shared with other backlogs (a workspace): acquired instead of started, released on close. */
  sharedPool?: SharedEmbeddingPool;
  /** Chunks left after a background build's first pass above which queries get a lane (default {@link QUERY_LANE_MIN_CHUNKS}). */
  queryLaneMinChunks?: number;
  /**
   * The query a one-shot process is about to ask (`never`): when the model reads it (`supports`), the
   * model starts loading in its worker while this thread reads the cached vectors, not at the query.
   */
  expectedQuery?: string;
}

export interface SemanticStatus {
  provider: ResolvedProvider;
  state: SemanticState;
  /** Chunks embedded (or found in the cache) so far, of `total`. */
  done: number;
  total: number;
  /**
   * Chunks without a vector yet: when the state is `incomplete` (none cached for some document), or when it
   * is `ready` in part (every document has at least its title or a chunk; the rest is being embedded in the
   * background, or, in a process that does not embed, is not cached).
   */
  missing?: number;
  /** Workers the initial embedding ran on, and why not more (when the memory budget decided). */
  buildWorkers?: number;
  buildNote?: string;
  /** When the build became ready for hybrid search and when it was complete (ms since `start`). */
  readyMs?: number;
  completeMs?: number;
  warnings: string[];
}

type Doc = { id: string; title: string; body: string };

export const DEFAULT_MEMORY_BUDGET_MB = 400;

/**
 * What a large initial embedding adds to the process, in units of what one worker costs once its model is
 * loaded (L), measured with the bundled model on the Backlog.md folder (bench/rss.ts, docs/embeddings.md):
 * with L = 101 MB and the service at 233 MB, one worker peaked at 331 MB (+1.0 L: its heaps fill, and the
 * main thread gathers the vectors) and two at 478-494 MB (+1.5-1.6 L for the second). Applied to
 * `transformers` models too until measured there.
 */
const FIRST_WORKER_PEAK = 1.0;
const EXTRA_WORKER_PEAK = 1.6;
/**
 * What the query lane adds while it lives, in the same units: a loaded model that embeds only short
 * queries (+73 MB of peak RSS on a Backlog.md subset, L about 100 MB: bench/hybrid-ready.ts, docs/performance.md).
 * Reserved from the budget before a second build worker is planned; the lane itself opens whatever the budget.
 */
const QUERY_LANE_PEAK = 0.75;

/** The projected peak RSS (MB) of an initial embedding on `n` workers (see FIRST_WORKER_PEAK). */
export function projectedPeakMb(rssMb: number, workerMb: number, n: number): number {
  return rssMb + workerMb * (FIRST_WORKER_PEAK + (n - 1) * EXTRA_WORKER_PEAK);
}

/**
 * How many workers (1 to `max`) the initial embedding can run on and stay within `budgetMb`, from the
 * process's RSS with its first worker loaded and what loading that worker cost.
 */
export function workersWithin(budgetMb: number, rssMb: number, workerMb: number, max: number): number {
  let n = 1;
  while (n < max && projectedPeakMb(rssMb, workerMb, n + 1) <= budgetMb) n++;
  return n;
}

const MB = 2 ** 20;
/** New chunks per group of a background build's later passes (~10 s of the bundled model on one core). */
const EMBED_GROUP = 128;
/** How often a background build saves the cache (a restart then re-embeds at most this much work). */
const SAVE_EVERY_MS = 30_000;
/**
 * Characters per batch in a background build's later passes, half the pool's default: a hybrid query then
 * waits behind about 4 chunks of embedding, not 8 (bench/hybrid-ready.ts measured both; throughput within
 * the noise).
 */
const BACKGROUND_BATCH_CHARS = 2000;

/**
 * Chunks left after its first pass above which a background build opens the query lane: fewer are embedded
 * in about 12 s of the bundled model (~60 ms a chunk), not much more than the lane's worker takes to load.
 */
export const QUERY_LANE_MIN_CHUNKS = 200;

/**
 * The vector index and its cache, loaded when embeddings are used: `get`, `list` and a search with
 * `--embeddings none` never load them (issue #23; test/startup.test.ts).
 */
async function indexModules() {
  const [{ EmbeddingCache }, { SemanticIndex }] = await Promise.all([
    import('./cache.js'),
    import('./semantic-index.js'),
  ]);
  return { EmbeddingCache, SemanticIndex };
}

const toDoc = (i: BacklogItem): Doc => ({ id: i.id, title: i.title, body: searchableBody(i) });

/**
 * An embedder known by its id, dims and chunk size, whose worker pool (the model) starts on first use: a
 * process that only reads cached vectors loads the model when a query needs a vector, not before.
 */
/** The model of a cache's vectors (see SemanticSearch.cachedModel); `dims` and `embedder` when vectors are cached. */
interface CachedModel {
  described: DescribedEmbedder;
  dims?: number;
  embedder?: LazyPool;
}

class LazyPool implements IndexEmbedder {
  private started: Promise<EmbeddingPool> | undefined;

  constructor(
    readonly id: string,
    readonly dims: number,
    readonly maxTokens: number | undefined,
    private readonly start: () => Promise<EmbeddingPool>,
  ) {}

  private pool(): Promise<EmbeddingPool> {
    this.started ??= this.start();
    return this.started;
  }

  /** Starts loading the model now, for a query soon: its worker loads while this thread does the rest. */
  prepare(): void {
    this.pool().catch(() => undefined);
  }

  async embed(texts: string[], kind?: EmbedKind): Promise<Float32Array[]> {
    return (await this.pool()).embed(texts, kind);
  }

  async embedQuery(text: string): Promise<Float32Array> {
    return (await this.pool()).embedQuery(text);
  }
}

export class SemanticSearch implements VectorRetriever {
  private status: SemanticStatus = { provider: 'none', state: 'off', done: 0, total: 0, warnings: [] };
  private pool: EmbeddingPool | null = null;
  /** The model's id once known (before its pool starts, in a process that reads cached vectors only). */
  private modelId: string | null = null;
  private index: SemanticIndex | null = null;
  private cache: EmbeddingCache | null = null;
  /** Index writes run one at a time (SemanticIndex.upsert is not re-entrant for a document). */
  private queue: Promise<unknown> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Changes that arrived before the first pass was ready (null: removed). */
  private readonly pending = new Map<string, BacklogItem | null>();
  /** The latest version of every document while a build runs: later passes embed what is there now. */
  private readonly live = new Map<string, Doc>();
  /** A background build is embedding the rest after its first pass. */
  private embedding = false;
  private started = 0;
  /** The model gate's answers for recent queries (supports). */
  private readonly gate = new Map<string, boolean>();
  /** Settles when the initial embedding is done (or failed, or skipped). */
  ready: Promise<void> = Promise.resolve();

  /** `never`: the model of the cached vectors, described from its files, with its LazyPool (made once). */
  private fromCache: Promise<CachedModel | undefined> | undefined;
  /**
   * Aborted by `close`: stops a model still loading, and the embedding in flight (its batches queued or
   * running are abandoned; those that landed are in the cache, which close saves).
   */
  private readonly stopping = new AbortController();

  constructor(private readonly options: SemanticOptions) {
    // A one-shot search: what the cache holds, and the model if the query needs it, start being read now,
    // while the process reads the backlog's index (the worker loads beside this thread).
    if (
      options.expectedQuery !== undefined &&
      options.embedMissing === 'never' &&
      options.provider !== 'none'
    )
      this.cachedModel().catch(() => undefined);
  }

  get state(): SemanticState {
    return this.status.state;
  }

  /** Why vector search is not answering yet, for a warning. */
  progress(): string {
    const s = this.status;
    if (s.state === 'indexing') return `still being built (${s.done}/${s.total} chunks embedded)`;
    if (s.state === 'loading') return 'loading its model';
    if (s.state === 'ready')
      return s.missing ? `ready in part (${s.done}/${s.total} chunks embedded)` : 'ready';
    if (s.state === 'incomplete' && s.missing === undefined)
      return 'incomplete: no embedding is cached (run `backlog-search index`)';
    if (s.state === 'incomplete')
      return `incomplete: ${s.missing} of ${s.total} chunks have no cached embedding (run \`backlog-search index\`)`;
    return s.state === 'failed' ? 'unavailable (failed to load)' : 'off (no embedding provider)';
  }

  /**
   * While hybrid runs on part of the chunks (the first pass of a build, or cached vectors only): how far
   * it is, for a warning on each answer; undefined once every chunk is in.
   */
  partial(): string | undefined {
    const s = this.status;
    if (s.state !== 'ready' || !s.missing) return undefined;
    const what = `${s.done} of ${s.total} chunks`;
    return this.embedding
      ? `the semantic index is still being built: meaning is matched on ${what} (every document by its title or first chunk at least), the rest is being embedded`
      : `the semantic index is partial: meaning is matched on ${what}; ${s.missing} have no cached embedding (run \`backlog-search index\`)`;
  }

  info(): SemanticStatus {
    return { ...this.status, warnings: [...this.status.warnings] };
  }

  /**
   * Starts embedding `items`. Resolves at once in `background` mode, after the embedding in `wait` mode.
   * `ready` settles when every chunk is in (or the build failed or stopped); in `background` mode searches
   * run hybrid before that, from the first pass on (see `run`). `items` made only when there is a provider.
   */
  async start(items: () => BacklogItem[]): Promise<void> {
    if (this.options.provider === 'none') return;
    this.status.state = 'loading';
    this.started = performance.now();
    this.ready = this.run(items()).catch((err: Error) => {
      if (this.closed) return; // the build was stopped by close, not failed
      this.status.state = 'failed';
      this.embedding = false;
      this.status.warnings.push(`semantic search failed: ${err.message}; searches run bm25`);
    });
    if (this.options.embedMissing === 'wait') await this.ready;
  }

  /**
   * The build. `wait` embeds every missing chunk in one pass (the `index` command). `background` builds in
   * passes and is ready for hybrid search after the first: every document gets what the cache has plus one
   * new chunk, its title when more are missing (a few tokens each: seconds for a backlog of hundreds of
   * documents); then its first body chunk, then 2, 4, 8... more per document, until every chunk is in,
   * while searches run hybrid on what is there and say so. `never` indexes what the cache has: ready when
   * every document has a vector, else `incomplete` (bm25).
   */
  private async run(items: BacklogItem[]): Promise<void> {
    if (this.options.embedMissing === 'never') {
      const model = await this.cachedModel();
      if (model) return this.runFromCache(items, model);
    }
    const rssBefore = process.memoryUsage.rss();
    const shared = this.options.sharedPool;
    const started = shared
      ? await shared.acquire()
      : await (
          await import('./pool.js')
        ).EmbeddingPool.start({
          provider: this.options.provider,
          workers: 1,
          // Closed while the model loads: the worker is terminated, it does not hold the process.
          signal: this.stopping.signal,
          transformers: this.options.transformers,
        });
    this.status.warnings.push(...started.warnings);
    if (!started.embedder || this.closed) {
      if (shared) await shared.release(this);
      else await started.embedder?.close();
      this.status.state = 'off';
      return;
    }
    this.pool = started.embedder;
    this.status.provider = started.embedder.provider;
    // A server's gate asks the detector for queries the model's vocabulary cannot settle: loaded from now
    // on, while the vectors are indexed, its first such query does not wait for all of it (a one-shot,
    // `never`, loads it only if its query needs it; `index`, `wait`, never asks the gate).
    if (this.options.embedMissing === 'background' && !MULTILINGUAL.test(this.pool.id)) prepareQueryGate();
    // A shared pool's model was loaded by whichever backlog came first: plan with what that cost.
    const workerMb = shared ? shared.loadMb : Math.max(0, process.memoryUsage.rss() - rssBefore) / MB;
    // int8 with a scale per vector: a quarter of Float32 (on the Backlog.md folder Float32 alone is
    // 11.8 MB, about 5x the text; the issue allows .cache/ 3x); worst cosine error measured 5.8e-4.
    const { EmbeddingCache, SemanticIndex } = await indexModules();
    this.cache = this.options.cacheDir
      ? await EmbeddingCache.open(this.options.cacheDir, this.pool.id, this.pool.dims, { encoding: 'i8' })
      : null;
    if (this.cache) this.status.warnings.push(...this.cache.warnings);
    const index = new SemanticIndex({ embedder: this.pool, cache: this.cache ?? undefined });
    this.index = index;
    // The gibberish gate's panel (about 40 short queries), embedded ahead of the build: the first hybrid
    // query does not wait for it behind the build's batches.
    void index.gibberishCentroid().catch(() => undefined);

    const docs = items.map(toDoc);
    for (const d of docs) this.live.set(d.id, d);
    const { missing, uncovered } = this.countMissing(index, docs);
    const mode = this.options.embedMissing;
    if (missing > 0 && mode === 'never' && uncovered > 0) return this.incomplete(missing);
    this.status.state = 'indexing';
    const progress = (offset: number) => ({
      signal: this.stopping.signal,
      onProgress: (done: number, total: number) => {
        this.status.done = offset + done;
        this.options.onProgress?.(offset + done, offset + total);
      },
    });
    // Many chunks to embed: every core the memory budget allows while it lasts (the same pool grows, so
    // the model is not loaded again), then one worker for queries and edits. The upsert starts on the
    // first worker while the others load.
    const many =
      missing > 200 && mode !== 'never'
        ? await this.buildWorkers(workerMb, mode === 'background' && missing > this.laneMinChunks())
        : 1;
    this.status.buildWorkers = missing > 0 && mode !== 'never' ? many : 0;
    const grow = many > 1;
    const resize = (n: number) => (shared ? shared.resize(this, n) : this.pool?.resize(n));
    const growing = grow ? resize(many) : undefined;
    // After the first pass of a large background build, queries get a worker of their own while the rest
    // is embedded (EmbeddingPool.queryLane). Not before: searches run bm25 until then, and loading it beside
    // the first pass delayed the first hybrid answer (docs/performance.md).
    let lane = false;
    const queryLane = (open: boolean) => (shared ? shared.queryLane(this, open) : this.pool?.queryLane(open));
    try {
      if (mode === 'wait' || missing === 0) {
        await this.enqueue(() => index.upsert(docs, progress(0)));
        await this.applyPending();
        this.markReady();
      } else {
        this.embedding = mode === 'background';
        // The first pass: what the cache has, and one new chunk per document (its title when more wait).
        await this.enqueue(() => index.upsert(docs, { embed: mode === 'never' ? 0 : 1, ...progress(0) }));
        this.markReady();
        lane = this.embedding && index.waiting > this.laneMinChunks();
        if (lane) void queryLane(true);
        if (this.embedding) {
          this.scheduleSave(0);
          await this.applyPending();
          await this.embedRest();
        }
      }
    } finally {
      if (lane) await queryLane(false);
      await growing;
      if (grow) await resize(1);
      this.embedding = false;
    }
    this.live.clear();
    if (this.closed) return;
    if (index.waiting === 0) this.status.completeMs = Math.round(performance.now() - this.started);
    // Growth by doubling left up to half the matrix unused; edits from now on add few chunks.
    index.index.compact(Math.ceil(index.index.chunkCount / 16));
    this.scheduleSave(0);
    // The worker that embedded holds its batches' garbage; collecting it now (off this thread, ~50 ms)
    // gives back about 30 MB that V8 may otherwise keep while the worker idles.
    if (missing > 0 && mode !== 'never')
      void this.pool?.workerMemory({ collect: true }).catch(() => undefined);
  }

  /**
   * `never`: the model known from its files (none: not even the bundled one is installed), whether its
   * vectors are cached (`dims`), and the LazyPool that loads it for the first query needing a vector. For a
   * one-shot search whose query the model reads (`expectedQuery`), the pool starts at once: the model loads
   * in its worker (about a second) while this thread reads the vectors and the lexical index. The worker
   * does not keep the process alive, and the pool is closed if the cache turns out incomplete.
   */
  private cachedModel(): Promise<CachedModel | undefined> {
    this.fromCache ??= (async () => {
      const { describeEmbedder } = await import('./resolve.js');
      const described = await describeEmbedder(this.options.provider, {
        transformers: this.options.transformers,
      });
      if (!described) return undefined;
      this.modelId = described.id;
      const dir = this.options.cacheDir;
      const { EmbeddingCache } = await import('./cache.js');
      const dims = dir === null ? undefined : await EmbeddingCache.peekDims(dir, described.id);
      if (dims === undefined || (described.dims !== undefined && dims !== described.dims))
        return { described };
      const embedder = new LazyPool(described.id, dims, described.maxTokens, () => this.startPool(described));
      const expected = this.options.expectedQuery;
      if (expected !== undefined && (await this.supports(expected).catch(() => false)) && !this.closed)
        embedder.prepare();
      return { described, dims, embedder };
    })();
    return this.fromCache;
  }

  /**
   * `never` with a model known from its files: the cached vectors only, read without loading the model
   * (unless a one-shot's query needs it: cachedModel). Nothing is read when no cache file of that model
   * exists: a one-shot command then answers bm25 in the time of a lexical one.
   */
  private async runFromCache(items: BacklogItem[], model: CachedModel): Promise<void> {
    const { described, dims, embedder } = model;
    this.status.provider = described.provider;
    this.modelId = described.id;
    if (dims === undefined || embedder === undefined) {
      this.status.state = 'incomplete';
      this.status.warnings.push(
        `no embedding is cached for ${described.id}; run \`backlog-search index\` to build them`,
      );
      return;
    }
    const dir = this.options.cacheDir;
    const { EmbeddingCache, SemanticIndex } = await indexModules();
    this.cache = await EmbeddingCache.open(dir!, described.id, dims, { encoding: 'i8' });
    this.status.warnings.push(...this.cache.warnings);
    const index = new SemanticIndex({ embedder, cache: this.cache });
    this.index = index;
    // Which cached vectors each document has, without chunking it again (chunk-plans.ts).
    await index.useChunkPlans();
    const docs = items.map(toDoc);
    const { missing, uncovered } = this.countMissing(index, docs);
    if (missing > 0 && uncovered > 0) return this.incomplete(missing);
    this.status.state = 'indexing';
    await this.enqueue(() => index.upsert(docs, { embed: 0 }));
    this.markReady();
  }

  /** The pool behind a LazyPool: the model `described` names, or an error (another model loaded, none, or closed). */
  private async startPool(described: DescribedEmbedder): Promise<EmbeddingPool> {
    // A one-shot's CLI may have started this model already (early-start.ts).
    const early = await takeEarlyPool(described.id, this.stopping.signal);
    const started = await (early ??
      (await import('./pool.js')).EmbeddingPool.start({
        provider: described.provider,
        workers: 1,
        // Closed while the model loads (a one-shot that answered bm25): the worker is terminated at once.
        signal: this.stopping.signal,
        transformers: this.options.transformers,
        firstQuery: this.options.expectedQuery,
      }));
    this.status.warnings.push(...started.warnings);
    const pool = started.embedder;
    if (!pool || pool.id !== described.id || this.closed) {
      await pool?.close();
      throw new Error(
        this.closed
          ? 'closed'
          : `the ${described.provider} model loaded as ${pool?.id ?? 'nothing'}, not ${described.id}`,
      );
    }
    this.pool = pool;
    return pool;
  }

  /** Chunks of `docs` with no cached vector, and documents with none at all. */
  private countMissing(index: SemanticIndex, docs: Doc[]): { missing: number; uncovered: number } {
    const cache = this.cache;
    let missing = 0;
    let uncovered = 0;
    for (const d of docs) {
      const hashes = index.hashes(d);
      this.status.total += hashes.length;
      // has(), not get(): an i8 cache would dequantize every vector just to count the missing ones.
      const absent = cache ? hashes.filter((h) => !cache.has(h)).length : hashes.length;
      missing += absent;
      if (hashes.length > 0 && absent === hashes.length) uncovered++;
    }
    return { missing, uncovered };
  }

  /** Some document has no cached vector and this process does not embed: bm25, saying how many are missing. */
  private async incomplete(missing: number): Promise<void> {
    this.status.state = 'incomplete';
    this.status.missing = missing;
    this.status.warnings.push(
      `${missing} of ${this.status.total} chunks have no cached embedding; run \`backlog-search index\` to build them`,
    );
    await this.close();
  }

  /** Hybrid search may start: every document has at least one vector. */
  private markReady(): void {
    if (this.closed) return;
    this.updateCounts();
    this.status.state = 'ready';
    this.status.readyMs = Math.round(performance.now() - this.started);
  }

  private updateCounts(): void {
    const index = this.index;
    if (!index) return;
    const waiting = index.waiting;
    const indexed = index.chunks;
    this.status.done = indexed;
    this.status.total = indexed + waiting;
    if (waiting > 0) this.status.missing = waiting;
    else delete this.status.missing;
  }

  /** Edits that arrived before the first pass was ready, applied in full. */
  private async applyPending(): Promise<void> {
    for (const [id, item] of this.pending) {
      if (item) await this.enqueue(() => this.index!.upsert([toDoc(item)], { signal: this.stopping.signal }));
      else await this.enqueue(async () => this.index!.remove(id));
    }
    this.pending.clear();
    this.updateCounts();
  }

  /**
   * The rest of a background build, in passes of 1, 2, 4... new chunks per incomplete document, each cut
   * into groups of about EMBED_GROUP chunks: an edit waits for one group at most, the index grows as each
   * group lands, and the cache is saved now and then so a restart keeps what was embedded.
   */
  private async embedRest(): Promise<void> {
    const index = this.index!;
    let lastSave = performance.now();
    for (let embed = 1; index.waiting > 0 && !this.closed; embed *= 2) {
      let group: string[] = [];
      let size = 0;
      const flush = async () => {
        const ids = group;
        group = [];
        size = 0;
        // The latest version of each document: an edit since the pass began is embedded as it is now.
        await this.enqueue(() =>
          index.upsert(
            ids.flatMap((id) => this.live.get(id) ?? []),
            {
              embed,
              maxBatchChars: BACKGROUND_BATCH_CHARS,
              signal: this.stopping.signal,
              onProgress: () => undefined,
            },
          ),
        );
        this.updateCounts();
        this.options.onProgress?.(this.status.done, this.status.total);
        if (performance.now() - lastSave > SAVE_EVERY_MS) {
          lastSave = performance.now();
          this.scheduleSave(0);
        }
      };
      for (const id of index.incomplete()) {
        if (this.closed) return;
        group.push(id);
        size += Math.min(embed, index.waitingFor(id));
        if (size >= EMBED_GROUP) await flush();
      }
      if (group.length > 0) await flush();
    }
  }

  /**
   * Workers for a large initial embedding: as asked, else as many as the memory budget has room for
   * (with the bundled model at the default budget, one). `loadedMb`: what the process's RSS grew by while
   * the first worker loaded; the worker's own heaps count instead when larger (the main thread may have
   * freed memory meanwhile).
   */
  private laneMinChunks(): number {
    return this.options.queryLaneMinChunks ?? QUERY_LANE_MIN_CHUNKS;
  }

  private async buildWorkers(loadedMb: number, lane: boolean): Promise<number> {
    const asked = this.options.workers;
    if (asked !== undefined && Number.isFinite(asked)) return Math.max(1, Math.min(2, Math.floor(asked)));
    const cores = Math.min(2, availableParallelism());
    if (cores === 1) return 1;
    const [own] = (await this.pool?.workerMemory().catch(() => [])) ?? [];
    const workerMb = Math.max(loadedMb, own ? (own.heapTotal + own.external) / MB : 0);
    const budget = this.options.memoryBudgetMb ?? DEFAULT_MEMORY_BUDGET_MB;
    // The query lane (probably) opens after the first pass: its share of the budget is not the build's.
    const rss = process.memoryUsage.rss() / MB + (lane ? workerMb * QUERY_LANE_PEAK : 0);
    const n = workersWithin(budget, rss, workerMb, cores);
    if (n < cores)
      this.status.buildNote =
        `embedding on ${n} worker${n > 1 ? 's' : ''}: with ${n + 1} the build would peak at about ` +
        `${Math.round(projectedPeakMb(rss, workerMb, n + 1))} MB, over the memory budget of ${budget} MB ` +
        `(raise it with --memory-budget or BACKLOG_MEMORY_MB for a faster first build)`;
    return n;
  }

  /** Off for good in this process: no provider, a failed model, or cached vectors only. */
  private inactive(): boolean {
    return (
      this.status.state === 'off' || this.status.state === 'failed' || this.status.state === 'incomplete'
    );
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A file was added or changed: re-embed its chunks (only those not cached). */
  upsert(item: BacklogItem): Promise<unknown> {
    if (this.closed || this.inactive()) return Promise.resolve();
    const doc = toDoc(item);
    if (this.status.state !== 'ready') {
      // The first pass runs on a snapshot of the items: apply the latest version once it is done.
      this.pending.set(item.id, item);
      this.live.set(item.id, doc);
      return Promise.resolve();
    }
    if (this.embedding) this.live.set(item.id, doc);
    return this.enqueue(() => this.index!.upsert([doc], { signal: this.stopping.signal })).then(() => {
      this.updateCounts();
      this.scheduleSave();
    });
  }

  remove(id: string): void {
    if (this.closed || this.inactive()) return;
    this.live.delete(id);
    if (this.status.state !== 'ready') {
      this.pending.set(id, null);
      return;
    }
    void this.enqueue(async () => {
      this.index!.remove(id);
      this.updateCounts();
    });
    this.scheduleSave();
  }

  /**
   * Where the semantic side's memory is, for diagnostics and benchmarks: each embedding worker's own heap
   * and WebAssembly memory, and the bytes of the vector index and of the embedding cache's vectors.
   */
  async memory(): Promise<{ workers: WorkerMemory[]; vectorIndexBytes: number; cacheBytes: number }> {
    return {
      workers: (await this.pool?.workerMemory()) ?? [],
      vectorIndexBytes: this.index?.index.memoryBytes ?? 0,
      cacheBytes: this.cache?.memoryBytes ?? 0,
    };
  }

  /**
   * Whether the model reads this query: a multilingual model every query, an English-only one those
   * the gate of query-language.ts lets through (not Russian, not `Passwort vergessen`).
   */
  async supports(query: string): Promise<boolean> {
    const id = this.pool?.id ?? this.modelId;
    if (id !== null && MULTILINGUAL.test(id)) return true;
    // The gate reads the query's letters, words and perhaps its language: once per query text.
    let known = this.gate.get(query);
    if (known === undefined) {
      known = await englishOnlyQuerySupported(query, this.options.embedMissing !== 'never');
      this.gate.set(query, known);
      if (this.gate.size > 512) this.gate.delete(this.gate.keys().next().value as string);
    }
    return known;
  }

  /** The `k` nearest documents by their best chunk (cosine), among `allowed` when given. */
  async search(query: string, k: number, allowed?: (id: string) => boolean): Promise<Scored[]> {
    if (!this.index || this.status.state !== 'ready' || !(await this.supports(query))) return [];
    let hits;
    try {
      hits = await this.index.search(query, k, allowed ? { filter: allowed } : {});
    } catch (err) {
      if (this.pool) throw err;
      // The model of cached vectors failed to load on first use: bm25 from now on, and say why.
      this.status.state = 'failed';
      this.status.warnings.push(`semantic search failed: ${(err as Error).message}; searches run bm25`);
      return [];
    }
    return hits.map((h) => ({ id: h.docId, score: h.score }));
  }

  private scheduleSave(delay = 2000): void {
    if (!this.cache || this.closed) return;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.enqueue(() => this.save());
    }, delay);
    this.saveTimer.unref();
  }

  private async save(): Promise<void> {
    if (!this.cache || !this.index) return;
    this.index.pruneCache();
    await this.cache.save();
    await this.index.saveChunkPlans().catch(() => undefined);
  }

  /** Writes pending cache changes. */
  async flush(): Promise<void> {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      await this.enqueue(() => this.save());
    }
    await this.queue;
  }

  /**
   * Stops the build where it is and writes what the cache holds. Not `flush` first: that waits for the
   * group of chunks in flight, up to a minute of a worker that runs niced on a busy machine.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopping.abort();
    if (this.options.expectedQuery !== undefined) dropEarlyPool();
    const due = this.saveTimer !== null;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    // After the work in flight, which the abort ends (a save running ends on its own: it is never cut).
    // Vectors embedded since the last save are kept; a process that embedded nothing writes nothing.
    await this.enqueue(async () => (due || this.cache?.dirty ? this.save() : undefined)).catch(
      () => undefined,
    );
    if (this.options.sharedPool) {
      // Acquired (this.pool set) or about to be: run() releases it when it sees `closed`.
      if (this.pool) await this.options.sharedPool.release(this);
    } else await this.pool?.close();
    this.pool = null;
  }
}
