/**
 * The first minute of a long-lived process (issue #23, item 5): lexical `searchUnified` on a copy of the
 * Backlog.md folder, the first N queries right after `openBacklog` resolves (while the background
 * preparation of snippet bodies and proximity filters runs) against the same N queries once it has
 * settled (`warmedUp()`), in the same process. Each query runs as a server's request does: a macrotask of
 * its own (`setImmediate` between queries), so background slices run between them. Each round is a fresh
 * process (from the persisted index in the copy's `.cache/`, as a restarted server opens).
 *
 *   npm run bench:warmup -- [--rounds 5 --queries 350 --limit 20 --gap-ms 0 --dir ../shared/eval/backlog-md]
 *
 * Prints one JSON object: each round's first / settled p50 and p95, in wall time and in the process's CPU
 * time (ms; CPU does not count waiting for a core on a shared machine), their ratios, the first pass's
 * slowest queries (`index:cpu ms`), and the medians. `first_queued` / `settled_queued`: p95 and max of each
 * query's time from being queued to its answer, which also counts its wait for the background slices queued
 * before it (the figures above start when the query does; a request arriving mid-slice waits). Diagnosis options: `--settle-first` (wait for the
 * background preparation before the first pass too), `--prewarm N` (N other searches before it).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rng, titleQueries } from './scale-corpus.js';
import { percentile } from '../src/eval/metrics.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    dir: {
      type: 'string',
      default: process.env.BACKLOG_EVAL_DIR
        ? join(process.env.BACKLOG_EVAL_DIR, 'backlog-md')
        : join(ROOT, '..', 'shared', 'eval', 'backlog-md'),
    },
    queries: { type: 'string', default: '350' },
    limit: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    /** Internal: run one round on this copy and print its JSON. */
    child: { type: 'string' },
    /** Open from scratch (no persisted index) instead of from `.cache/`. */
    cold: { type: 'boolean', default: false },
    /** Diagnosis: wait for the background preparation before the first pass too (JIT cold, data warm). */
    'settle-first': { type: 'boolean', default: false },
    prewarm: { type: 'string', default: '0' },
    /** Milliseconds between the open and the first query (a client connecting), default 0. */
    'gap-ms': { type: 'string', default: '0' },
  },
});
const N = Number(args.queries);
const limit = Number(args.limit);
const round2 = (x: number) => Number(x.toFixed(3));

async function child(dir: string): Promise<void> {
  const { closeBacklog, openBacklog } = await import('../src/service/open-backlog.js');
  const cacheDir = args.cold ? false : undefined;
  const service = await openBacklog({ dir, cacheDir, embeddings: 'none', watch: false });
  const items = service.ids().map((id) => service.get(id));
  const queries = titleQueries(
    items.map((i) => i.title),
    N,
  );
  const pass = async () => {
    const times: number[] = [];
    const cpu: number[] = [];
    const queued: number[] = [];
    for (const q of queries) {
      const asked = performance.now();
      // A request of its own: what the event loop has queued (background slices) runs first.
      await new Promise((resolve) => setImmediate(resolve));
      const c = process.cpuUsage();
      const t = performance.now();
      await service.searchUnified(q, { limit });
      times.push(performance.now() - t);
      const d = process.cpuUsage(c);
      cpu.push((d.user + d.system) / 1000);
      queued.push(performance.now() - asked);
    }
    return { times, cpu, queued };
  };
  if (args['settle-first']) await service.index.warmedUp();
  await new Promise((resolve) => setTimeout(resolve, Number(args['gap-ms'])));
  {
    const r2 = rng(99);
    for (let i = 0; i < Number(args.prewarm); i++) {
      const t = items[Math.floor(r2() * items.length)].title.split(/\s+/).slice(0, 3).join(' ');
      await new Promise((resolve) => setImmediate(resolve));
      await service.searchUnified(t, { limit });
    }
  }
  const t0 = performance.now();
  const first = await pass();
  const firstMs = performance.now() - t0;
  const w0 = performance.now();
  await service.index.warmedUp();
  const waited = performance.now() - w0;
  const settled = await pass();
  await closeBacklog(service);
  const stats = (xs: number[]) => ({ p50: round2(percentile(xs, 50)), p95: round2(percentile(xs, 95)) });
  process.stdout.write(
    JSON.stringify({
      first: stats(first.times),
      settled: stats(settled.times),
      ratio_p95: round2(percentile(first.times, 95) / percentile(settled.times, 95)),
      first_cpu: stats(first.cpu),
      settled_cpu: stats(settled.cpu),
      ratio_cpu_p95: round2(percentile(first.cpu, 95) / percentile(settled.cpu, 95)),
      first_pass_ms: Math.round(firstMs),
      slowest_first: first.cpu
        .map((c, i) => [i, c] as const)
        .sort((a, b) => b[1] - a[1])
        .slice(0, Math.ceil(N / 20))
        .map(([i, c]) => `${i}:${c.toFixed(1)}`)
        .join(' '),
      waited_after_first_ms: Math.round(waited),
      first_queued: { p95: round2(percentile(first.queued, 95)), max: round2(Math.max(...first.queued)) },
      settled_queued: {
        p95: round2(percentile(settled.queued, 95)),
        max: round2(Math.max(...settled.queued)),
      },
    }) + '\n',
  );
}

if (args.child) await child(args.child);
else {
  const tmp = mkdtempSync(join(tmpdir(), 'warmup-'));
  const copy = join(tmp, 'backlog');
  cpSync(args.dir, copy, { recursive: true });
  rmSync(join(copy, '.cache'), { recursive: true, force: true });
  const self = fileURLToPath(import.meta.url);
  const run = (extra: string[]) =>
    execFileSync(process.execPath, ['--import', 'tsx', self, '--child', copy, ...extra], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  const pass = ['--queries', String(N), '--limit', String(limit), ...(args.cold ? ['--cold'] : [])];
  if (args['settle-first']) pass.push('--settle-first');
  pass.push('--prewarm', args.prewarm, '--gap-ms', args['gap-ms']);
  run(pass); // writes the copy's .cache/ (not counted)
  const rounds = [];
  for (let r = 0; r < Number(args.rounds); r++) rounds.push(JSON.parse(run(pass)));
  rmSync(tmp, { recursive: true, force: true });
  const med = (xs: number[]) => round2(percentile(xs, 50));
  process.stdout.write(
    JSON.stringify(
      {
        queries: N,
        limit,
        rounds,
        median: {
          first_p95: med(rounds.map((r) => r.first.p95)),
          settled_p95: med(rounds.map((r) => r.settled.p95)),
          ratio_p95: med(rounds.map((r) => r.ratio_p95)),
          first_cpu_p95: med(rounds.map((r) => r.first_cpu.p95)),
          settled_cpu_p95: med(rounds.map((r) => r.settled_cpu.p95)),
          ratio_cpu_p95: med(rounds.map((r) => r.ratio_cpu_p95)),
        },
      },
      null,
      2,
    ) + '\n',
  );
}
