/**
 * Issue #23 at scale: process start to the first result from the cache, on a backlog folder of `--docs`
 * synthetic documents (default 50,000: bench/scale-corpus.ts, the corpus of `npm run bench:scale`) written
 * as native task files. The first CLI call reads every file and writes `.cache/index.bin` (timed once);
 * then `--runs` rounds after a warm-up, each a fresh `search --embeddings none` beside `node -e 0` (and
 * `--base`'s build, same folder) in the same round; medians of wall time and of peak RSS.
 *
 *   npm run build && nice npx tsx bench/startup-scale.ts [--docs 50000] [--runs 5] [--base <build>]
 *
 * `--keep <folder>`: write the corpus there (once) and keep it, so the next run with the same folder skips
 * writing the files and building the cache (minutes at 50,000). A build whose cache format differs from
 * the cache there rebuilds it on its first start (the warm-up round): give `--base` its own copy
 * (`--base-dir <folder>`, a copy of the kept folder).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadPool, synthesize, wordQueries } from './scale-corpus.js';

const ROOT = resolve(import.meta.dirname, '..');
const EVAL = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const TIME = '/usr/bin/time';
const { values: flags } = parseArgs({
  options: {
    docs: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '5' },
    base: { type: 'string' },
    keep: { type: 'string' },
    'base-dir': { type: 'string' },
  },
});

function binOf(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(root, pkg.bin['backlog-search']);
}

function timed(argv: string[]): Promise<{ ms: number; rssMb?: number; stdout: string }> {
  const withTime = existsSync(TIME);
  const [file, args] = withTime ? [TIME, ['-f', '%M', ...argv]] : [argv[0], argv.slice(1)];
  const started = performance.now();
  return new Promise((done, fail) => {
    execFile(file, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const ms = performance.now() - started;
      if (err) return fail(new Error(`${argv.join(' ')}: ${err.message}\n${stderr}`));
      const kb = withTime ? Number(stderr.trim().split('\n').at(-1)) : NaN;
      done({ ms, stdout, ...(Number.isFinite(kb) ? { rssMb: kb / 1024 } : {}) });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];

async function main(): Promise<void> {
  const n = Number(flags.docs);
  const runs = Math.max(1, Number(flags.runs));
  const docs = synthesize(await loadPool(EVAL), n);
  const [query] = wordQueries(
    docs.map((d) => d.text),
    1,
  );
  const base = flags.keep ? resolve(flags.keep) : await mkdtemp(join(tmpdir(), 'bench-startup-scale-'));
  const dir = join(base, 'backlog');
  const kept = flags.keep !== undefined && existsSync(join(dir, 'tasks', `task-${n}.md`));
  await mkdir(join(dir, 'tasks'), { recursive: true });
  for (let i = 0; i < (kept ? 0 : docs.length); i++) {
    const d = docs[i];
    await writeFile(
      join(dir, 'tasks', `task-${i + 1}.md`),
      `---\nid: TASK-${i + 1}\ntitle: ${JSON.stringify(d.title || `Document ${i + 1}`)}\ntype: task\nstatus: To Do\n---\n${d.text}\n`,
    );
  }
  const search = (bin: string, folder = dir) => [
    process.execPath,
    bin,
    '--dir',
    folder,
    '--embeddings',
    'none',
    'search',
    query,
  ];
  const bins: [string, string, string][] = [['this build', binOf(ROOT), dir]];
  if (flags.base) bins.push(['base', binOf(resolve(flags.base)), resolve(flags['base-dir'] ?? dir)]);
  const build = await timed([
    process.execPath,
    bins[0][1],
    '--dir',
    dir,
    '--embeddings',
    'none',
    'list',
    '-n',
    '1',
  ]);
  process.stderr.write(
    `${n} files ${kept ? 'kept' : 'written'}; first start (${kept ? 'reads the cache' : 'reads every file, writes the cache'}): ${(build.ms / 1000).toFixed(1)} s\n`,
  );

  const cases: [string, string[]][] = [
    ['`node -e 0`', [process.execPath, '-e', '0']],
    ...bins.map(([name, bin, folder]): [string, string[]] => [
      `search --embeddings none (${name})`,
      search(bin, folder),
    ]),
  ];
  const samples = new Map(cases.map(([name]) => [name, [] as { ms: number; rssMb?: number }[]]));
  for (let round = 0; round <= runs; round++) {
    for (const [name, argv] of cases) {
      const s = await timed(argv);
      if (name.startsWith('search') && !/\d+ results? for/.test(s.stdout))
        throw new Error(`no result line: ${s.stdout.slice(0, 200)}`);
      if (round > 0) samples.get(name)!.push(s);
    }
    process.stderr.write(`round ${round}/${runs}\n`);
  }
  if (!flags.keep) await rm(base, { recursive: true, force: true });
  const baseline = median(samples.get(cases[0][0])!.map((s) => s.ms));
  process.stdout.write(
    `${n} documents, query "${query}"; Node ${process.version}, ${runs} rounds after a warm-up, medians.\n\n` +
      '| process | wall s | / node -e 0 | peak RSS MiB |\n|---|---|---|---|\n',
  );
  for (const [name] of cases) {
    const ss = samples.get(name)!;
    const ms = median(ss.map((s) => s.ms));
    const rss = ss[0].rssMb === undefined ? '-' : median(ss.map((s) => s.rssMb!)).toFixed(0);
    process.stdout.write(
      `| ${name} | ${(ms / 1000).toFixed(2)} | ${(ms / baseline).toFixed(2)}x | ${rss} |\n`,
    );
  }
}

await main();
