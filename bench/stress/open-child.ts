/**
 * Opens the backlog at argv[2] in a process of its own (lexical, the persisted index in argv[3]), runs
 * a few searches and a get of every item, and prints one JSON line: open time, items, diagnostics by
 * code, peak RSS. Used by the hostile-files probe so each backlog's peak memory is its own.
 */
import { readFile } from 'node:fs/promises';
import { closeBacklog, openBacklog } from '../../src/service/open-backlog.js';

const started = performance.now();
const service = await openBacklog({ dir: process.argv[2], embeddings: 'none', cacheDir: process.argv[3] });
const openMs = performance.now() - started;
let searchMaxMs = 0;
for (const q of ['lorem', 'task', 'a', '"quoted phrase"', 'ünïcödé', 'TASK-0001']) {
  const t0 = performance.now();
  await service.searchUnified(q, { limit: 20 });
  searchMaxMs = Math.max(searchMaxMs, performance.now() - t0);
}
let got = 0;
for (const id of service.ids().slice(0, 2000)) if (service.get(id)) got++;
const byCode: Record<string, number> = {};
for (const d of service.diagnostics().files) byCode[d.code] = (byCode[d.code] ?? 0) + 1;
const items = service.size;
await closeBacklog(service);
const status = await readFile('/proc/self/status', 'utf8');
const peakMb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
process.stdout.write(`${JSON.stringify({ openMs, searchMaxMs, items, got, diagnostics: byCode, peakMb })}\n`);
