/**
 * Cost of a workspace (issue #22, docs/workspace.md): 10 copies of the Backlog.md folder (697 files
 * each) opened as 10 backlogs in one process, against the same 6,970 files as one backlog (the ten copies
 * side by side under one root). Both are read in the native format, so that both index the same text.
 *
 *   nice node --expose-gc --import tsx bench/workspace.ts [--copies 10] [--rounds 3] [--phase measure] [--repeat 3]
 *
 * Each measurement runs in a fresh process (`--phase ws|one`): open from the persisted indexes (built
 * once by `--phase build` or the first run; `--phase measure` skips that), wait for the background work, RSS after a GC, then the dev set's 84 query
 * texts, lexical (`mode: bm25`), limit 10: across all projects and within one (`project`), p50/p95 over
 * `--rounds` passes after a warm-up pass (the same texts spelled backwards) and a first pass, reported
 * apart (the tree walks each vocabulary remembers are not remembered yet in it). Prints a JSON object and a markdown table.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { percentile } from '../src/eval/metrics.js';
import { closeBacklog, openBacklog } from '../src/index.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import { backlogSourceDir, loadDevset } from './devset/corpus.js';

const HERE = fileURLToPath(import.meta.url);
const { values: args } = parseArgs({
  options: {
    phase: { type: 'string', default: 'all' },
    copies: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    base: { type: 'string', default: join(tmpdir(), 'backlog-search-ws-bench') },
    repeat: { type: 'string', default: '3' },
  },
});
const copies = Number(args.copies);
const base = args.base;
const projectDir = (i: number) => join(base, 'ws', `p${i}`, 'backlog');
const oneDir = join(base, 'one', 'backlog');
const common = { embeddings: 'none', format: 'native', watch: false } as const;
const log = (s: string) => process.stderr.write(`[workspace bench] ${s}\n`);
const mb = (b: number) => Math.round(b / 2 ** 20);

async function prepare(): Promise<void> {
  const source = backlogSourceDir();
  const skip = (src: string) => !src.includes('/.cache');
  for (let i = 0; i < copies; i++)
    if (!(await stat(projectDir(i)).catch(() => null))) {
      await cp(source, projectDir(i), { recursive: true, filter: skip });
      await cp(source, join(oneDir, `p${i}`), { recursive: true, filter: skip });
    }
  // Persisted indexes: built once, then every measured start reads them.
  const ws = await openWorkspace({
    ...common,
    backlogs: Array.from({ length: copies }, (_, i) => ({ dir: projectDir(i) })),
  });
  await closeWorkspace(ws);
  const one = await openBacklog({ ...common, dir: oneDir });
  await closeBacklog(one);
  log(`prepared ${copies} copies in ${base}`);
}

/** Each word spelled backwards: the same shapes of query, words no backlog has (typo and prefix walks). */
const backwards = (q: string) => q.replace(/\p{L}+/gu, (w) => [...w].reverse().join(''));

/**
 * p50/p95 of `rounds` passes over the texts. Each vocabulary remembers its tree walks (prefixes, typos;
 * src/search/vocabulary.ts), so a pass after the first flatters: `first` is the first pass over the texts,
 * timed after a warm-up pass over the same texts spelled backwards (the code warmed, the texts' own walks
 * not remembered yet); `rounds` passes follow it.
 */
async function measureQueries(run: (q: string) => Promise<unknown>, texts: string[], rounds: number) {
  for (const q of texts) await run(backwards(q));
  const pass = async () => {
    const times: number[] = [];
    for (const q of texts) {
      const t = performance.now();
      await run(q);
      times.push(performance.now() - t);
    }
    return times;
  };
  const stats = (times: number[]) => ({
    p50_ms: +percentile(times, 50).toFixed(3),
    p95_ms: +percentile(times, 95).toFixed(3),
    n: times.length,
  });
  const first = await pass();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) times.push(...(await pass()));
  return { ...stats(times), first: stats(first) };
}

function rssAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
}

async function phase(which: 'ws' | 'one'): Promise<Record<string, unknown>> {
  const texts = (await loadDevset()).queries.map((q) => q.text);
  const rounds = Number(args.rounds);
  const rssBefore = rssAfterGc();
  const started = performance.now();
  if (which === 'ws') {
    const ws = await openWorkspace({
      ...common,
      // The copies stand for 10 different backlogs: each copy's result is its own (the default `once`
      // would show the ten copies of a document as one, a different answer to measure).
      versions: 'apart',
      backlogs: Array.from({ length: copies }, (_, i) => ({ dir: projectDir(i) })),
    });
    const open_ms = performance.now() - started;
    const fromCache = ws.projects.every((p) => p.service.cacheStatus().used);
    const changed = ws.projects.reduce((n, p) => n + p.service.cacheStatus().changed, 0);
    for (const p of ws.projects) await p.service.index.warmedUp();
    const ready_ms = Math.round(performance.now() - started);
    const rss = rssAfterGc();
    const all = await measureQueries((q) => ws.searchUnified(q, { mode: 'bm25', limit: 10 }), texts, rounds);
    const one = await measureQueries(
      (q) => ws.searchUnified(q, { mode: 'bm25', limit: 10, project: `p${Math.min(3, copies - 1)}` }),
      texts,
      rounds,
    );
    const items = ws.size;
    await closeWorkspace(ws);
    return {
      open_ms: Math.round(open_ms),
      ready_ms,
      from_cache: fromCache,
      changed,
      items,
      rss_mb: mb(rss),
      rss_before_mb: mb(rssBefore),
      all,
      one,
    };
  }
  const service = await openBacklog({ ...common, dir: oneDir });
  const open_ms = performance.now() - started;
  await service.index.warmedUp();
  const ready_ms = Math.round(performance.now() - started);
  const rss = rssAfterGc();
  const all = await measureQueries(
    (q) => service.searchUnified(q, { mode: 'bm25', limit: 10 }),
    texts,
    rounds,
  );
  const res = {
    open_ms: Math.round(open_ms),
    ready_ms,
    from_cache: service.cacheStatus().used,
    items: service.size,
    rss_mb: mb(rss),
    rss_before_mb: mb(rssBefore),
    all,
  };
  await closeBacklog(service);
  return res;
}

function child(which: string): Record<string, unknown> {
  const out = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      HERE,
      '--phase',
      which,
      '--copies',
      String(copies),
      '--rounds',
      String(args.rounds),
      '--base',
      base,
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 24,
    },
  );
  if (out.status !== 0) throw new Error(`phase ${which} failed (${out.status})`);
  return JSON.parse(out.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

if (args.phase === 'ws' || args.phase === 'one') {
  process.stdout.write(`${JSON.stringify(await phase(args.phase))}\n`);
  process.exit(0);
}
await mkdir(base, { recursive: true });
if (args.phase !== 'measure') await prepare();
if (args.phase === 'build') process.exit(0);
type Run = {
  open_ms: number;
  ready_ms: number;
  rss_mb: number;
  items: number;
  all: { p50_ms: number; p95_ms: number; first?: { p50_ms: number; p95_ms: number } };
  one?: { p50_ms: number; p95_ms: number };
};
// The machine is shared: one and ws alternate, and each figure is the best of --repeat runs (the least
// disturbed), RSS the median.
const runs: { one: Run[]; ws: Run[] } = { one: [], ws: [] };
for (let i = 0; i < Number(args.repeat); i++) {
  runs.one.push(child('one') as unknown as Run);
  runs.ws.push(child('ws') as unknown as Run);
  log(`run ${i + 1}: one ${JSON.stringify(runs.one.at(-1))}\n  ws ${JSON.stringify(runs.ws.at(-1))}`);
}
const best = (list: Run[], pick: (r: Run) => number) => Math.min(...list.map(pick));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = (list: Run[]) => ({
  open_ms: best(list, (r) => r.open_ms),
  ready_ms: best(list, (r) => r.ready_ms),
  rss_mb: median(list.map((r) => r.rss_mb)),
  items: list[0].items,
  all_p50: best(list, (r) => r.all.p50_ms),
  all_p95: best(list, (r) => r.all.p95_ms),
  first_p50: best(list, (r) => r.all.first?.p50_ms ?? NaN),
  first_p95: best(list, (r) => r.all.first?.p95_ms ?? NaN),
  one_p50: list[0].one ? best(list, (r) => r.one!.p50_ms) : null,
  one_p95: list[0].one ? best(list, (r) => r.one!.p95_ms) : null,
});
const one = summary(runs.one);
const ws = summary(runs.ws);
const result = { date: new Date().toISOString(), copies, repeat: Number(args.repeat), one, ws, runs };
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(
  [
    '',
    '| | open from caches | and warmed up | RSS after open | searchUnified p50 / p95, all | first pass (walks not remembered) | within one project |',
    '|---|---|---|---|---|---|---|',
    `| ${copies} backlogs, ${ws.items} items | ${ws.open_ms} ms | ${ws.ready_ms} ms | ${ws.rss_mb} MB | ${ws.all_p50} / ${ws.all_p95} ms | ${ws.first_p50} / ${ws.first_p95} ms | ${ws.one_p50} / ${ws.one_p95} ms |`,
    `| one backlog, ${one.items} items | ${one.open_ms} ms | ${one.ready_ms} ms | ${one.rss_mb} MB | ${one.all_p50} / ${one.all_p95} ms | ${one.first_p50} / ${one.first_p95} ms | |`,
    `| ratio | ${(ws.open_ms / one.open_ms).toFixed(2)} | ${(ws.ready_ms / one.ready_ms).toFixed(2)} | ${(ws.rss_mb / one.rss_mb).toFixed(2)} | ${(ws.all_p50 / one.all_p50).toFixed(2)} / ${(ws.all_p95 / one.all_p95).toFixed(2)} | ${(ws.first_p50 / one.first_p50).toFixed(2)} / ${(ws.first_p95 / one.first_p95).toFixed(2)} | |`,
    '',
  ].join('\n'),
);
if (process.argv.includes('--clean')) await rm(base, { recursive: true, force: true });
