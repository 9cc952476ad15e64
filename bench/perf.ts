/**
 * `npm run bench` (`tsx bench/perf.ts [--sizes 1000,10000,50000] [--quick]`): index build time, query
 * latency (p50/p95/p99) and memory of our engine, side by side with Orama used directly (default
 * settings) and MiniSearch (defaults) measured in the same run, reported as ratios. Writes
 * docs/performance.md and docs/performance.json.
 *
 * Workloads:
 * - SciFact (5,183 abstracts) with its 809 train queries;
 * - the Backlog.md folder (696 real task files) through `openBacklog` + `searchUnified` (snippets
 *   included), queried with words taken from the tasks themselves;
 * - synthetic corpora of 1K, 10K and 50K documents made by recombining SciFact and XQuAD paragraphs.
 */
import { writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBeir, type BeirDoc } from '../src/eval/beir.js';
import { percentile } from '../src/eval/metrics.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { miniSearchRetriever, oramaRetriever } from './baselines.js';
import type { Retriever } from '../src/eval/run-eval.js';
import { lineChart, svg } from './chart.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const SIZES = (arg('--sizes') ?? '1000,10000,50000').split(',').map(Number);
const QUICK = process.argv.includes('--quick');

interface Timing {
  system: string;
  build_ms: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  rss_mb?: number;
  heap_mb?: number;
}

const round = (n: number, d = 2) => Number(n.toFixed(d));
const log = (s: string) => process.stderr.write(`${s}\n`);

/** A deterministic PRNG (mulberry32), so every run benchmarks the same corpora and queries. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function latencies(
  run: (q: string) => unknown,
  queries: string[],
  warmup = 30,
): { p50: number; p95: number; p99: number } {
  for (const q of queries.slice(0, warmup)) run(q);
  const times: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    run(q);
    times.push(performance.now() - t);
  }
  return {
    p50: round(percentile(times, 50), 3),
    p95: round(percentile(times, 95), 3),
    p99: round(percentile(times, 99), 3),
  };
}

async function timeRetriever(r: Retriever, docs: BeirDoc[], queries: string[]): Promise<Timing> {
  global.gc?.();
  const before = process.memoryUsage();
  const t = performance.now();
  await r.build(docs);
  const build = performance.now() - t;
  global.gc?.();
  const after = process.memoryUsage();
  // Baselines may be async; time the awaited call the same way for every system.
  for (const q of queries.slice(0, 30)) await r.search(q, 10);
  const times: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    await r.search(q, 10);
    times.push(performance.now() - s);
  }
  return {
    system: r.name,
    build_ms: round(build, 0),
    p50_ms: round(percentile(times, 50), 3),
    p95_ms: round(percentile(times, 95), 3),
    p99_ms: round(percentile(times, 99), 3),
    heap_mb: round((after.heapUsed - before.heapUsed) / 2 ** 20, 1),
  };
}

function ourRetriever(svc = new OramaSearchService()): Retriever {
  return {
    name: 'backlog-search (bm25)',
    build: (docs) => svc.build(docs.map((d) => ({ id: d.id, title: d.title, body: d.text }))),
    search: (q, k) => svc.search({ query: q, limit: k }).hits.map((h) => h.id),
  };
}

const systems = (): Retriever[] => [ourRetriever(), oramaRetriever(false), miniSearchRetriever()];

function table(rows: Timing[]): string[] {
  const ours = rows[0];
  const ratio = (a: number, b: number) => (a > 0 ? `${round(b / a, 1)}x` : '-');
  return [
    '| system | build ms | p50 ms | p95 ms | p99 ms | heap MB | p95 vs ours | build vs ours |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.system} | ${r.build_ms} | ${r.p50_ms} | ${r.p95_ms} | ${r.p99_ms} | ${r.heap_mb ?? '-'} | ${r === ours ? '1x' : ratio(ours.p95_ms, r.p95_ms)} | ${r === ours ? '1x' : ratio(ours.build_ms, r.build_ms)} |`,
    ),
  ];
}

/** Synthetic documents: a SciFact or XQuAD title with 1-3 paragraphs drawn from the pool. */
function synthesize(pool: BeirDoc[], n: number): BeirDoc[] {
  const rand = rng(42);
  const pick = () => pool[Math.floor(rand() * pool.length)];
  return Array.from({ length: n }, (_, i) => {
    const parts = 1 + Math.floor(rand() * 3);
    return {
      id: `doc-${i}`,
      title: pick().title,
      text: Array.from({ length: parts }, () => pick().text).join('\n\n'),
    };
  });
}

/** Queries made of 2-4 words taken from the documents themselves. */
function wordQueries(texts: string[], n: number, seed = 7): string[] {
  const rand = rng(seed);
  const out: string[] = [];
  while (out.length < n) {
    const words = texts[Math.floor(rand() * texts.length)].split(/\s+/).filter((w) => w.length > 3);
    if (words.length < 4) continue;
    const len = 2 + Math.floor(rand() * 3);
    const at = Math.floor(rand() * (words.length - len));
    out.push(words.slice(at, at + len).join(' '));
  }
  return out;
}

const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: os.cpus()[0]?.model,
  cores: os.cpus().length,
};
const md: string[] = [];

// 1. SciFact
log('scifact ...');
const scifact = await loadBeir(join(EVAL_DIR, 'scifact'), 'train');
const scifactQueries = scifact.queries.map((q) => q.text);
const scifactRows: Timing[] = [];
for (const s of systems()) scifactRows.push(await timeRetriever(s, scifact.docs, scifactQueries));
report.scifact = scifactRows;
md.push('## SciFact: 5,183 abstracts, 809 queries (title + text)', '', ...table(scifactRows), '');

// 2. Backlog.md folder through the whole service path.
log('backlog-md ...');
const backlogDir = join(EVAL_DIR, 'backlog-md');
const t = performance.now();
const service = await openBacklog({ dir: backlogDir, cacheDir: false, embeddings: 'none' });
const openMs = performance.now() - t;
const items = service.list({ limit: 1000 }).results.map((r) => service.get(r.id));
const backlogQueries = wordQueries(
  items.map((i) => `${i.title} ${i.body}`),
  QUICK ? 200 : 1000,
);
const unified = latencies((q) => service.searchUnified(q, { limit: 10 }), backlogQueries);
const indexOnly = latencies((q) => service.index.search({ query: q, limit: 10 }), backlogQueries);
// The query language against plain search, same words: phrase, boolean and prefix forms of each query.
const words = (q: string) =>
  q
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}\p{N}-]/gu, ''))
    .filter(Boolean);
const forms: Record<string, (q: string) => string> = {
  plain: (q) => q,
  phrase: (q) => `"${words(q).join(' ')}"`,
  boolean: (q) => {
    const w = words(q);
    return w.length > 2 ? `${w[0]} AND ${w[1]} OR ${w.slice(2).join(' ')}` : w.join(' AND ');
  },
  prefix: (q) =>
    words(q)
      .map((w) => (w.length > 4 ? `${w.slice(0, 4)}*` : w))
      .join(' '),
};
const queryLanguage: Record<string, { p50: number; p95: number; p99: number }> = {};
for (const [form, make] of Object.entries(forms)) {
  const qs = backlogQueries.map(make).filter((q) => q.replace(/["*]/g, '').trim());
  queryLanguage[form] = latencies(
    (q) => service.searchUnified(q, { limit: 10, match_mode: form === 'plain' ? 'simple' : 'raw' }),
    qs,
  );
}
const backlogDocs: BeirDoc[] = items.map((i) => ({ id: i.id, title: i.title, text: i.body }));
const backlogRows: Timing[] = [];
for (const s of systems()) backlogRows.push(await timeRetriever(s, backlogDocs, backlogQueries));
report.backlog_md = {
  files: items.length,
  open_ms: round(openMs, 0),
  search_unified: unified,
  index_only: indexOnly,
  systems: backlogRows,
};
md.push(
  `## Backlog.md folder: ${items.length} real task files, ${backlogQueries.length} queries of 2-4 words from the tasks`,
  '',
  `- \`openBacklog\` (read, parse, index every file): ${round(openMs, 0)} ms`,
  `- \`searchUnified\` (filters, ranking, snippets, the path every surface uses): p50 ${unified.p50} ms, p95 ${unified.p95} ms, p99 ${unified.p99} ms`,
  `- index search alone: p50 ${indexOnly.p50} ms, p95 ${indexOnly.p95} ms, p99 ${indexOnly.p99} ms`,
  '',
  'The query language (`match_mode: "raw"`) on the same queries, through `searchUnified`:',
  '',
  '| form | example | p50 ms | p95 ms | p99 ms | p95 vs plain |',
  '|---|---|---|---|---|---|',
  ...Object.entries(queryLanguage).map(
    ([form, t]) =>
      `| ${form} | \`${forms[form]('login rate limit')}\` | ${t.p50} | ${t.p95} | ${t.p99} | ${round(t.p95 / queryLanguage.plain.p95, 2)}x |`,
  ),
  '',
  'Index and query alone, same documents (title + body) and queries in every system:',
  '',
  ...table(backlogRows),
  '',
);

// 3. Hybrid on the same folder (bundled model): skipped with --no-hybrid.
if (!process.argv.includes('--no-hybrid')) {
  const { measureHybrid } = await import('./hybrid-perf.js');
  const hybrid = await measureHybrid(
    backlogDir,
    join(ROOT, '.cache', 'bench', 'backlog-md'),
    backlogQueries.slice(0, 300),
    log,
  );
  report.hybrid = hybrid.result;
  md.push(...hybrid.md);
}

// 4. Scale.
const pool = [...scifact.docs, ...(await loadBeir(join(EVAL_DIR, 'xquad-en'), 'dev')).docs];
const scale: Record<number, Timing[]> = {};
const warm: Record<number, { index_mb: number; restore_to_first_result_ms: number; text_mb: number }> = {};
for (const n of SIZES) {
  log(`synthetic ${n} ...`);
  const docs = synthesize(pool, n);
  const queries = wordQueries(
    docs.map((d) => d.text),
    QUICK ? 200 : 500,
    n,
  );
  scale[n] = [];
  const ours = new OramaSearchService();
  const list =
    n > 10_000 && QUICK
      ? [ourRetriever(ours)]
      : [ourRetriever(ours), oramaRetriever(false), miniSearchRetriever()];
  for (const s of list) scale[n].push(await timeRetriever(s, docs, queries));
  // Warm start: the persisted index (what .cache/index.bin holds of the index) and its restore.
  const bytes = await ours.serialize();
  const restored = new OramaSearchService();
  const t0 = performance.now();
  restored.restore(bytes);
  restored.search({ query: queries[0], limit: 10 });
  warm[n] = {
    index_mb: round(bytes.length / 2 ** 20, 1),
    restore_to_first_result_ms: round(performance.now() - t0, 0),
    text_mb: round(docs.reduce((a, d) => a + d.title.length + d.text.length, 0) / 2 ** 20, 1),
  };
}
report.scale = scale;
report.warm = warm;
md.push('## Scale: synthetic corpora from SciFact and XQuAD paragraphs (lexical)', '');
for (const n of SIZES) {
  md.push(`### ${n.toLocaleString('en')} documents`, '', ...table(scale[n]), '');
  md.push(
    `Persisted index ${warm[n].index_mb} MB for ${warm[n].text_mb} MB of text; restore to first result ${warm[n].restore_to_first_result_ms} ms (cold build: ${scale[n][0].build_ms} ms).`,
    '',
  );
}

// 5. The servers, each measured by its own bench from a second process or a real client.
if (!process.argv.includes('--no-servers')) {
  const run = (script: string) =>
    execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', script)], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 * 2 ** 20,
    });
  log('MCP over HTTP ...');
  md.push(
    '## MCP `backlog_search` over Streamable HTTP (Backlog.md folder, lexical): `npx tsx bench/mcp-http.ts`',
    '',
    '```',
    run('mcp-http.ts').trim(),
    '```',
    '',
  );
  log('viewer and GET /search ...');
  md.push(
    '## Viewer and `GET /search` from a second process (Backlog.md folder, lexical): `npm run bench:viewer`',
    '',
    run('viewer.ts').trim(),
    '',
  );
}

// The chart: query p95 and index heap against corpus size, every system measured at every size.
const full = SIZES.filter((n) => scale[n].length > 1);
if (full.length > 1) {
  const names = scale[full[0]].map((t) => t.system);
  const pick = (f: (t: Timing) => number) =>
    names.map((name) => ({ name, values: full.map((n) => f(scale[n].find((t) => t.system === name)!)) }));
  writeFileSync(
    join(ROOT, 'docs', 'performance.svg'),
    svg(860, 260, [
      lineChart(
        'query p95 (ms)',
        full,
        pick((t) => t.p95_ms),
        'ms',
      ),
      lineChart(
        'index heap (MB)',
        full,
        pick((t) => t.heap_mb ?? 0),
        'MB',
        430,
      ),
    ]),
  );
  md.push('![Query p95 and heap against corpus size](performance.svg)', '');
}

const rss = round(process.memoryUsage().rss / 2 ** 20, 0);
report.final_rss_mb = rss;

const header = [
  '# Performance',
  '',
  `Generated by \`npm run bench\` on ${report.date} (Node ${process.version}, ${report.cpu} × ${report.cores} cores${QUICK ? ', --quick' : ''}).`,
  'Each query is timed alone after 30 untimed warm-up queries; p50/p95/p99 are nearest-rank percentiles.',
  'Baselines run in the same process and the same run, so compare the ratios: these machines are shared',
  'and absolute times move between runs. "heap MB" is the heap growth after building the index (after GC',
  'when node runs with --expose-gc). All numbers are lexical (bm25).',
  '',
];
writeFileSync(
  join(ROOT, 'docs', 'performance.md'),
  [...header, ...md, `Process RSS at the end of the run: ${rss} MB.`, ''].join('\n'),
);
writeFileSync(join(ROOT, 'docs', 'performance.json'), JSON.stringify(report, null, 2));
process.stdout.write([...header, ...md].join('\n'));
