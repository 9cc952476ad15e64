/**
 * Whole processes, as agents meet the project (issue #23): one CLI call per question, and an MCP stdio
 * server started per session. Each case is a fresh `node <the package's bin> ...` (dist/bin/backlog-search.js,
 * the bundled CLI; an older build's may be dist/cli/main.js) on a copy of the
 * Backlog.md folder whose `.cache/` is written; `node -e 0` runs in the same rounds as the baseline. One
 * case searches another copy that this build's `serve` (lexical, not watching) is serving meanwhile: the
 * one-shot asks it (src/http/discovery.ts).
 * One untimed warm-up round, then `--runs` rounds (default 7), the cases taking turns within a round so
 * that a burst of load on a shared machine lands on all of them. Medians of wall time (spawn to exit) and
 * of peak RSS (`/usr/bin/time`, when present; MCP: the server's VmHWM).
 *
 *   npm run build && npx tsx bench/startup.ts [--runs 7] [--hybrid <copy with embeddings built>] [--json]
 *
 * `--hybrid <dir>`: a copy of the folder after `backlog-search --embeddings bundled index` (minutes); adds
 * the default search answered hybrid from the cached embeddings (with `--base`, the base build runs on a
 * copy of it; `--base-hybrid <dir>` gives it a folder of its own instead, e.g. when the embedding cache's
 * format changed between the builds).
 * `--smoke`: CI's check (.ci/run): fails when a case's median is over its `smoke` bound, a multiple of
 * `node -e 0` in the same rounds, generous on purpose (a shared machine): it catches a regression to
 * seconds, not a few percent.
 * `--only <text>`: only the cases whose name contains it (and the baseline), e.g. `--only mcp`.
 * `--base <dir>`: another build of the project (a folder with package.json and dist/, e.g. an older commit's,
 * on a copy of the folder of its own),
 * run in the same rounds: each case gets a row "(base)" beside it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
/** The command a build installs: package.json's bin, in the folder `root`. */
function binOf(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(root, pkg.bin['backlog-search']);
}
const CLI = binOf(ROOT);
const SOURCE = join(
  resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval')),
  'backlog-md',
);
const TIME = '/usr/bin/time';
const QUERY = 'board view windows';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    hybrid: { type: 'string' },
    /** The base's own copy of the --hybrid folder, when the two builds' embedding caches differ in format. */
    'base-hybrid': { type: 'string' },
    base: { type: 'string' },
    json: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
    /** Only the cases whose name contains this (the `node -e 0` baseline always runs), e.g. `mcp`. */
    only: { type: 'string' },
  },
});
const runs = Math.max(1, Number(flags.runs));

interface Sample {
  ms: number;
  rssMb?: number;
  /** CPU time of the process, user + system (less bent by a loaded machine than wall time). */
  cpuMs?: number;
  /** MCP: the first backlog_search answered, ms after spawn. */
  firstMs?: number;
}

/** Runs argv to completion; wall time, and peak RSS when /usr/bin/time is here. Fails on a non-zero exit. */
function runProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const timed = existsSync(TIME);
  const [file, args] = timed ? [TIME, ['-f', '%M %U %S', ...argv]] : [argv[0], argv.slice(1)];
  const started = performance.now();
  return new Promise((done, fail) => {
    execFile(file, args, { env, maxBuffer: 64 << 20 }, (err, _stdout, stderr) => {
      const ms = performance.now() - started;
      if (err) return fail(new Error(`${argv.join(' ')}: ${err.message}\n${stderr}`));
      const [kb, user, sys] = (timed ? stderr.trim().split('\n').at(-1)! : '').split(' ').map(Number);
      done({
        ms,
        ...(Number.isFinite(kb) ? { rssMb: kb / 1024 } : {}),
        ...(Number.isFinite(user + sys) ? { cpuMs: (user + sys) * 1000 } : {}),
      });
    });
  });
}

/** `backlog-search mcp`: spawn to `initialize` answered, and to the first backlog_search answered. */
async function runMcp(main: string, dir: string, env: NodeJS.ProcessEnv): Promise<Sample> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, 'mcp', '--dir', dir],
    env: { ...getDefaultEnvironment(), ...(env as Record<string, string>) },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-startup', version: '1.0.0' });
  try {
    await client.connect(transport);
    const ms = performance.now() - started;
    const res = await client.callTool({ name: 'backlog_search', arguments: { query: QUERY, limit: 10 } });
    const firstMs = performance.now() - started;
    if (res.isError) throw new Error(`backlog_search failed: ${JSON.stringify(res.content)}`);
    const status = transport.pid ? readFileSync(`/proc/${transport.pid}/status`, 'utf8') : '';
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    // utime and stime (clock ticks, 100 a second on Linux), fields 14 and 15 of /proc/<pid>/stat.
    const stat = transport.pid ? readFileSync(`/proc/${transport.pid}/stat`, 'utf8') : '';
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuMs = (Number(ticks[11]) + Number(ticks[12])) * 10;
    return {
      ms,
      firstMs,
      ...(hwm ? { rssMb: Number(hwm[1]) / 1024 } : {}),
      ...(Number.isFinite(cpuMs) ? { cpuMs } : {}),
    };
  } finally {
    await client.close();
  }
}

interface Case {
  name: string;
  /** Runs the case with the CLI at `main` (this build's, or --base's). */
  run: (main: string) => Promise<Sample>;
  /** The issue's target, seconds (and MiB). */
  target?: string;
  /** --smoke fails over this many times `node -e 0` (MCP: the first backlog_search). */
  smoke?: number;
  /** Not run with --base's build (a case of this build's only). */
  thisBuildOnly?: boolean;
}

/** `serve` of `dir` (lexical, not watching) until SIGTERM; resolves once it is serving. */
function startServe(main: string, dir: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [main, '--dir', dir, '--embeddings', 'none', 'serve', '--port', '0', '--no-watch'],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((ready, fail) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('serving')) ready(child);
    });
    child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${err}`)));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[(s.length - 1) >> 1];
};

async function main(): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  if (!existsSync(join(SOURCE, 'config.yml'))) throw new Error(`no Backlog.md folder at ${SOURCE}`);
  const base = await mkdtemp(join(tmpdir(), 'bench-startup-'));
  const dir = join(base, 'backlog');
  await cp(SOURCE, dir, { recursive: true });
  // The machine's own settings must not choose the embeddings or the folder.
  const env: NodeJS.ProcessEnv = { ...process.env, BACKLOG_EMBEDDINGS: '', BACKLOG_DIR: '', NO_COLOR: '1' };
  delete env.BACKLOG_EMBEDDINGS;
  delete env.BACKLOG_DIR;
  const baseCli = flags.base ? binOf(resolve(flags.base)) : undefined;
  if (baseCli && !existsSync(baseCli)) throw new Error(`no ${baseCli}`);
  // The base build gets a copy of its own: a cache in another format would be rebuilt at every turn.
  const baseDir = join(base, 'backlog-base');
  if (baseCli) await cp(SOURCE, baseDir, { recursive: true });
  // So does the --hybrid folder (its embeddings copied with it): taking turns on one folder, each build
  // found the other's index cache and rebuilt it.
  const hybrid = flags.hybrid ? resolve(flags.hybrid) : undefined;
  const hybridBase = join(base, 'hybrid-base');
  if (baseCli && hybrid) await cp(resolve(flags['base-hybrid'] ?? hybrid), hybridBase, { recursive: true });
  const dirFor = (main: string) => (main === baseCli ? baseDir : dir);
  const swap = (main: string, a: string) =>
    main !== baseCli ? a : a === dir ? baseDir : a === hybrid ? hybridBase : a;
  const cli =
    (...args: string[]) =>
    (main: string) =>
      runProcess([process.execPath, main, ...args.map((a) => swap(main, a))], env);
  // Writes .cache/index.bin (a first start reads every file).
  for (const main of baseCli ? [CLI, baseCli] : [CLI]) {
    await cli('--dir', dir, '--embeddings', 'none', 'list', '-n', '1')(main);
    // The base's copy of the --hybrid folder: its index cache in the base's format, its embeddings kept.
    if (hybrid && main === baseCli)
      await cli('--dir', hybrid, '--embeddings', 'none', 'list', '-n', '1')(main);
  }
  // A copy served by this build's `serve`: a one-shot search there asks the server (issue #23 item 4).
  const servedDir = join(base, 'backlog-served');
  await cp(SOURCE, servedDir, { recursive: true });
  const server = await startServe(CLI, servedDir, env);

  const cases: Case[] = [
    { name: '`node -e 0` (baseline)', run: () => runProcess([process.execPath, '-e', '0'], env) },
    { name: '`--version`', run: cli('--version'), target: '<= 0.15 s', smoke: 5 },
    { name: '`--help`', run: cli('--help'), smoke: 10 },
    {
      name: '`search --embeddings none`',
      run: cli('--dir', dir, '--embeddings', 'none', 'search', QUERY),
      target: '<= 0.30 s, <= 100 MiB',
      smoke: 25,
    },
    {
      name: '`search` (default; no embedding cached: bm25)',
      run: cli('--dir', dir, 'search', QUERY),
      target: '<= 0.30 s',
      smoke: 25,
    },
    ...(flags.hybrid
      ? [
          {
            name: '`search` (default; every chunk embedded: hybrid)',
            run: cli('--dir', hybrid!, 'search', QUERY),
            target: '<= 1.2 s',
          },
        ]
      : []),
    {
      name: '`search --embeddings none`, a `serve` of the folder running',
      run: cli('--dir', servedDir, '--embeddings', 'none', 'search', QUERY),
      target: '<= 0.30 s',
      smoke: 10,
      thisBuildOnly: true,
    },
    { name: '`get BACK-72`', run: cli('--dir', dir, 'get', 'BACK-72'), target: '<= 0.30 s', smoke: 25 },
    { name: '`list -n 20`', run: cli('--dir', dir, 'list', '-n', '20'), target: '<= 0.30 s', smoke: 25 },
    { name: '`diagnostics`', run: cli('--dir', dir, 'diagnostics') },
    {
      name: '`mcp`: initialize / first backlog_search',
      run: (main) => runMcp(main, dirFor(main), env),
      target: '<= 0.3 s / <= 0.6 s',
      smoke: 30,
    },
  ];

  if (flags.only) {
    const keep = cases.filter((c, i) => i === 0 || c.name.includes(flags.only!));
    cases.splice(0, cases.length, ...keep);
  }
  // The base build's rows beside this build's, run in the same rounds.
  const runsOf = new Map<Case, string>(cases.map((c) => [c, CLI]));
  if (baseCli)
    for (const c of cases.slice(1).reverse()) {
      if (c.thisBuildOnly) continue;
      const twin: Case = { name: `${c.name} (base)`, run: c.run }; // no smoke bound: the base is not checked
      runsOf.set(twin, baseCli);
      cases.splice(cases.indexOf(c) + 1, 0, twin);
    }
  const samples = new Map<Case, Sample[]>(cases.map((c) => [c, []]));
  for (let round = 0; round <= runs; round++) {
    for (const c of cases) {
      const s = await c.run(runsOf.get(c)!);
      if (round > 0) samples.get(c)!.push(s); // round 0 warms the file cache
    }
    process.stderr.write(`round ${round}/${runs}\n`);
  }
  server.kill('SIGTERM');
  await new Promise((done) => server.once('exit', done));
  await rm(base, { recursive: true, force: true });

  const baseline = median(samples.get(cases[0])!.map((s) => s.ms));
  const cpuBaseline = median(
    samples
      .get(cases[0])!
      .filter((s) => s.cpuMs !== undefined)
      .map((s) => s.cpuMs!),
  );
  const rows = cases.map((c) => {
    const ss = samples.get(c)!;
    const ms = median(ss.map((s) => s.ms));
    const first = ss.some((s) => s.firstMs !== undefined) ? median(ss.map((s) => s.firstMs!)) : undefined;
    const rss = ss.some((s) => s.rssMb !== undefined) ? median(ss.map((s) => s.rssMb!)) : undefined;
    const cpu = ss.some((s) => s.cpuMs !== undefined) ? median(ss.map((s) => s.cpuMs!)) : undefined;
    return {
      name: c.name,
      smoke: c.smoke,
      ms,
      first,
      ratio: ms / baseline,
      firstRatio: first && first / baseline,
      rss,
      cpu,
      cpuRatio: cpu && cpuBaseline ? cpu / cpuBaseline : undefined,
      target: c.target,
    };
  });
  const over = rows.filter((r) => r.smoke !== undefined && (r.firstRatio ?? r.ratio) > r.smoke);
  if (flags.json) process.stdout.write(`${JSON.stringify({ runs, node: process.version, rows }, null, 2)}\n`);
  else printTable(rows);
  if (flags.smoke) {
    for (const r of over)
      process.stderr.write(
        `smoke: ${r.name} took ${(r.firstRatio ?? r.ratio).toFixed(1)}x node -e 0 (bound ${r.smoke}x)\n`,
      );
    if (over.length) process.exitCode = 1;
    else process.stderr.write('smoke: every case within its bound\n');
  }
}

function printTable(
  rows: {
    name: string;
    ms: number;
    first?: number;
    ratio: number;
    firstRatio?: number;
    rss?: number;
    cpu?: number;
    cpuRatio?: number;
    target?: string;
  }[],
): void {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  process.stdout.write(
    `Node ${process.version}, ${runs} rounds after a warm-up, medians; ratio: over \`node -e 0\` in the same rounds.\n\n` +
      '| process | wall s | / node -e 0 | CPU s (user+sys) | / node -e 0 | peak RSS MiB | target |\n' +
      '|---|---|---|---|---|---|---|\n',
  );
  for (const r of rows) {
    const wall = r.first === undefined ? s(r.ms) : `${s(r.ms)} / ${s(r.first)}`;
    const ratio =
      r.firstRatio === undefined ? r.ratio.toFixed(2) : `${r.ratio.toFixed(2)} / ${r.firstRatio.toFixed(2)}`;
    process.stdout.write(
      `| ${r.name} | ${wall} | ${ratio}x | ${r.cpu === undefined ? '-' : s(r.cpu)} | ` +
        `${r.cpuRatio === undefined ? '-' : `${r.cpuRatio.toFixed(2)}x`} | ` +
        `${r.rss === undefined ? '-' : r.rss.toFixed(0)} | ${r.target ?? ''} |\n`,
    );
  }
}

await main();
