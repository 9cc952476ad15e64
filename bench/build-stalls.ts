/**
 * The main thread's long tasks while the embeddings build (issue #23: hybrid answers during the initial
 * embedding at p95 <= 50 ms). Opens a fresh copy of the Backlog.md folder (no `.cache/`) as a server does
 * (`embeddings: 'bundled', embedMissing: 'background'`), waits for ready, then for `--seconds` S probes the
 * event loop with a 2 ms timer and lists every stall (a timer late by more than `--stall` ms), with what
 * ran meanwhile: the build's synchronous steps on this thread (timed by wrapping them) and the garbage
 * collections (PerformanceObserver 'gc'). One process, one code tree (`--src`: another checkout's src/, to
 * compare in alternating runs). Prints one JSON line.
 *
 *   nice -n 10 npx tsx bench/build-stalls.ts --seconds 60
 *   nice -n 10 npx tsx bench/build-stalls.ts --seconds 60 --src /tmp/base/src
 */
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve, sep } from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './common.js';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'backlog-md') },
    src: { type: 'string', default: join(ROOT, 'src') },
    seconds: { type: 'string', default: '60' },
    stall: { type: 'string', default: '8' },
    /** Seconds after ready before the probe starts (the query lane loads meanwhile). */
    delay: { type: 'string', default: '5' },
  },
});
const src = resolve(args.src);
const load = <T>(p: string) => import(pathToFileURL(join(src, p)).href) as Promise<T>;

type Fn = (...a: unknown[]) => unknown;
/** Synchronous steps timed: [name, start, end] (ms, performance.now()). */
const steps: [string, number, number][] = [];
function wrap(proto: Record<string, unknown>, name: string, label: string): void {
  const orig = proto[name] as Fn | undefined;
  if (typeof orig !== 'function') return;
  proto[name] = function (this: unknown, ...a: unknown[]) {
    const s = performance.now();
    try {
      return orig.apply(this, a);
    } finally {
      steps.push([label, s, performance.now()]);
    }
  };
}

const { VectorIndex } = await load<{ VectorIndex: { prototype: Record<string, unknown> } }>(
  'embeddings/vector-index.ts',
);
const { EmbeddingCache } = await load<{ EmbeddingCache: { prototype: Record<string, unknown> } }>(
  'embeddings/cache.ts',
);
const { SemanticIndex } = await load<{ SemanticIndex: { prototype: Record<string, unknown> } }>(
  'embeddings/semantic-index.ts',
);
wrap(VectorIndex.prototype, 'upsert', 'index.upsert');
wrap(VectorIndex.prototype, 'vectors', 'index.vectors');
wrap(EmbeddingCache.prototype, 'put', 'cache.put');
wrap(EmbeddingCache.prototype, 'get', 'cache.get');
wrap(EmbeddingCache.prototype, 'retain', 'cache.retain');
// write() is async: this times its synchronous part (building the file's bytes, until the first await).
wrap(EmbeddingCache.prototype, 'write', 'cache.write(sync part)');
wrap(SemanticIndex.prototype, 'pruneCache', 'pruneCache');
wrap(SemanticIndex.prototype, 'incomplete', 'incomplete()');

const { openBacklog, closeBacklog } =
  await load<typeof import('../src/service/open-backlog.js')>('service/open-backlog.ts');

const base = await mkdtemp(join(os.tmpdir(), 'bs-stalls-'));
const dir = join(base, 'backlog-md');
await cp(resolve(args.dir), dir, { recursive: true, filter: (s) => !s.split(sep).includes('.cache') });

const gcs: [string, number, number][] = [];
const GC_KIND: Record<number, string> = {
  1: 'gc.scavenge',
  2: 'gc.mark-compact',
  4: 'gc.incremental',
  8: 'gc.weak',
};
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
    gcs.push([GC_KIND[kind] ?? `gc.${kind}`, e.startTime, e.startTime + e.duration]);
  }
});
obs.observe({ entryTypes: ['gc'] });

const t0 = performance.now();
const svc = await openBacklog({ dir, embeddings: 'bundled', embedMissing: 'background' });
while (svc.semanticStatus().state !== 'ready') await new Promise((r) => setTimeout(r, 50));
const readyMs = performance.now() - t0;
await new Promise((r) => setTimeout(r, Number(args.delay) * 1000));
const doneBefore = svc.semanticStatus().done;
steps.length = 0;
gcs.length = 0;

/** CPU ms of the main thread alone (Linux: its task's utime + stime, in clock ticks of 10 ms). */
function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

const stallMs = Number(args.stall);
const stalls: { at: number; late: number; what: Record<string, number> }[] = [];
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
const cpu0 = process.cpuUsage();
const thread0 = mainThreadCpuMs();
const start = performance.now();
const end = start + Number(args.seconds) * 1000;
await new Promise<void>((done) => {
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    const late = now - last - 2;
    if (late > stallMs) stalls.push({ at: last, late, what: {} });
    last = now;
    if (now < end) setTimeout(tick, 2);
    else done();
  };
  setTimeout(tick, 2);
});
h.disable();
const cpu = process.cpuUsage(cpu0);
const thread1 = mainThreadCpuMs();
const doneAfter = svc.semanticStatus().done;

// What ran inside each stall (ms of each step overlapping it).
for (const s of stalls) {
  const lo = s.at;
  const hi = s.at + s.late + 2;
  for (const [name, a, b] of [...steps, ...gcs]) {
    const overlap = Math.min(b, hi) - Math.max(a, lo);
    if (overlap > 0.05) s.what[name] = Number(((s.what[name] ?? 0) + overlap).toFixed(1));
  }
}
const totals: Record<string, { n: number; ms: number; max: number }> = {};
for (const [name, a, b] of [...steps, ...gcs]) {
  const t = (totals[name] ??= { n: 0, ms: 0, max: 0 });
  t.n++;
  t.ms += b - a;
  t.max = Math.max(t.max, b - a);
}
for (const t of Object.values(totals)) {
  t.ms = Number(t.ms.toFixed(1));
  t.max = Number(t.max.toFixed(1));
}
const lates = stalls.map((s) => s.late).sort((a, b) => b - a);
await closeBacklog(svc);
await rm(base, { recursive: true, force: true });
process.stdout.write(
  JSON.stringify({
    src,
    ready_s: Number((readyMs / 1000).toFixed(1)),
    seconds: Number(args.seconds),
    chunks_embedded_meanwhile: doneAfter - doneBefore,
    stalls_over_ms: stallMs,
    stalls: stalls.length,
    stall_ms_total: Number(lates.reduce((a, b) => a + b, 0).toFixed(1)),
    stall_top: lates.slice(0, 10).map((x) => Number(x.toFixed(1))),
    loop_delay_p99_ms: Number((h.percentile(99) / 1e6).toFixed(1)),
    loop_delay_max_ms: Number((h.max / 1e6).toFixed(1)),
    main_thread_cpu_ms: thread0 === null || thread1 === null ? null : thread1 - thread0,
    process_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    steps: totals,
    worst: [...stalls]
      .sort((a, b) => b.late - a.late)
      .slice(0, 12)
      .map((s) => ({
        at_s: Number(((s.at - start) / 1000).toFixed(2)),
        late: Number(s.late.toFixed(1)),
        ...s.what,
      })),
    load: os.loadavg().map((x) => Number(x.toFixed(2))),
  }) + '\n',
);
process.exit(0);
