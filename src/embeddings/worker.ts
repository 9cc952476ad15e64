/**
 * Embedding worker: loads its own provider (models cannot cross threads), then embeds the batches the
 * pool sends. Messages are described in pool.ts.
 */
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { resolveEmbedder } from './resolve.js';
import type { WorkerInit, WorkerReply, WorkerRequest } from './pool.js';

/**
 * How much nicer than the rest of the process a worker that embeds a build runs while a query lane serves
 * the queries: relative, so that a process started with `nice -n 10` (benchmarks, a polite server) still
 * puts its build below its own main thread and lane (an absolute 10 would change nothing there).
 */
const BUILD_NICE = 10;

const port = parentPort;
if (!port) throw new Error('embeddings/worker.ts runs only as a worker thread');

const init = workerData as WorkerInit;
const { embedder, provider, warnings } = await resolveEmbedder(init.provider, init.options);
// A fresh worker's first runs cost 2-5x a later one (the bundled model: runs 2-5 take 25-65 ms of CPU
// against 10-20 from the 6th on, whatever the text); a lane warmed so is at full speed for its first query.
for (let i = 0; embedder && i < (init.warmup ?? 0); i++) await embedder.embed(['warm up'], 'query');
const reply = (msg: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(msg, transfer);
reply({
  type: 'ready',
  provider,
  id: embedder?.id ?? '',
  dims: embedder?.dims ?? 0,
  maxTokens: embedder?.maxTokens,
  warnings,
  ...(embedder?.first ? { first: embedder.first } : {}),
});

/** The bundled model's WebAssembly heap (TF.js keeps it in its WASM backend), or undefined. */
async function wasmBytes(): Promise<number | undefined> {
  if (provider !== 'bundled') return undefined;
  try {
    const core = (await import('@energetic-ai/core')) as unknown as {
      backend(): { wasm?: { HEAPU8?: Uint8Array } };
    };
    return core.backend().wasm?.HEAPU8?.buffer.byteLength;
  } catch {
    return undefined;
  }
}

/**
 * A full garbage collection of this worker's heap, through the inspector protocol (no --expose-gc needed).
 * After a bulk embedding the old generation holds tens of MB of garbage that V8 may not collect for a long
 * while in an idle worker. Does nothing where the inspector is not available.
 */
async function collectGarbage(): Promise<void> {
  try {
    const { Session } = await import('node:inspector');
    const session = new Session();
    session.connect();
    try {
      await new Promise<void>((resolve, reject) =>
        session.post('HeapProfiler.collectGarbage', (err) => (err ? reject(err) : resolve())),
      );
    } finally {
      session.disconnect();
    }
  } catch {
    // no inspector in this build of node: V8 collects in its own time
  }
}

port.on('message', async (msg: WorkerRequest) => {
  if (msg.type === 'memory') {
    if (msg.collect) await collectGarbage();
    const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    const wasm = await wasmBytes();
    reply({
      type: 'memory',
      memory: { heapUsed, heapTotal, external, arrayBuffers, ...(wasm ? { wasm } : {}) },
    });
    return;
  }
  if (msg.type === 'lower-priority') {
    // On Linux a thread has a nice value of its own, and setpriority(pid 0) sets the calling thread's:
    // this worker only (elsewhere it would be the whole process, so the pool asks on Linux only).
    try {
      setPriority(Math.min(19, getPriority() + BUILD_NICE));
    } catch {
      // not allowed here: the worker runs as before
    }
    return;
  }
  if (msg.type === 'close') {
    await embedder?.close?.().catch(() => undefined);
    port.close();
    return;
  }
  if (!embedder) {
    reply({ type: 'error', job: msg.job, message: 'no embedder loaded in this worker' });
    return;
  }
  try {
    const vectors = await embedder.embed(msg.texts, msg.kind);
    const d = embedder.dims;
    const data = new Float32Array(vectors.length * d);
    vectors.forEach((v, i) => data.set(v, i * d));
    reply({ type: 'result', job: msg.job, data }, [data.buffer]);
  } catch (err) {
    reply({ type: 'error', job: msg.job, message: err instanceof Error ? err.message : String(err) });
  }
});
