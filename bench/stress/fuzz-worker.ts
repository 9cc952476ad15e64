/** Samples the library fuzz's cases in a thread of its own (see fuzz-cases.ts for why). */
import { parentPort } from 'node:worker_threads';
import { pack, sampleCases } from './fuzz-cases.js';

parentPort!.on('message', ({ first, count }: { first: number; count: number }) => {
  parentPort!.postMessage(pack(sampleCases(first, count)));
});
