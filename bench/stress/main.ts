/**
 * `npm run stress [-- --quick] [-- --only fuzz,files,kills,agents,leak,load]`: the reliability figures
 * in docs/reliability.md (not part of `npm test`). Each probe's figures are kept in
 * .cache/stress/results/<probe>.json and the page is written from every probe that has run, each with
 * the command and date that made it; `--only` re-runs some probes and keeps the others' figures.
 * `--quick` runs each probe small (a smoke run: its figures are marked and never replace a full run's).
 * Servers are the built CLI (`npm run stress` builds first). The load probe needs the embeddings of the
 * Backlog.md folder in .cache/stress/backlog-md (made on its first run; `backlog-search index` builds
 * them in a few minutes).
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agents } from './agents.js';
import { ROOT, STRESS_CACHE, fmt, type ProbeResult } from './common.js';
import { hostileFiles } from './files.js';
import { fuzzLibrary, fuzzMcp } from './fuzz.js';
import { kills } from './kills.js';
import { leak } from './leak.js';
import { load } from './load.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? new Set(args[onlyIdx + 1].split(',')) : null;
const RESULTS = join(STRESS_CACHE, 'results');

const PROBES: Record<
  string,
  { title: string; run: () => Promise<Omit<ProbeResult, 'probe' | 'command' | 'at' | 'quick'>> }
> = {
  fuzz: {
    title: 'Fuzzing',
    run: async () => {
      const lib = await fuzzLibrary(quick ? (only?.has('fuzz-mcp') ? 10 : 20_000) : 1_000_000);
      const mcp = await fuzzMcp(quick ? 2_000 : 100_000);
      return {
        body: [
          '**Library.** ' + lib.lines[0],
          lib.lines.slice(1).join('\n'),
          '',
          '**MCP over HTTP.** ' + mcp.lines[0],
          mcp.lines.slice(1).join('\n'),
        ].join('\n'),
        checks: [
          {
            what: 'fuzzed library queries: 0 crashes, 0 errors without a code, 0 over 100 ms',
            held: lib.crashes + lib.uncoded + lib.slow === 0,
            figure: `${lib.crashes} / ${lib.uncoded} / ${lib.slow} (max ${fmt(lib.maxMs, 1)} ms)`,
          },
          {
            what: 'fuzzed MCP requests: 0 crashes, 0 errors without a code',
            held: mcp.crashes + mcp.uncoded + mcp.serverErrors === 0,
            figure: `${mcp.crashes} crashes / ${mcp.uncoded} without a code / ${mcp.serverErrors} HTTP 500`,
          },
        ],
      };
    },
  },
  files: {
    title: 'Hostile files',
    run: async () => {
      const r = await hostileFiles(quick);
      return {
        body: r.lines.join('\n'),
        checks: [
          {
            what: 'hostile files: 0 changed on disk, every backlog opens without a crash',
            held: r.changed === 0 && r.crashed === 0,
            figure: `${r.changed} changed, ${r.crashed} crashed`,
          },
        ],
      };
    },
  },
  kills: {
    title: 'Crashes mid-write',
    run: async () => {
      const r = await kills(quick ? 10 : 100);
      return {
        body: r.lines.join('\n\n'),
        checks: [
          {
            what: 'kill -9 mid-write: 0 torn or mixed files, 0 acknowledged writes lost, 0 duplicate ids',
            held: r.torn + r.lost + r.dupIds === 0,
            figure: `${r.torn} / ${r.lost} / ${r.dupIds}`,
          },
          {
            what: 'next start: 0 stale locks or temporary files, every acknowledged create served',
            held: r.stale + r.unserved === 0,
            figure: `${r.stale} left, ${r.unserved} not served`,
          },
        ],
      };
    },
  },
  agents: {
    title: 'Concurrent agents',
    run: async () => {
      const r = await agents(quick ? 40 : 200, quick ? 5 : 20);
      return {
        body: r.lines.join('\n'),
        checks: [
          {
            what: 'two servers on one folder: 0 acknowledged writes lost, 0 duplicate ids',
            held: r.lost + r.duplicateIds === 0,
            figure: `${r.lost} lost, ${r.duplicateIds} duplicates`,
          },
          {
            what: 'racing version-checked updates: exactly one winner every round',
            held: r.badRounds === 0,
            figure: `${r.badRounds} rounds without exactly one winner`,
          },
        ],
      };
    },
  },
  leak: {
    title: 'Memory of MCP over HTTP',
    run: async () => {
      const r = await leak(quick ? 5_000 : 100_000, quick ? 3_000 : 10_000);
      return {
        body: r.lines.join('\n'),
        checks: [
          {
            what: 'MCP calls on one session: RSS after GC within 50 MB of its level after the first 1,000',
            held: r.growthMb <= 50,
            figure: `${fmt(r.growthMb, 1)} MB`,
          },
        ],
      };
    },
  },
  load: {
    title: 'Load',
    run: async () => {
      const r = await load(quick);
      return {
        body: r.lines.join('\n'),
        checks: [
          {
            what: 'settled hybrid `GET /search`, concurrency 10: >= 0.4x the requests/s of bm25 in the same run, p99 <= 50 ms (issue #23)',
            held: r.ratio >= 0.4 && r.pairP99 <= 50,
            figure: `${fmt(r.ratio, 2)}x (CPU a request: ${fmt(r.cpuRatio, 2)}x), p99 ${fmt(r.pairP99, 1)} ms, load ${fmt(Math.min(...r.loads), 1)}-${fmt(Math.max(...r.loads), 1)}`,
          },
          {
            what: '`GET /search`, hybrid, concurrency 10: >= 500 requests/s with p99 <= 50 ms',
            held: r.rps10 >= 500 && r.p99_10 <= 50,
            figure: `${fmt(r.rps10)} req/s, p99 ${fmt(r.p99_10, 1)} ms`,
          },
          {
            what: '`/health` answers while 200 idle connections are open',
            held: r.healthFailures === 0,
            figure: `${r.healthFailures} failures`,
          },
        ],
      };
    },
  },
};

await mkdir(RESULTS, { recursive: true });
for (const [name, probe] of Object.entries(PROBES)) {
  if (only && !only.has(name)) continue;
  process.stderr.write(`stress: ${name}...\n`);
  const started = performance.now();
  const result = await probe.run();
  const command = `npm run stress -- ${quick ? '--quick ' : ''}--only ${name}`;
  const full: ProbeResult = { probe: name, command, at: new Date().toISOString(), quick, ...result };
  const file = join(RESULTS, `${name}${quick ? '.quick' : ''}.json`);
  await writeFile(file, JSON.stringify(full, null, 2));
  process.stderr.write(
    `stress: ${name} done in ${fmt((performance.now() - started) / 1000)} s: ${result.checks.map((c) => `${c.held ? 'held' : 'FAILED'} ${c.figure}`).join('; ')}\n`,
  );
}

/** The latest result of each probe: a full run's, else a quick one's. */
async function latest(): Promise<ProbeResult[]> {
  const names = new Set(await readdir(RESULTS));
  const out: ProbeResult[] = [];
  for (const name of Object.keys(PROBES)) {
    const file = names.has(`${name}.json`)
      ? `${name}.json`
      : names.has(`${name}.quick.json`)
        ? `${name}.quick.json`
        : null;
    if (file) out.push(JSON.parse(await readFile(join(RESULTS, file), 'utf8')) as ProbeResult);
  }
  return out;
}

const results = await latest();
const page = [
  '# Reliability',
  '',
  'What holds when agents write in parallel, servers are killed mid-write, inputs are hostile and the',
  'server is under load: each figure below was made by `npm run stress` (bench/stress/, not part of',
  '`npm test`) on this 2-core machine, shared with other work while it ran; the command and date of each',
  'probe are under its heading. The tests that keep these properties in `npm test` are listed at the end.',
  '',
  '## Must reach',
  '',
  '| what | held | figure |',
  '|---|---|---|',
  ...results.flatMap((r) =>
    r.checks.map(
      (c) => `| ${c.what}${r.quick ? ' (quick run)' : ''} | ${c.held ? 'yes' : '**no**'} | ${c.figure} |`,
    ),
  ),
  '',
  ...results.flatMap((r) => [
    `## ${PROBES[r.probe].title}`,
    '',
    `\`${r.command}\` (${r.at.slice(0, 16).replace('T', ' ')} UTC${r.quick ? ', quick run' : ''})`,
    '',
    r.body,
    '',
  ]),
  (await readFile(join(ROOT, 'bench', 'stress', 'design.md'), 'utf8')).trim(),
  '',
].join('\n');
// A checkout without every probe's stored result (a fresh clone: .cache/ is not in git) would drop the
// other probes' figures from the page: it is written beside the results instead.
const missing = Object.keys(PROBES).filter((name) => !results.some((r) => r.probe === name));
const target = missing.length === 0 ? join(ROOT, 'docs', 'reliability.md') : join(RESULTS, 'reliability.md');
await writeFile(target, page);
process.stderr.write(
  missing.length === 0
    ? 'stress: wrote docs/reliability.md\n'
    : `stress: no stored result for ${missing.join(', ')} in ${RESULTS}: docs/reliability.md left as it is; this run's page is ${target}\n`,
);
