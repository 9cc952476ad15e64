import { availableParallelism } from 'node:os';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { resolveEmbedder } from './resolve.js';
import {
  InlineSlot,
  ThreadSlot,
  startThread,
  type Batch,
  type Ready,
  type Slot,
  type SlotEvents,
  type WorkerInit,
  type WorkerMemory,
} from './pool-slots.js';

export type { WorkerInit, WorkerMemory, WorkerReply, WorkerRequest } from './pool-slots.js';
import type {
  Embedder,
  EmbedderOptions,
  EmbeddingProvider,
  EmbedKind,
  ResolvedEmbedder,
  ResolvedProvider,
} from './types.js';

/**
 * While a query lane runs, the build's workers run at a lower priority (os.setPriority in the worker). Linux
 * only: there a worker thread has a priority of its own; elsewhere it would lower the whole process.
 */
const LOWER_BUILD_PRIORITY = process.platform === 'linux';

/**
 * Runs the lane's worker makes after loading, before it takes queries: with fewer, its first queries ran
 * cold (measured with the bundled model: 4 runs after the load's own make the next one as fast as the
 * 100th; docs/performance.md, branch `lane`).
 */
const LANE_WARMUP_RUNS = 4;

export interface PoolOptions extends EmbedderOptions {
  /** Default `auto`. */
  provider?: EmbeddingProvider;
  /** Worker threads, default min(2, cores). 0 embeds in the calling thread (blocks it: for tests and benchmarks). */
  workers?: number;
  /** Most texts in one batch. Default 16. */
  batchSize?: number;
  /**
   * Most characters in one batch (a batch runs to the end once started, so this bounds how long a query
   * waits behind indexing). Default 4000, about a third of a second of the bundled model's time.
   */
  maxBatchChars?: number;
  /** Query embeddings kept (LRU). Default 512. */
  queryCacheSize?: number;
  /** How long a worker may take to load its model. Default 120 s. */
  startTimeoutMs?: number;
  /** A worker that takes longer than this on one batch is stopped and replaced; the batch is retried once. Default 120 s. */
  batchTimeoutMs?: number;
  /** V8 heap limits of each worker. Default {@link DEFAULT_WORKER_LIMITS}. */
  resourceLimits?: ResourceLimits;
  /** Aborting it while the workers load terminates them, and `start` resolves with no embedder. */
  signal?: AbortSignal;
}

export { DEFAULT_WORKER_LIMITS } from './pool-slots.js';

export interface EmbedAllOptions {
  kind?: EmbedKind;
  /** Called after each batch with the number of texts embedded so far. */
  onProgress?: (done: number, total: number) => void;
  /** Called with each batch's vectors as it lands (`indices` into `texts`): kept even if the call is aborted later. */
  onBatch?: (indices: number[], vectors: Float32Array[]) => void;
  signal?: AbortSignal;
  /** Ahead of queued batches, like a query (the gibberish gate's panel). Default false. */
  urgent?: boolean;
  /**
   * Most characters in one batch for this call (default: the pool's `maxBatchChars`). A background build
   * passes less so that a query waits behind a shorter batch.
   */
  maxBatchChars?: number;
}

export interface PoolStats {
  workers: number;
  /** The query lane (see {@link EmbeddingPool.queryLane}): off, its worker loading, or on. */
  lane: 'off' | 'loading' | 'on';
  busy: number;
  queued: number;
  embeddedTexts: number;
  queryCache: { size: number; hits: number; misses: number };
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Embeds off the main thread: a pool of worker threads, each loading the provider itself, fed batches of
 * similar-length texts. Query embeddings jump the queue and are kept in an LRU cache. The pool is itself
 * an {@link Embedder}, so it can stand wherever one is expected.
 */
export class EmbeddingPool implements Embedder {
  readonly id: string;
  readonly dims: number;
  readonly maxTokens: number | undefined;
  readonly provider: Exclude<ResolvedProvider, 'none'>;
  private readonly slots: Slot[] = [];
  private readonly queue: Batch[] = [];
  private readonly urgent: Batch[] = [];
  private readonly queryCache = new Map<string, Float32Array>();
  private readonly inflight = new Map<string, Promise<Float32Array>>();
  private hits = 0;
  private misses = 0;
  private embedded = 0;
  private closed = false;
  /** Aborted by `close`: a worker still loading (the lane, a resize, a replacement) is terminated. */
  private readonly stopping = new AbortController();
  private restarts = 0;
  private spawning = 0;
  /** Workers the pool keeps: a worker that dies is replaced up to this count (see `resize`). */
  private target = 0;
  /** Slots leaving after their current batch (`resize` down while they were busy). */
  private readonly retiring = new Set<Slot>();
  /** The query lane's worker: it runs only urgent batches (queries), never the build's (see `queryLane`). */
  private lane: Slot | null = null;
  private laneWanted = false;
  private laneLoading: Promise<void> | null = null;
  private readonly slotEvents: SlotEvents = {
    finished: (slot, batch, result) => {
      if (result instanceof Error) this.settle(batch, (b) => b.reject(result));
      else {
        this.embedded += result.length;
        this.settle(batch, (b) => b.resolve(result));
      }
      if (this.retiring.has(slot)) this.retire(slot);
      if (slot === this.lane && !this.laneWanted) void this.endLane();
      this.dispatch();
    },
    died: (slot, err) => this.onDeath(slot, err),
  };
  private readonly batchSize: number;
  private readonly maxBatchChars: number;
  private readonly queryCacheSize: number;

  private constructor(
    ready: Ready,
    private readonly init: WorkerInit,
    private readonly options: PoolOptions,
  ) {
    this.id = ready.id;
    this.dims = ready.dims;
    this.maxTokens = ready.maxTokens;
    this.provider = ready.provider as Exclude<ResolvedProvider, 'none'>;
    this.batchSize = Math.max(1, options.batchSize ?? 16);
    this.maxBatchChars = Math.max(1, options.maxBatchChars ?? 4000);
    this.queryCacheSize = Math.max(0, options.queryCacheSize ?? 512);
  }

  /**
   * Starts the workers with the requested provider (each resolves it the same way `resolveEmbedder` does)
   * and waits until they have loaded it. Never throws: when nothing loads, `embedder` is null and
   * `provider` is `none`, with the reasons in `warnings`.
   */
  static async start(options: PoolOptions = {}): Promise<ResolvedEmbedder<EmbeddingPool>> {
    const provider = options.provider ?? 'auto';
    const count = Math.max(0, Math.floor(options.workers ?? Math.min(2, availableParallelism())));
    if (count === 0) {
      const resolved = await resolveEmbedder(provider, options);
      if (!resolved.embedder) return { embedder: null, provider: 'none', warnings: resolved.warnings };
      const e = resolved.embedder;
      const pool = new EmbeddingPool(
        { provider: resolved.provider, id: e.id, dims: e.dims, maxTokens: e.maxTokens, warnings: [] },
        { provider, options: {} },
        options,
      );
      pool.slots.push(new InlineSlot(e, pool.slotEvents));
      pool.target = 1;
      return { embedder: pool, provider: resolved.provider, warnings: resolved.warnings };
    }

    const init: WorkerInit = {
      provider,
      options: { transformers: { threads: 1, ...options.transformers } },
    };
    const first = options.firstQuery;
    const timeout = options.startTimeoutMs ?? 120_000;
    const started = await Promise.all(
      Array.from({ length: count }, () =>
        startThread(
          first === undefined ? init : { ...init, options: { ...init.options, firstQuery: first } },
          timeout,
          options.resourceLimits,
          options.signal,
        ).catch((err: unknown) => new Error(message(err))),
      ),
    );
    const warnings = new Set<string>();
    let canonical: Ready | undefined;
    for (const s of started) {
      if (s instanceof Error) warnings.add(`embedding worker failed to start: ${s.message}`);
      else {
        s.ready.warnings.forEach((w) => warnings.add(w));
        if (!canonical && s.ready.provider !== 'none') canonical = s.ready;
      }
    }
    if (!canonical) {
      await Promise.all(started.map((s) => (s instanceof Error ? undefined : s.worker.terminate())));
      return { embedder: null, provider: 'none', warnings: [...warnings] };
    }
    // Restarted workers load exactly this provider, not `auto` again.
    const pool = new EmbeddingPool(canonical, { ...init, provider: canonical.provider }, options);
    for (const s of started) {
      if (s instanceof Error) continue;
      if (s.ready.id !== canonical.id) {
        warnings.add(
          `an embedding worker loaded ${s.ready.id || 'nothing'} instead of ${canonical.id}; it was stopped`,
        );
        void s.worker.terminate();
      } else pool.addThread(s.worker);
    }
    pool.target = pool.slots.length;
    // The first query, embedded while the model loaded: its answer is waiting in the query cache.
    const warm = canonical.first;
    if (warm && warm.vector.length === pool.dims) pool.remember(warm.text, warm.vector);
    return { embedder: pool, provider: canonical.provider, warnings: [...warnings] };
  }

  /** Number of live workers (1 for the in-thread mode). */
  get workerCount(): number {
    return this.slots.length;
  }

  stats(): PoolStats {
    return {
      workers: this.slots.length,
      lane: this.lane ? 'on' : this.laneLoading ? 'loading' : 'off',
      busy: this.slots.filter((s) => s.current).length,
      queued: this.queue.length + this.urgent.length,
      embeddedTexts: this.embedded,
      queryCache: { size: this.queryCache.size, hits: this.hits, misses: this.misses },
    };
  }

  /**
   * Each worker's own memory (heap, WebAssembly); empty for the in-thread mode. With `collect`, each worker
   * first runs a full garbage collection (the service does after its initial embedding: the old generation
   * of a worker that embedded thousands of chunks holds 30-40 MB of garbage V8 may leave for long).
   */
  async workerMemory(options: { collect?: boolean } = {}): Promise<WorkerMemory[]> {
    const slots = this.lane ? [...this.slots, this.lane] : this.slots;
    const all = await Promise.all(slots.map((s) => s.memory?.(options.collect ?? false)));
    return all.filter((m): m is WorkerMemory => m !== undefined);
  }

  /**
   * Grows or shrinks the pool to `count` workers (at least 1). Growing starts the new workers and resolves
   * once they are loaded (a worker that fails to start is left out: the pool keeps what it has). Shrinking
   * stops idle workers at once and busy ones after their current batch; the workers kept are the oldest, so
   * no model is loaded again. In-thread pools (`workers: 0`) stay as they are.
   *
   * Used for the initial embedding of a large backlog: one worker is enough for queries and edits, every
   * core helps while thousands of chunks wait. Starting and stopping whole pools instead would load the
   * model once more and leave the freed memory of every stopped worker behind in the process.
   */
  async resize(count: number): Promise<void> {
    if (this.closed || this.slots.some((s) => s instanceof InlineSlot)) return;
    const want = Math.max(1, Math.floor(count));
    this.target = want;
    const active = this.slots.filter((s) => !this.retiring.has(s));
    if (active.length > want) {
      for (const slot of active.slice(want).reverse()) {
        if (slot.current) this.retiring.add(slot);
        else this.retire(slot);
      }
      return;
    }
    // Busy slots asked to leave before can stay after all.
    for (const slot of [...this.retiring].slice(0, want - active.length)) this.retiring.delete(slot);
    const missing = want - this.slots.length + this.retiring.size - this.spawning;
    if (missing <= 0) return;
    this.spawning += missing;
    const timeout = this.options.startTimeoutMs ?? 120_000;
    await Promise.all(
      Array.from({ length: missing }, () =>
        startThread(this.init, timeout, this.options.resourceLimits, this.stopping.signal).then(
          ({ worker, ready }) => {
            this.spawning--;
            const live = this.slots.length - this.retiring.size;
            if (this.closed || ready.id !== this.id || live >= this.target) void worker.terminate();
            else this.addThread(worker);
          },
          () => {
            this.spawning--;
          },
        ),
      ),
    );
  }

  /**
   * Opens or closes the query lane: one more worker that runs only urgent batches (query embeddings, the
   * gibberish panel), so that a query never waits behind a batch of a build (~250 ms for a run of 4 x 128
   * tokens of the bundled model; a query alone takes ~12 ms). For the initial embedding only: it costs a
   * loaded model (about 80 MB of RSS with the bundled model) while it lives. While it loads (1-2 s of a
   * core), queued non-urgent batches wait: the other workers are free for queries meanwhile, and the load
   * gets the core the build would have used. Opening resolves once its model is loaded (or failed to:
   * queries then go to the other workers as before). Once it is on, the other workers run at a lower
   * priority (Linux), so that on a busy machine the lane and the main thread get a core first. Closing
   * stops it at once when idle, else after its current batch; after a lowered build it stays instead, as
   * the pool's first worker, and one lowered worker leaves. In-thread pools (`workers: 0`) have none.
   */
  async queryLane(open: boolean): Promise<void> {
    this.laneWanted = open && !this.closed && !this.slots.some((s) => s instanceof InlineSlot);
    if (!this.laneWanted) {
      this.dispatch(); // batches held while it loaded go on
      // A lane still loading is stopped once loaded: wait for that, so that it is gone when this resolves.
      await this.laneLoading;
      if (!this.laneWanted && this.lane && !this.lane.current) await this.endLane();
      return;
    }
    if (this.lane) return;
    this.laneLoading ??= startThread(
      { ...this.init, warmup: LANE_WARMUP_RUNS },
      this.options.startTimeoutMs ?? 120_000,
      this.options.resourceLimits,
      this.stopping.signal,
    ).then(
      ({ worker, ready }) => {
        this.laneLoading = null;
        if (!this.laneWanted || this.closed || ready.id !== this.id || this.lane)
          return worker.terminate().then(() => this.dispatch());
        else {
          this.lane = new ThreadSlot(
            worker,
            this.dims,
            this.slotEvents,
            this.options.batchTimeoutMs ?? 120_000,
          );
          // The build's workers give way to the lane (and the main thread) when both want a core.
          if (LOWER_BUILD_PRIORITY) for (const slot of this.slots) slot.lowerPriority?.();
          this.dispatch();
        }
      },
      () => {
        this.laneLoading = null;
        this.dispatch();
      },
    );
    await this.laneLoading;
  }

  /** Embeds texts; a single query goes through {@link embedQuery} (priority, cache). */
  async embed(texts: string[], kind: EmbedKind = 'passage'): Promise<Float32Array[]> {
    if (kind === 'query' && texts.length === 1) return [await this.embedQuery(texts[0])];
    // Queries are someone waiting: ahead of indexing batches.
    return this.embedAll(texts, { kind, urgent: kind === 'query' });
  }

  /**
   * Embeds many texts across the workers, in batches of similar length, and returns the vectors in the
   * order of `texts`. Rejects when a batch fails, the signal aborts, or the pool closes.
   */
  embedAll(texts: string[], options: EmbedAllOptions = {}): Promise<Float32Array[]> {
    const kind = options.kind ?? 'passage';
    if (this.closed) return Promise.reject(new Error('embedding pool is closed'));
    if (texts.length === 0) return Promise.resolve([]);
    const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length || a - b);
    const groups: number[][] = [];
    let group: number[] = [];
    let chars = 0;
    const maxChars = Math.max(1, options.maxBatchChars ?? this.maxBatchChars);
    for (const i of order) {
      if (group.length > 0 && (group.length >= this.batchSize || chars + texts[i].length > maxChars)) {
        groups.push(group);
        group = [];
        chars = 0;
      }
      group.push(i);
      chars += texts[i].length;
    }
    groups.push(group);

    const out = new Array<Float32Array>(texts.length);
    const total = texts.length;
    let done = 0;
    const batches: Batch[] = [];
    const runs = groups.map(
      (g) =>
        new Promise<void>((resolve, reject) => {
          const batch: Batch = {
            texts: g.map((i) => texts[i]),
            kind,
            attempts: 0,
            settled: false,
            resolve: (vectors) => {
              g.forEach((i, j) => (out[i] = vectors[j]));
              options.onBatch?.(g, vectors);
              done += g.length;
              options.onProgress?.(done, total);
              resolve();
            },
            reject,
          };
          batches.push(batch);
        }),
    );
    const cancelAll = (err: Error) => {
      for (const b of batches) this.settle(b, (x) => x.reject(err));
    };
    const signal = options.signal;
    const onAbort = () => cancelAll(new Error('embedding aborted'));
    if (signal?.aborted) onAbort();
    else {
      signal?.addEventListener('abort', onAbort, { once: true });
      (options.urgent ? this.urgent : this.queue).push(...batches);
      this.dispatch();
    }
    return Promise.all(runs).then(
      () => {
        signal?.removeEventListener('abort', onAbort);
        return out;
      },
      (err: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        cancelAll(err instanceof Error ? err : new Error(String(err)));
        throw err;
      },
    );
  }

  /** One query's embedding: ahead of any queued batch, and from the LRU cache when the same query was embedded before. */
  embedQuery(text: string): Promise<Float32Array> {
    const cached = this.queryCache.get(text);
    if (cached) {
      this.hits++;
      this.queryCache.delete(text);
      this.queryCache.set(text, cached);
      return Promise.resolve(cached);
    }
    const pending = this.inflight.get(text);
    if (pending) {
      this.hits++;
      return pending;
    }
    if (this.closed) return Promise.reject(new Error('embedding pool is closed'));
    this.misses++;
    const p = new Promise<Float32Array>((resolve, reject) => {
      this.urgent.push({
        texts: [text],
        kind: 'query',
        attempts: 0,
        settled: false,
        resolve: ([v]) => {
          this.remember(text, v);
          resolve(v);
        },
        reject,
      });
      this.dispatch();
    }).finally(() => this.inflight.delete(text));
    this.inflight.set(text, p);
    return p;
  }

  /** Keeps a query's vector in the LRU cache. */
  private remember(text: string, v: Float32Array): void {
    if (this.queryCacheSize <= 0) return;
    this.queryCache.set(text, v);
    if (this.queryCache.size > this.queryCacheSize)
      this.queryCache.delete(this.queryCache.keys().next().value as string);
  }

  /** Stops the workers (a busy one at once: its batch is abandoned); queued work is rejected. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopping.abort();
    const err = new Error('embedding pool is closed');
    for (const b of [...this.urgent.splice(0), ...this.queue.splice(0)]) this.settle(b, (x) => x.reject(err));
    const slots = this.slots.splice(0);
    if (this.lane) slots.push(this.lane);
    this.lane = null;
    this.laneWanted = false;
    this.retiring.clear();
    for (const slot of slots) if (slot.current) this.settle(slot.current, (x) => x.reject(err));
    await Promise.all(slots.map((s) => s.stop().catch(() => undefined)));
  }

  private addThread(worker: Worker): void {
    this.slots.push(
      new ThreadSlot(worker, this.dims, this.slotEvents, this.options.batchTimeoutMs ?? 120_000),
    );
    this.dispatch();
  }

  /**
   * Ends the (idle) lane. When the build's workers were given a lower priority, the lane takes the place of
   * one of them, first in line (the worker that serves queries from now on, and the one `resize` keeps),
   * and that one leaves: a priority lowered cannot be raised again. Otherwise its worker stops.
   */
  private async endLane(): Promise<void> {
    const lane = this.lane;
    this.lane = null;
    if (!lane) return;
    const lowered = this.slots.filter((s) => s.lowered && !this.retiring.has(s));
    if (lowered.length === 0 || this.closed) {
      await lane.stop().catch(() => undefined);
      return;
    }
    this.slots.unshift(lane);
    const leaving = lowered[lowered.length - 1];
    if (leaving.current) this.retiring.add(leaving);
    else this.retire(leaving);
    this.dispatch();
  }

  /** Removes an idle slot from the pool and stops its worker. */
  private retire(slot: Slot): void {
    this.retiring.delete(slot);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    void slot.stop().catch(() => undefined);
  }

  private next(urgentOnly = false): Batch | undefined {
    for (const q of urgentOnly ? [this.urgent] : [this.urgent, this.queue]) {
      while (q.length > 0) {
        const b = q.shift() as Batch;
        if (!b.settled) return b;
      }
    }
    return undefined;
  }

  private dispatch(): void {
    if (this.closed) return;
    if (this.lane && !this.lane.current) {
      const batch = this.next(true);
      if (batch) this.lane.run(batch);
    }
    const hold = this.laneWanted && this.laneLoading !== null;
    for (const slot of this.slots) {
      if (slot.current || this.retiring.has(slot)) continue;
      const batch = this.next(hold);
      if (!batch) return;
      slot.run(batch);
    }
  }

  /** Resolves or rejects a batch once, unless it was settled (aborted, failed elsewhere, pool closed). */
  private settle(batch: Batch, fn: (b: Batch) => void): void {
    if (batch.settled) return;
    batch.settled = true;
    fn(batch);
  }

  private onDeath(slot: Slot, err: Error): void {
    if (slot === this.lane) {
      // Not replaced: its batch goes back ahead of the build's, the other workers take queries as before.
      this.lane = null;
      const batch = slot.current;
      if (batch && !batch.settled && ++batch.attempts < 2) this.urgent.unshift(batch);
      else if (batch)
        this.settle(batch, (b) => b.reject(new Error(`embedding failed twice, last: ${err.message}`)));
      this.dispatch();
      return;
    }
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const leaving = this.retiring.delete(slot);
    const batch = slot.current;
    slot.current = null;
    if (batch && !batch.settled) {
      batch.attempts++;
      if (batch.attempts < 2) this.queue.unshift(batch);
      else this.settle(batch, (b) => b.reject(new Error(`embedding failed twice, last: ${err.message}`)));
    }
    if (this.closed) return;
    if (!leaving && this.slots.length - this.retiring.size + this.spawning < this.target) this.respawn();
    else this.failIfNoWorkers();
    this.dispatch();
  }

  /** Replaces a dead worker (at most 3 times over the pool's life). */
  private respawn(): void {
    if (this.restarts >= 3) {
      this.failIfNoWorkers();
      return;
    }
    this.restarts++;
    this.spawning++;
    startThread(
      this.init,
      this.options.startTimeoutMs ?? 120_000,
      this.options.resourceLimits,
      this.stopping.signal,
    ).then(
      ({ worker, ready }) => {
        this.spawning--;
        if (this.closed || ready.id !== this.id) {
          void worker.terminate();
          this.respawn();
        } else this.addThread(worker);
      },
      () => {
        this.spawning--;
        this.respawn();
      },
    );
  }

  private failIfNoWorkers(): void {
    if (this.slots.length > 0 || this.spawning > 0 || this.closed) return;
    const err = new Error('all embedding workers exited');
    for (const b of [...this.urgent.splice(0), ...this.queue.splice(0)]) this.settle(b, (x) => x.reject(err));
  }
}
