/**
 * A long-lived process's first query that the bundled (English-only) model's gate cannot settle from
 * the model's vocabulary: `bun2nix flake` is answered only once the language detector (eld, in a worker)
 * has scored it (src/embeddings/query-language.ts). Each round is a fresh process that opens a folder whose
 * every chunk is embedded, as a server does (`embedMissing: 'background'`), waits until hybrid is ready,
 * then `--delay` ms (a client's pause), and times `searchUnified` of the gated query, then of a second
 * gated query and of one the vocabulary settles, and its RSS before them. Builds take turns (this one, `--base`), each on its own
 * copy of the folder; medians.
 *
 *   npm run build && npx tsx bench/first-gated-query.ts --hybrid <folder after `index`> [--base <build>]
 *     [--runs 5] [--delay 0]
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const { values: flags } = parseArgs({
  options: {
    hybrid: { type: 'string' },
    base: { type: 'string' },
    runs: { type: 'string', default: '5' },
    delay: { type: 'string', default: '0' },
  },
});
if (!flags.hybrid) throw new Error('--hybrid <folder with every chunk embedded> is required');
const ROOT = resolve(import.meta.dirname, '..');
const QUERIES = { first: 'bun2nix flake', second: 'offline sync', vocabulary: 'board view windows' };

/** The child: open, wait for hybrid, pause, time each query (ms) and say how it was answered. */
const CHILD = `
const [lib, dir, delay, queries] = process.argv.slice(2);
const { openBacklog, closeBacklog } = await import(lib);
const service = await openBacklog({ dir, embeddings: 'bundled', watch: false });
await service.semanticReady();
await new Promise((r) => setTimeout(r, Number(delay)));
// RSS before the queries: what a server that never meets a gated query holds (eld's worker or not).
const out = { rss: { ms: process.memoryUsage.rss() / 2 ** 20, mode: 'MiB' } };
for (const [name, q] of Object.entries(JSON.parse(queries))) {
  const t = performance.now();
  const r = await service.searchUnified(q, { limit: 10 });
  out[name] = { ms: performance.now() - t, mode: r.search_mode };
}
await closeBacklog(service);
console.log(JSON.stringify(out));
`;

interface Sample {
  [query: string]: { ms: number; mode: string };
}

/** The child's script, a file: a worker inherits node's flags, and `--input-type` fails a worker's start. */
let childFile = '';

function run(root: string, dir: string): Promise<Sample> {
  const lib = pathToFileURL(join(root, 'dist', 'index.js')).href;
  return new Promise((done, fail) =>
    execFile(
      process.execPath,
      [childFile, lib, dir, flags.delay!, JSON.stringify(QUERIES)],
      { maxBuffer: 16 << 20 },
      (err, stdout) => (err ? fail(err) : done(JSON.parse(stdout.trim().split('\n').pop()!) as Sample)),
    ),
  );
}

const builds = [{ name: 'this build', root: ROOT }];
if (flags.base) builds.push({ name: 'base', root: resolve(flags.base) });
const tmp = await mkdtemp(join(tmpdir(), 'gated-'));
try {
  childFile = join(tmp, 'child.mjs');
  await writeFile(childFile, CHILD);
  const dirs: string[] = [];
  for (let i = 0; i < builds.length; i++) {
    dirs.push(join(tmp, `copy${i}`));
    await cp(resolve(flags.hybrid), dirs[i], { recursive: true });
  }
  const samples: Sample[][] = builds.map(() => []);
  const runs = Math.max(1, Number(flags.runs));
  for (let round = 0; round <= runs; round++) {
    process.stderr.write(`round ${round}/${runs}\n`);
    for (let i = 0; i < builds.length; i++) {
      const s = await run(builds[i].root, dirs[i]);
      if (round > 0) samples[i].push(s); // round 0 warms the disk and the code caches
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`delay ${flags.delay} ms after hybrid is ready, ${runs} rounds, medians (min-max), ms\n`);
  const columns = [...Object.keys(QUERIES), 'rss'];
  const heads = [...Object.values(QUERIES).map((q) => `\`${q}\``), 'RSS before them'];
  console.log(`| build | ${heads.join(' | ')} |\n|---|${columns.map(() => '---').join('|')}|`);
  builds.forEach((b, i) => {
    const cells = columns.map((k) => {
      const ms = samples[i].map((s) => s[k].ms);
      const modes = [...new Set(samples[i].map((s) => s[k].mode))].join('/');
      return `${median(ms).toFixed(1)} (${Math.min(...ms).toFixed(1)}-${Math.max(...ms).toFixed(1)}) ${modes}`;
    });
    console.log(`| ${b.name} | ${cells.join(' | ')} |`);
  });
} finally {
  await rm(tmp, { recursive: true, force: true });
}
