/**
 * The thread side of the embedding pool: the messages between the pool and a worker (worker.ts), and a
 * slot that runs one batch at a time, in a worker thread or (with 0 workers) in the calling thread.
 * EmbeddingPool (pool.ts) schedules batches over slots, grows, shrinks and replaces them.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ResourceLimits, Worker } from 'node:worker_threads';
import type { Embedder, EmbedderOptions, EmbeddingProvider, EmbedKind, ResolvedProvider } from './types.js';

/**
 * A worker's default V8 limits: a young generation of 8 MB instead of V8's default (up to 3 x 16 MB),
 * which a worker fills with short-lived garbage (tokens, tensors' bookkeeping) and then keeps resident:
 * about 20 MB less per bundled worker after queries, for a few per cent of embedding speed.
 */
export const DEFAULT_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8 };

/** What a worker is started with (structured-cloned: plain data only). */
export interface WorkerInit {
  provider: EmbeddingProvider;
  options: Omit<EmbedderOptions, 'loaders'>;
  /** Runs of a short text after the model loads, before `ready` (the query lane: see EmbeddingPool.queryLane). */
  warmup?: number;
}
export type WorkerRequest =
  | { type: 'embed'; job: number; texts: string[]; kind: EmbedKind }
  | { type: 'memory'; collect?: boolean }
  /** Lower this worker thread's scheduling priority (Linux: its nice value; see EmbeddingPool.queryLane). */
  | { type: 'lower-priority' }
  | { type: 'close' };

/** One worker's own memory, in bytes (its V8 heap, and the model's WebAssembly heap when known). */
export interface WorkerMemory {
  heapUsed: number;
  heapTotal: number;
  /** Memory outside the V8 heap that V8 knows of (ArrayBuffers, WebAssembly memories). */
  external: number;
  arrayBuffers: number;
  /** The bundled model's WebAssembly heap (TF.js WASM backend); absent for other providers. */
  wasm?: number;
}
export type WorkerReply =
  | {
      type: 'ready';
      provider: ResolvedProvider;
      id: string;
      dims: number;
      maxTokens: number | undefined;
      warnings: string[];
      first?: { text: string; vector: Float32Array };
    }
  | { type: 'result'; job: number; data: Float32Array }
  | { type: 'memory'; memory: WorkerMemory }
  | { type: 'error'; job: number; message: string };

export interface Batch {
  texts: string[];
  kind: EmbedKind;
  attempts: number;
  settled: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(err: Error): void;
}

export interface Slot {
  current: Batch | null;
  run(batch: Batch): void;
  stop(): Promise<void>;
  memory?(collect: boolean): Promise<WorkerMemory | undefined>;
  /** Asks the worker to run at a lower priority from now on (it cannot be raised again). */
  lowerPriority?(): void;
  /** Whether lowerPriority was asked. */
  readonly lowered?: boolean;
}

export interface SlotEvents {
  finished(slot: Slot, batch: Batch, result: Float32Array[] | Error): void;
  died(slot: Slot, err: Error): void;
}

export interface Ready {
  provider: ResolvedProvider;
  id: string;
  dims: number;
  maxTokens: number | undefined;
  warnings: string[];
  /** The first query (`EmbedderOptions.firstQuery`) and its vector, when the worker embedded it while loading. */
  first?: { text: string; vector: Float32Array };
}

/** Where tsx's ESM API lives, to run worker.ts from source (tests, tsx) where there is no compiled worker.js. */
function tsxApiUrl(): string {
  try {
    if (typeof import.meta.resolve === 'function') return import.meta.resolve('tsx/esm/api');
  } catch {
    // fall through
  }
  const require = createRequire(import.meta.url);
  return pathToFileURL(join(dirname(require.resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs'))
    .href;
}

/** Starts worker.js next to this file (compiled), or worker.ts through tsx when running from TypeScript source. */
export function spawnWorker(init: WorkerInit, resourceLimits: ResourceLimits | undefined): Worker {
  // Required here, not imported with the module: a process that never embeds (get, list, a lexical
  // search) does not load node:worker_threads (~10 ms of a start).
  const { Worker } = createRequire(import.meta.url)(
    'node:worker_threads',
  ) as typeof import('node:worker_threads');
  const here = import.meta.url;
  const options = { workerData: init, resourceLimits: resourceLimits ?? DEFAULT_WORKER_LIMITS };
  if (/\.[cm]?ts$/.test(new URL(here).pathname)) {
    const worker = new URL('./worker.ts', here).href;
    const code = `import(${JSON.stringify(tsxApiUrl())}).then((m) => { m.register(); return import(${JSON.stringify(worker)}); })`;
    return new Worker(code, { eval: true, ...options });
  }
  return new Worker(new URL('./worker.js', here), options);
}

export class ThreadSlot implements Slot {
  current: Batch | null = null;
  lowered = false;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly memoryReplies: ((m: WorkerMemory | undefined) => void)[] = [];

  constructor(
    readonly worker: Worker,
    private readonly dims: number,
    private readonly events: SlotEvents,
    private readonly batchTimeoutMs: number,
  ) {
    worker.on('message', (msg: WorkerReply) => {
      if (msg.type === 'memory') {
        this.memoryReplies.shift()?.(msg.memory);
        if (this.memoryReplies.length === 0 && !this.current) this.worker.unref();
        return;
      }
      const batch = this.current;
      if (msg.type === 'ready' || !batch) return;
      clearTimeout(this.timer);
      this.current = null;
      this.worker.unref();
      if (msg.type === 'result') {
        const vectors: Float32Array[] = [];
        for (let i = 0; i < batch.texts.length; i++)
          vectors.push(msg.data.subarray(i * this.dims, (i + 1) * this.dims));
        this.events.finished(this, batch, vectors);
      } else this.events.finished(this, batch, new Error(msg.message));
    });
    const die = (err: Error) => {
      clearTimeout(this.timer);
      for (const reply of this.memoryReplies.splice(0)) reply(undefined);
      if (this.stopping) return;
      this.stopping = true;
      this.events.died(this, err);
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`embedding worker exited with code ${code}`)));
    worker.unref();
  }

  run(batch: Batch): void {
    this.current = batch;
    this.worker.ref();
    this.timer = setTimeout(() => void this.worker.terminate(), this.batchTimeoutMs);
    this.timer.unref();
    const msg: WorkerRequest = { type: 'embed', job: 0, texts: batch.texts, kind: batch.kind };
    this.worker.postMessage(msg);
  }

  lowerPriority(): void {
    if (this.lowered || this.stopping) return;
    this.lowered = true;
    this.worker.postMessage({ type: 'lower-priority' } satisfies WorkerRequest);
  }

  /** The worker's own memory (after a full garbage collection with `collect`), or undefined when it has exited. */
  memory(collect: boolean): Promise<WorkerMemory | undefined> {
    if (this.stopping) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.memoryReplies.push(resolve);
      this.worker.ref();
      this.worker.postMessage({ type: 'memory', collect } satisfies WorkerRequest);
    });
  }

  /**
   * Asks the worker to close its model and exit; a busy one is terminated at once (it would read the
   * message only after its batch: seconds, more when it runs niced on a busy machine).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    if (this.current) void this.worker.terminate();
    else this.worker.postMessage({ type: 'close' } satisfies WorkerRequest);
    const timer = setTimeout(() => void this.worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }
}

export class InlineSlot implements Slot {
  current: Batch | null = null;
  constructor(
    private readonly embedder: Embedder,
    private readonly events: SlotEvents,
  ) {}

  run(batch: Batch): void {
    this.current = batch;
    this.embedder.embed(batch.texts, batch.kind).then(
      (v) => {
        this.current = null;
        this.events.finished(this, batch, v);
      },
      (err: unknown) => {
        this.current = null;
        this.events.finished(this, batch, err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  async stop(): Promise<void> {
    await this.embedder.close?.();
  }
}

/** Starts one worker and waits until its model is loaded (or it fails, or the time is up). */
export function startThread(
  init: WorkerInit,
  timeoutMs: number,
  limits?: ResourceLimits,
  /** Stops the load: the worker is terminated and the promise rejects (a process done before it needed the model). */
  signal?: AbortSignal,
): Promise<{ worker: Worker; ready: Ready }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('embedding worker not started: stopped'));
      return;
    }
    let worker: Worker;
    try {
      worker = spawnWorker(init, limits);
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const detach = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', fail);
      worker.off('exit', onExit);
    };
    const fail = (err: Error) => {
      detach();
      void worker.terminate();
      reject(err);
    };
    const onMessage = (msg: WorkerReply) => {
      if (msg.type !== 'ready') return;
      detach();
      resolve({ worker, ready: msg });
    };
    const onExit = (code: number) =>
      fail(new Error(`embedding worker exited with code ${code} while loading`));
    const onAbort = () => fail(new Error('embedding worker stopped while loading'));
    const timer = setTimeout(
      () => fail(new Error(`embedding worker did not load its model within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage);
    worker.on('error', fail);
    worker.on('exit', onExit);
  });
}
