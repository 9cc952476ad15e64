/**
 * The vector half of hybrid search for a backlog: resolves an embedding provider, embeds every item's
 * chunks off the main thread (through the binary embedding cache, so a restart embeds only what
 * changed), keeps the vector index in step with the files, and answers vector queries. Lexical search
 * never waits for it: until it is ready, searches run bm25 and say so.
 */
import { availableParallelism } from 'node:os';
import { EmbeddingCache, hashText } from './cache.js';
import { chunkText } from './chunk.js';
import { EmbeddingPool, type WorkerMemory } from './pool.js';
import { SemanticIndex } from './semantic-index.js';
import type { EmbeddingProvider, ResolvedProvider, TransformersOptions } from './types.js';
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
}

export interface SemanticStatus {
  provider: ResolvedProvider;
  state: SemanticState;
  /** Chunks embedded (or found in the cache) so far, of `total`. */
  done: number;
  total: number;
  /** Chunks without a cached vector when the state is `incomplete`. */
  missing?: number;
  /** Workers the initial embedding ran on, and why not more (when the memory budget decided). */
  buildWorkers?: number;
  buildNote?: string;
  warnings: string[];
}

type Doc = { id: string; title: string; body: string };

/**
 * Whether an English-only model can embed this query meaningfully: most of its letters are Latin.
 * The bundled model maps Russian text to near-random vectors (nDCG@10 0.035 on XQuAD-ru), and fusing
 * those into the ranking cost up to 0.44 nDCG (docs/fusion.md); such queries stay lexical.
 */
export function englishOnlyQuerySupported(query: string): boolean {
  const latin = (query.match(/\p{Script=Latin}/gu) ?? []).length;
  const other = (query.match(/\p{L}/gu) ?? []).length - latin;
  return latin >= other;
}

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

/** Models that embed many languages; every other model is treated as English-only. */
const MULTILINGUAL = /multilingual|e5|bge-m3|labse|xlm|paraphrase-multilingual/i;
const toDoc = (i: BacklogItem): Doc => ({ id: i.id, title: i.title, body: searchableBody(i) });

export class SemanticSearch implements VectorRetriever {
  private status: SemanticStatus = { provider: 'none', state: 'off', done: 0, total: 0, warnings: [] };
  private pool: EmbeddingPool | null = null;
  private index: SemanticIndex | null = null;
  private cache: EmbeddingCache | null = null;
  /** Index writes run one at a time (SemanticIndex.upsert is not re-entrant for a document). */
  private queue: Promise<unknown> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Changes that arrived while the initial embedding ran (null: removed). */
  private readonly pending = new Map<string, BacklogItem | null>();
  /** Settles when the initial embedding is done (or failed, or skipped). */
  ready: Promise<void> = Promise.resolve();

  constructor(private readonly options: SemanticOptions) {}

  get state(): SemanticState {
    return this.status.state;
  }

  /** Why vector search is not answering yet, for a warning. */
  progress(): string {
    const s = this.status;
    if (s.state === 'indexing') return `still being built (${s.done}/${s.total} chunks embedded)`;
    if (s.state === 'loading') return 'loading its model';
    if (s.state === 'ready') return 'ready';
    if (s.state === 'incomplete')
      return `incomplete: ${s.missing} of ${s.total} chunks have no cached embedding (run \`backlog-search index\`)`;
    return s.state === 'failed' ? 'unavailable (failed to load)' : 'off (no embedding provider)';
  }

  info(): SemanticStatus {
    return { ...this.status, warnings: [...this.status.warnings] };
  }

  /** Starts embedding `items`. Resolves at once in `background` mode, after the embedding in `wait` mode. */
  async start(items: BacklogItem[]): Promise<void> {
    if (this.options.provider === 'none') return;
    this.status.state = 'loading';
    this.ready = this.run(items).catch((err: Error) => {
      this.status.state = 'failed';
      this.status.warnings.push(`semantic search failed: ${err.message}; searches run bm25`);
    });
    if (this.options.embedMissing === 'wait') await this.ready;
  }

  private async run(items: BacklogItem[]): Promise<void> {
    const rssBefore = process.memoryUsage.rss();
    const started = await EmbeddingPool.start({
      provider: this.options.provider,
      workers: 1,
      transformers: this.options.transformers,
    });
    this.status.warnings.push(...started.warnings);
    if (!started.embedder || this.closed) {
      await started.embedder?.close();
      this.status.state = 'off';
      return;
    }
    this.pool = started.embedder;
    this.status.provider = started.embedder.provider;
    const workerMb = Math.max(0, process.memoryUsage.rss() - rssBefore) / MB;
    // int8 with a scale per vector: a quarter of Float32 (on the Backlog.md folder Float32 alone is
    // 11.8 MB, about 5x the text; the issue allows .cache/ 3x); worst cosine error measured 5.8e-4.
    this.cache = this.options.cacheDir
      ? await EmbeddingCache.open(this.options.cacheDir, this.pool.id, this.pool.dims, { encoding: 'i8' })
      : null;
    if (this.cache) this.status.warnings.push(...this.cache.warnings);
    this.index = new SemanticIndex({ embedder: this.pool, cache: this.cache ?? undefined });

    const docs = items.map(toDoc);
    const missing = this.missingChunks(docs);
    this.status.total = docs.reduce(
      (n, d) => n + chunkText(d.title, d.body, this.index!.chunkOptions).length,
      0,
    );
    if (missing > 0 && this.options.embedMissing === 'never') {
      this.status.state = 'incomplete';
      this.status.missing = missing;
      this.status.warnings.push(
        `${missing} of ${this.status.total} chunks have no cached embedding; run \`backlog-search index\` to build them`,
      );
      await this.close();
      return;
    }
    this.status.state = 'indexing';
    const progress = {
      onProgress: (done: number, total: number) => {
        this.status.done = done;
        this.status.total = total;
        this.options.onProgress?.(done, total);
      },
    };
    // Many chunks to embed: every core the memory budget allows while it lasts (the same pool grows, so
    // the model is not loaded again), then one worker for queries and edits. The upsert starts on the
    // first worker while the others load.
    const many = missing > 200 ? await this.buildWorkers(workerMb) : 1;
    this.status.buildWorkers = missing > 0 ? many : 0;
    const grow = many > 1;
    const growing = grow ? this.pool.resize(many) : undefined;
    try {
      await this.enqueue(() => this.index!.upsert(docs, progress));
    } finally {
      await growing;
      if (grow) await this.pool?.resize(1);
    }
    for (const [id, item] of this.pending) {
      if (item) await this.enqueue(() => this.index!.upsert([toDoc(item)]));
      else this.index.remove(id);
    }
    this.pending.clear();
    // Growth by doubling left up to half the matrix unused; edits from now on add few chunks.
    this.index.index.compact(Math.ceil(this.index.index.chunkCount / 16));
    this.status.state = this.closed ? 'off' : 'ready';
    this.scheduleSave(0);
    // The worker that embedded holds its batches' garbage; collecting it now (off this thread, ~50 ms)
    // gives back about 30 MB that V8 may otherwise keep while the worker idles.
    if (missing > 0) void this.pool?.workerMemory({ collect: true }).catch(() => undefined);
  }

  /**
   * Workers for a large initial embedding: as asked, else as many as the memory budget has room for
   * (with the bundled model at the default budget, one). `loadedMb`: what the process's RSS grew by while
   * the first worker loaded; the worker's own heaps count instead when larger (the main thread may have
   * freed memory meanwhile).
   */
  private async buildWorkers(loadedMb: number): Promise<number> {
    const asked = this.options.workers;
    if (asked !== undefined && Number.isFinite(asked)) return Math.max(1, Math.min(2, Math.floor(asked)));
    const cores = Math.min(2, availableParallelism());
    if (cores === 1) return 1;
    const [own] = (await this.pool?.workerMemory().catch(() => [])) ?? [];
    const workerMb = Math.max(loadedMb, own ? (own.heapTotal + own.external) / MB : 0);
    const budget = this.options.memoryBudgetMb ?? DEFAULT_MEMORY_BUDGET_MB;
    const rss = process.memoryUsage.rss() / MB;
    const n = workersWithin(budget, rss, workerMb, cores);
    if (n < cores)
      this.status.buildNote =
        `embedding on ${n} worker${n > 1 ? 's' : ''}: with ${n + 1} the build would peak at about ` +
        `${Math.round(projectedPeakMb(rss, workerMb, n + 1))} MB, over the memory budget of ${budget} MB ` +
        `(raise it with --memory-budget or BACKLOG_MEMORY_MB for a faster first build)`;
    return n;
  }

  private missingChunks(docs: Doc[]): number {
    if (!this.cache || !this.index) return Infinity;
    const hashes = docs.flatMap((d) =>
      chunkText(d.title, d.body, this.index!.chunkOptions).map((c) => hashText(c.text)),
    );
    // has(), not get(): an i8 cache would dequantize every vector just to count the missing ones.
    const cache = this.cache;
    return hashes.filter((h) => !cache.has(h)).length;
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
    if (this.status.state !== 'ready') {
      // Still building from a snapshot of the items: apply the latest version once it is done.
      this.pending.set(item.id, item);
      return Promise.resolve();
    }
    return this.enqueue(() => this.index!.upsert([toDoc(item)])).then(() => this.scheduleSave());
  }

  remove(id: string): void {
    if (this.closed || this.inactive()) return;
    if (this.status.state !== 'ready') {
      this.pending.set(id, null);
      return;
    }
    void this.enqueue(async () => this.index!.remove(id));
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

  /** Whether the model can embed this query (English-only models skip queries in other scripts). */
  supports(query: string): boolean {
    return (this.pool !== null && MULTILINGUAL.test(this.pool.id)) || englishOnlyQuerySupported(query);
  }

  /** The `k` nearest documents by their best chunk (cosine), among `allowed` when given. */
  async search(query: string, k: number, allowed?: (id: string) => boolean): Promise<Scored[]> {
    if (!this.index || this.status.state !== 'ready' || !this.supports(query)) return [];
    const hits = await this.index.search(query, k, allowed ? { filter: allowed } : {});
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

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    await this.pool?.close();
    this.pool = null;
  }
}
