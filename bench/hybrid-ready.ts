/**
 * Time to the first hybrid answer (issue #11, build item 5): from an empty `.cache/` to a service that
 * answers in hybrid mode, on the Backlog.md folder, with the bundled model. Each run is a process of its
 * own (compiled JavaScript, plain node, as the package runs) on a fresh copy of the folder (the shared
 * folder is never written), opened as a server opens it: `openBacklog({ embeddings: 'bundled',
 * embedMissing: 'background' })`. The old behaviour runs in the same session from the code at
 * `--baseline-ref` (default: the commit this work started from), compiled the same way, the variants
 * taking turns so that each repeat sees the same load.
 *
 *   npm run bench:hybrid-ready                          # 3 repeats of every variant (about an hour)
 *   npm run bench:hybrid-ready -- --repeat 1 --variants before,titles-first
 *   npm run bench:hybrid-ready -- --quality             # adds the dev set at ready and after the build
 *
 * Per run: hybrid-ready (ms from the `openBacklog` call until `semanticStatus().state` is `ready`, and from
 * the process's start), the full build (until `semanticReady()`: every chunk embedded), peak RSS of the
 * process (sampled every 50 ms: main thread, workers, WASM heaps), CPU seconds of the process, and the
 * latency of the queries right after ready (`--queries`, default 30), each in hybrid then in bm25 (the
 * build still runs then: a hybrid query's embedding runs on the query lane, a worker of its own, or before
 * the lane, in `--variants main`, goes ahead of the build's batches but waits for the one running;
 * `--query-delay S` runs them S seconds after ready instead). `--quality` runs one more process per variant: at ready it holds the build (a blocker in
 * the semantic index's write queue, so the state measured does not move), runs the judged dev set
 * (bench/devset) in bm25 and hybrid, lets the build go on, and runs hybrid again once every chunk is in.
 *
 * Writes docs/hybrid-ready.json and docs/hybrid-ready.md (the section bench/perf.ts puts in
 * docs/performance.md); `--out DIR` writes them elsewhere, `--no-write` prints only.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compileBench } from './compile.js';

const HERE = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = 2 ** 20;
/** The commit this work started from: one pass over every chunk, hybrid once all are embedded. */
const BASELINE_REF = 'ea60519';

const { values: args } = parseArgs({
  options: {
    child: { type: 'boolean', default: false },
    dir: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'backlog-md') },
    repeat: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'before,titles-first,titles-first-2w' },
    'baseline-ref': { type: 'string', default: BASELINE_REF },
    'memory-budget': { type: 'string' },
    quality: { type: 'boolean', default: false },
    /** Stop each run after the queries that follow ready (no full build: `full build` is left blank). */
    'until-ready': { type: 'boolean', default: false },
    'quality-only': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'docs') },
    'no-write': { type: 'boolean', default: false },
    name: { type: 'string', default: '' },
    /** Queries timed right after ready (of the dev set's 84). */
    queries: { type: 'string', default: '30' },
    /** Seconds to wait after ready before those queries (the build goes on meanwhile). */
    'query-delay': { type: 'string', default: '0' },
  },
});
const log = (s: string) => process.stderr.write(`[hybrid-ready] ${s}\n`);
const round = (x: number, d = 1) => Number(x.toFixed(d));

interface Variant {
  name: string;
  /** `baseline`: the code at --baseline-ref; `current`: this tree. */
  code: 'baseline' | 'current';
  memoryBudgetMb?: number;
  what: string;
}
const VARIANTS: Variant[] = [
  {
    name: 'before',
    code: 'baseline',
    what: 'the code before this work: every chunk in one pass, bm25 until all are embedded (1 worker: default budget)',
  },
  {
    name: 'titles-first',
    code: 'current',
    what: 'titles first: ready after every document has its title (or its only chunk), the rest in passes in the background (1 worker: default budget); since the query lane, queries embed on a worker of their own while the build runs',
  },
  {
    name: 'main',
    code: 'baseline',
    what: "the code at `--baseline-ref` (main before the query lane: titles first, 1 worker, queries ahead of the build's batches but behind the running one)",
  },
  {
    name: 'titles-first-2w',
    code: 'current',
    memoryBudgetMb: 600,
    what: 'titles first with a second worker (`--memory-budget 600`)',
  },
  {
    name: 'before-2w',
    code: 'baseline',
    memoryBudgetMb: 600,
    what: 'the code before this work with a second worker (`--memory-budget 600`)',
  },
];

// ----- The measuring process

interface DevsetScores {
  ndcg_at_10: number;
  by_class: Record<string, number>;
  /** Chunks in the index when the queries ran (the build held still meanwhile). */
  chunks_done: number;
  chunks_total: number;
}

interface ChildResult {
  variant: string;
  ready_ms: number;
  ready_from_process_start_ms: number;
  open_ms: number;
  full_ms: number;
  chunks_at_ready: number;
  chunks_total: number;
  build_workers?: number;
  peak_rss_mb: number;
  rss_at_ready_mb: number;
  rss_after_build_mb: number;
  cpu_s_at_ready: number;
  cpu_s_full: number;
  /** `--queries` queries right after ready (default 30), each in the default mode (hybrid) then in bm25. */
  query_after_ready_ms: {
    p50: number;
    p95: number;
    first?: number;
    bm25_p50?: number;
    bm25_p95?: number;
    chunks_done_after?: number;
    mode: string;
    warning?: string;
    /** Each hybrid query's time, in order, and the part of it spent waiting for its embedding (the pool's `embedQuery`). */
    all?: number[];
    embed?: number[];
  };
  load_avg: [number, number];
  /** From ready until the query lane's worker had loaded (sampled every 50 ms). */
  lane_on_after_ready_ms?: number;
  quality?: { bm25: DevsetScores; at_ready: DevsetScores; at_full: DevsetScores };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function child(): Promise<ChildResult> {
  const { openBacklog, closeBacklog } = await import('../src/service/open-backlog.js');
  const { loadDevset } = await import('./devset/corpus.js');
  const { score } = await import('./devset/eval.js');
  type Service = Awaited<ReturnType<typeof openBacklog>>;
  const devset = await loadDevset();
  const cpu = () => {
    const u = process.cpuUsage();
    return round((u.user + u.system) / 1e6, 1);
  };
  const loadStart = os.loadavg()[0];
  let peak = 0;
  // eslint-disable-next-line prefer-const -- read by the sampler before openBacklog resolves
  let service: Service | undefined;
  let readyAt = 0;
  let laneOnAt = 0;
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => (onReady = r));
  const t0 = performance.now();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    // The query lane's worker loaded (code without a lane: never).
    const pool = (service as unknown as { semantic?: { pool?: { stats(): { lane?: string } } } })?.semantic
      ?.pool;
    if (readyAt && !laneOnAt && pool?.stats().lane === 'on') laneOnAt = performance.now();
    if (!readyAt && service?.semanticStatus().state === 'ready') {
      readyAt = performance.now();
      onReady();
    }
  }, 50);
  service = await openBacklog({
    dir: resolve(args.dir),
    embeddings: 'bundled',
    embedMissing: 'background',
    ...(args['memory-budget'] ? { memoryBudgetMb: Number(args['memory-budget']) } : {}),
  });
  const openMs = performance.now() - t0;
  const svc = service;
  await ready;
  const readyMs = readyAt - t0;
  const atReady = svc.semanticStatus();
  const rssAtReady = process.memoryUsage.rss();
  const cpuAtReady = cpu();

  const devsetRun = async (mode: 'bm25' | 'hybrid'): Promise<DevsetScores> => {
    const ranked = new Map<string, string[]>();
    for (const q of devset.queries) {
      const res = await svc.searchUnified(q.text, { ...(q.options ?? {}), mode, limit: 10 });
      if (res.search_mode !== mode) throw new Error(`asked ${mode}, ran ${res.search_mode}`);
      ranked.set(
        q.id,
        res.results.map((r) => r.path),
      );
    }
    const s = score(devset, ranked);
    const status = svc.semanticStatus();
    return {
      ndcg_at_10: s.overall.ndcg_at_10,
      by_class: Object.fromEntries(Object.entries(s.by_class).map(([c, v]) => [c, v.ndcg_at_10])),
      chunks_done: status.done,
      chunks_total: status.total,
    };
  };

  let quality: ChildResult['quality'];
  let bm25: DevsetScores | undefined;
  let atReadyScores: DevsetScores | undefined;
  if (args.quality) {
    // Hold the build where the first pass left it: index writes run one at a time through this queue.
    const semantic = (svc as unknown as { semantic: { enqueue?: (w: () => Promise<unknown>) => unknown } })
      .semantic;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    semantic.enqueue?.call(semantic, () => gate);
    await sleep(100);
    try {
      bm25 = await devsetRun('bm25');
      atReadyScores = await devsetRun('hybrid');
    } finally {
      release();
    }
  }
  await sleep(Number(args['query-delay']) * 1000);
  // Each query in hybrid, then in bm25: the same moment of the build, the embedding's share told apart.
  const times: number[] = [];
  const embedTimes: number[] = [];
  const pool = (svc as unknown as { semantic?: { pool?: { embedQuery(t: string): Promise<unknown> } } })
    .semantic?.pool;
  if (pool) {
    const embedQuery = pool.embedQuery.bind(pool);
    pool.embedQuery = (text: string) => {
      const s = performance.now();
      return embedQuery(text).finally(() => embedTimes.push(round(performance.now() - s)));
    };
  }
  const bm25Times: number[] = [];
  let last: Awaited<ReturnType<Service['searchUnified']>> | undefined;
  for (const q of devset.queries.slice(0, Number(args.queries))) {
    let s = performance.now();
    last = await svc.searchUnified(q.text, { limit: 10 });
    times.push(performance.now() - s);
    s = performance.now();
    await svc.searchUnified(q.text, { limit: 10, mode: 'bm25' });
    bm25Times.push(performance.now() - s);
  }
  const doneAfterQueries = svc.semanticStatus().done;
  if (!args['until-ready']) await svc.semanticReady();
  const fullMs = args['until-ready'] ? 0 : performance.now() - t0;
  const cpuFull = cpu();
  const full = svc.semanticStatus();
  await sleep(1000);
  const rssAfter = process.memoryUsage.rss();
  if (args.quality && bm25 && atReadyScores)
    quality = { bm25, at_ready: atReadyScores, at_full: await devsetRun('hybrid') };
  clearInterval(sampler);
  await closeBacklog(svc);
  return {
    variant: args.name,
    ready_ms: Math.round(readyMs),
    ready_from_process_start_ms: Math.round(readyAt),
    open_ms: Math.round(openMs),
    full_ms: Math.round(fullMs),
    chunks_at_ready: atReady.done,
    chunks_total: full.total,
    build_workers: full.buildWorkers,
    peak_rss_mb: Math.round(peak / MB),
    rss_at_ready_mb: Math.round(rssAtReady / MB),
    rss_after_build_mb: Math.round(rssAfter / MB),
    cpu_s_at_ready: cpuAtReady,
    cpu_s_full: cpuFull,
    query_after_ready_ms: {
      p50: round(percentile(times, 50)),
      p95: round(percentile(times, 95)),
      first: round(times[0]),
      bm25_p50: round(percentile(bm25Times, 50)),
      bm25_p95: round(percentile(bm25Times, 95)),
      chunks_done_after: doneAfterQueries,
      mode: last?.search_mode ?? '',
      ...(last?.warnings?.length ? { warning: last.warnings.join('; ') } : {}),
      all: times.map(round),
      embed: embedTimes,
    },
    load_avg: [round(loadStart, 2), round(os.loadavg()[0], 2)],
    ...(laneOnAt ? { lane_on_after_ready_ms: Math.round(laneOnAt - readyAt) } : {}),
    ...(quality ? { quality } : {}),
  };
}

// ----- The driver

/** A tree to compile: this one, or `src/` at a git ref with this tree's bench files. */
async function prepareTree(code: 'baseline' | 'current', ref: string): Promise<string> {
  if (code === 'current') return ROOT;
  const tree = await mkdtemp(join(os.tmpdir(), 'bs-ready-src-'));
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${ref}" src | tar -x -C "${tree}"`]);
  mkdirSync(join(tree, 'bench'), { recursive: true });
  cpSync(HERE, join(tree, 'bench', 'hybrid-ready.ts'));
  cpSync(join(ROOT, 'bench', 'compile.ts'), join(tree, 'bench', 'compile.ts'));
  cpSync(join(ROOT, 'bench', 'devset'), join(tree, 'bench', 'devset'), { recursive: true });
  // Modules and types resolve from here while it compiles.
  await symlink(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
  await writeFile(join(tree, 'package.json'), JSON.stringify({ type: 'module' }));
  return tree;
}

/** Compiles the tree's bench/hybrid-ready.ts and the embedding worker into a temporary folder. */
async function compile(tree: string): Promise<string> {
  const out = await compileBench(tree, 'hybrid-ready');
  // The judged queries are read next to the compiled dev-set code.
  cpSync(join(ROOT, 'bench', 'devset', 'backlog-md'), join(out, 'bench', 'devset', 'backlog-md'), {
    recursive: true,
  });
  return join(out, 'bench', 'hybrid-ready.js');
}

/** A fresh copy of the folder (no `.cache/`), in the temp dir. */
async function freshCopy(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const base = await mkdtemp(join(os.tmpdir(), 'bs-ready-copy-'));
  const dir = join(base, 'backlog-md');
  await cp(resolve(args.dir), dir, { recursive: true, filter: (s) => !s.split(sep).includes('.cache') });
  return { dir, cleanup: () => rm(base, { recursive: true, force: true }) };
}

async function runChild(script: string, v: Variant, quality: boolean): Promise<ChildResult> {
  const copy = await freshCopy();
  try {
    const argv = [
      script,
      ...['--child', '--dir', copy.dir, '--name', v.name],
      ...(v.memoryBudgetMb ? ['--memory-budget', String(v.memoryBudgetMb)] : []),
      ...(quality ? ['--quality'] : []),
      ...(args['until-ready'] ? ['--until-ready'] : []),
      ...['--queries', args.queries, '--query-delay', args['query-delay']],
    ];
    const started = performance.now();
    const res = spawnSync(process.execPath, argv, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * MB,
    });
    if (res.status !== 0) throw new Error(`${v.name} exited with ${res.status ?? res.signal}`);
    const lines = res.stdout.toString().trim().split('\n');
    const r = JSON.parse(lines[lines.length - 1]) as ChildResult;
    log(
      `${v.name}: ready ${(r.ready_ms / 1000).toFixed(1)} s, full ${(r.full_ms / 1000).toFixed(1)} s, ` +
        `peak ${r.peak_rss_mb} MB, load ${r.load_avg.join(' -> ')} (process ${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
    return r;
  } finally {
    await copy.cleanup();
  }
}

const median = (xs: number[]) => percentile(xs, 50);
const spread = (xs: number[], d = 1, unit = '') =>
  xs.length === 1
    ? `${round(xs[0], d)}${unit}`
    : `${round(median(xs), d)}${unit} (${round(Math.min(...xs), d)}-${round(Math.max(...xs), d)})`;

function markdown(report: {
  date: string;
  command: string;
  machine: string;
  variants: Variant[];
  runs: Record<string, ChildResult[]>;
  quality: Record<string, ChildResult>;
}): string {
  const { runs } = report;
  const base = runs.before ?? runs.main ?? [];
  const out = [
    '## Time to the first hybrid answer (Backlog.md folder, empty `.cache/`)',
    '',
    `\`${report.command}\`, ${report.date} (${report.machine}). Each run is a process of its own (compiled,`,
    'plain node) on a fresh copy of the folder with no `.cache/`, opened as a server opens it',
    "(`embedMissing: 'background'`); the variants take turns in each repeat. Median (min-max) over the repeats;",
    `"ratio" is ${runs.before ? 'before' : 'main'} / variant within each repeat (median). Hybrid-ready: from the \`openBacklog\` call until`,
    'searches run hybrid (`semanticStatus().state` is `ready`). Full build: until every chunk is embedded.',
    '',
    '| variant | runs | hybrid-ready s | ratio | full build s | ratio | peak RSS MB | RSS at ready MB | CPU s to ready / full | chunks at ready | query after ready p50 / p95 ms (mode) | bm25 at the same time p50 / p95 ms | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const v of report.variants) {
    const rs = runs[v.name];
    if (!rs?.length) continue;
    const ratio = (pick: (r: ChildResult) => number) => {
      const pairs = rs.flatMap((r, i) => (base[i] ? [pick(base[i]) / pick(r)] : []));
      return pairs.length ? `${round(median(pairs), 2)}x` : '';
    };
    out.push(
      `| ${v.name} | ${rs.length} | ${spread(rs.map((r) => r.ready_ms / 1000))} | ${ratio((r) => r.ready_ms)} | ` +
        `${rs[0].full_ms ? spread(rs.map((r) => r.full_ms / 1000)) : '-'} | ${rs[0].full_ms ? ratio((r) => r.full_ms) : ''} | ${spread(
          rs.map((r) => r.peak_rss_mb),
          0,
        )} | ${spread(
          rs.map((r) => r.rss_at_ready_mb),
          0,
        )} | ${round(median(rs.map((r) => r.cpu_s_at_ready)))} / ${round(median(rs.map((r) => r.cpu_s_full)))} | ` +
        `${median(rs.map((r) => r.chunks_at_ready))} of ${rs[0].chunks_total} | ${round(
          median(rs.map((r) => r.query_after_ready_ms.p50)),
        )} / ${round(median(rs.map((r) => r.query_after_ready_ms.p95)))} (${rs[0].query_after_ready_ms.mode}) | ` +
        `${round(median(rs.map((r) => r.query_after_ready_ms.bm25_p50 ?? NaN)))} / ${round(
          median(rs.map((r) => r.query_after_ready_ms.bm25_p95 ?? NaN)),
        )} | ` +
        `${spread(
          rs.map((r) => r.load_avg[0]),
          1,
        )} |`,
    );
  }
  out.push('', 'Variants:', '');
  for (const v of report.variants) if (runs[v.name]?.length) out.push(`- \`${v.name}\`: ${v.what}.`);
  const q = report.quality;
  if (Object.keys(q).length) {
    const classes = Object.keys(Object.values(q)[0].quality!.bm25.by_class);
    out.push(
      '',
      'Judged dev set (bench/devset, 84 queries), nDCG@10 through `searchUnified` in the same processes: bm25, hybrid',
      'at ready (the build held where the first pass left it while the queries ran) and hybrid after the full build.',
      '',
      `| variant | measured | chunks in the index | all | ${classes.join(' | ')} |`,
      `|---|---|---|---|${classes.map(() => '---|').join('')}`,
    );
    for (const [name, r] of Object.entries(q)) {
      const row = (what: string, s: DevsetScores) =>
        out.push(
          `| ${name} | ${what} | ${s.chunks_done} of ${s.chunks_total} | ${s.ndcg_at_10.toFixed(4)} | ${classes
            .map((c) => s.by_class[c].toFixed(3))
            .join(' | ')} |`,
        );
      row('bm25', r.quality!.bm25);
      row('hybrid at ready', r.quality!.at_ready);
      row('hybrid, full build', r.quality!.at_full);
    }
  }
  const warned = Object.values(runs)
    .flat()
    .find((r) => r.query_after_ready_ms.warning);
  if (warned)
    out.push(
      '',
      `While the rest is embedded, each hybrid answer says: "${warned.query_after_ready_ms.warning}".`,
    );
  return out.join('\n') + '\n';
}

async function driver(): Promise<void> {
  const names = args.variants.split(',');
  const variants = names.map((n) => {
    const v = VARIANTS.find((x) => x.name === n);
    if (!v) throw new Error(`unknown variant ${n} (${VARIANTS.map((x) => x.name).join(', ')})`);
    return v;
  });
  const scripts = new Map<string, string>();
  const temps: string[] = [];
  try {
    for (const code of new Set(variants.map((v) => v.code))) {
      log(`compiling ${code === 'current' ? 'this tree' : `src at ${args['baseline-ref']}`} ...`);
      const tree = await prepareTree(code, args['baseline-ref']);
      if (tree !== ROOT) temps.push(tree);
      const script = await compile(tree);
      temps.push(resolve(script, '..', '..'));
      scripts.set(code, script);
    }
    const runs: Record<string, ChildResult[]> = {};
    const quality: Record<string, ChildResult> = {};
    const repeat = args['quality-only'] ? 0 : Math.max(1, Number(args.repeat));
    for (let i = 0; i < repeat; i++)
      for (const v of variants) (runs[v.name] ??= []).push(await runChild(scripts.get(v.code)!, v, false));
    if (args.quality || args['quality-only'])
      // The code before is ready only once every chunk is in: its "at ready" is its full build.
      for (const v of variants.filter((x) => !x.memoryBudgetMb && x.code === 'current'))
        quality[v.name] = await runChild(scripts.get(v.code)!, v, true);
    const report = {
      date: new Date().toISOString(),
      command: `npm run bench:hybrid-ready -- ${process.argv.slice(2).join(' ')}`.trim().replace(/ --$/, ''),
      machine: `Node ${process.version}, ${os.cpus()[0]?.model ?? 'CPU'} x ${os.cpus().length} cores`,
      baseline_ref: args['baseline-ref'],
      variants,
      runs,
      quality,
    };
    const md = markdown(report);
    process.stdout.write(md);
    if (!args['no-write']) {
      mkdirSync(args.out, { recursive: true });
      writeFileSync(join(args.out, 'hybrid-ready.json'), JSON.stringify(report, null, 2) + '\n');
      writeFileSync(join(args.out, 'hybrid-ready.md'), md);
    }
  } finally {
    for (const t of temps) await rm(t, { recursive: true, force: true });
  }
}

if (args.child) process.stdout.write(`${JSON.stringify(await child())}\n`);
else if (!existsSync(resolve(args.dir))) throw new Error(`no folder at ${args.dir}`);
else await driver();
