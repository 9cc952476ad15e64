/**
 * `npm run bench` (`bench/perf.ts [--sizes 1000,10000,50000] [--quick] [--no-hybrid] [--no-servers]
 * [--out docs]`): index build time, query latency (p50/p95/p99) and memory of our engine, side by side
 * with Orama used directly (default settings, its own vector and hybrid modes) and MiniSearch (defaults)
 * measured in the same run, reported as ratios. Writes performance.md, performance.json and
 * performance.svg to docs/ (or --out).
 *
 * Workloads:
 * - SciFact (5,183 abstracts) with its 809 train queries;
 * - the Backlog.md folder (696 real task files) through `openBacklog` + `searchUnified` (snippets
 *   included), queried with words taken from the tasks themselves; hybrid with the bundled model;
 * - synthetic corpora of 1K, 10K and 50K documents made by recombining SciFact and XQuAD paragraphs,
 *   each system in a process of its own (bench/scale.ts): lexical on the text, vector and hybrid on
 *   synthetic vectors.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { loadBeir, type BeirDoc } from '../src/eval/beir.js';
import { percentile } from '../src/eval/metrics.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { miniSearchRetriever, oramaRetriever } from './baselines.js';
import type { Retriever } from '../src/eval/run-eval.js';
import { COLORS, lineChart, svg } from './chart.js';
import { wordQueries, type Latency } from './scale-corpus.js';
import type { Memory, ScaleResult, ScaleSystem } from './scale.js';
import { BACKLOG_MD, EVAL_DIR, ROOT, argValue } from './common.js';

const SIZES = (argValue('--sizes') ?? '1000,10000,50000').split(',').map(Number);
const QUICK = process.argv.includes('--quick');
/** Where performance.md, .json and .svg go (default docs/). */
const OUT = resolve(argValue('--out') ?? join(ROOT, 'docs'));
mkdirSync(OUT, { recursive: true });
/** Heap limit of each scale process (three engines' indexes at 50K documents outgrew the default 4 GB). */
const HEAP_MB = 8192;

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
const backlogDir = BACKLOG_MD;
const t = performance.now();
// Without embeddings searchUnified never awaits: the synchronous timings below time the whole search.
const service = await openBacklog({ dir: backlogDir, cacheDir: false, embeddings: 'none' });
const openMs = performance.now() - t;
const items = service.list({ limit: 1000 }).results.map((r) => service.get(r.id));
const backlogQueries = wordQueries(
  items.map((i) => `${i.title} ${i.body}`),
  QUICK ? 200 : 1000,
);
const unified = latencies((q) => service.searchUnified(q, { limit: 10 }), backlogQueries);
const indexOnly = latencies((q) => service.index.search({ query: q, limit: 10 }), backlogQueries);
// The query language against plain search, same words, in a process of its own (bench/query-language.ts).
const queryLanguageRun = JSON.parse(
  execFileSync(
    process.execPath,
    [
      ...['--import', 'tsx', join(ROOT, 'bench', 'query-language.ts')],
      ...['--queries', String(backlogQueries.length), '--dir', backlogDir],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
    .toString()
    .trim()
    .split('\n')
    .pop()!,
) as { forms: Record<string, Latency>; examples: Record<string, string> };
const queryLanguage = queryLanguageRun.forms;
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
  'The query language (`match_mode: "raw"`) on the same queries, through `searchUnified`, the forms taking',
  'turns query by query (two timed passes after a warm-up pass), in a process of its own',
  '(`npm run bench:query-language`; inside this process the garbage of the runs above made the forms that',
  'allocate more meet more collector pauses):',
  '',
  '| form | example | p50 ms | p95 ms | p99 ms | p95 vs plain |',
  '|---|---|---|---|---|---|',
  ...Object.entries(queryLanguage).map(
    ([form, t]) =>
      `| ${form} | \`${queryLanguageRun.examples[form]}\` | ${t.p50} | ${t.p95} | ${t.p99} | ${round(t.p95 / queryLanguage.plain.p95, 2)}x |`,
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

// 4. Scale: each system at each size in a process of its own (bench/scale.ts), so that its memory is
// its own and one system running out cannot take the others down.
const SCALE_SYSTEMS: ScaleSystem[] = ['ours', 'orama', 'minisearch', 'orama-vectors'];
const SCALE_TIMEOUT_MS = 40 * 60_000;
type ScaleRun = ScaleResult | { n: number; system: ScaleSystem; failed: string; seconds: number };
const failed = (r: ScaleRun | undefined): r is Extract<ScaleRun, { failed: string }> => !r || 'failed' in r;
function runScale(n: number, system: ScaleSystem): ScaleRun {
  const started = performance.now();
  const seconds = () => round((performance.now() - started) / 1000, 0);
  try {
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        `--max-old-space-size=${HEAP_MB}`,
        '--import',
        'tsx',
        join(ROOT, 'bench', 'scale.ts'),
        String(n),
        '--system',
        system,
        '--queries',
        String(QUICK ? 200 : 500),
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: SCALE_TIMEOUT_MS },
    );
    log(`  ${system}: ${seconds()} s`);
    return JSON.parse(out.trim().split('\n').pop()!) as ScaleResult;
  } catch (err) {
    const e = err as { stderr?: string; signal?: string; message: string };
    const stderr = String(e.stderr ?? '');
    const why = /heap out of memory|Allocation failed/i.test(stderr)
      ? `ran out of memory (${HEAP_MB / 1024} GB heap)`
      : e.signal === 'SIGTERM'
        ? `did not finish in ${SCALE_TIMEOUT_MS / 60_000} min`
        : `failed: ${(stderr.split('\n').find((l) => /Error\b/.test(l)) ?? e.message).trim().slice(0, 200)}`;
    log(`  ${system}: ${why} after ${seconds()} s`);
    return { n, system, failed: why, seconds: seconds() };
  }
}

const scaleStarted = performance.now();
const scale: Record<number, Partial<Record<ScaleSystem, ScaleRun>>> = {};
for (const n of SIZES) {
  log(`synthetic ${n} ...`);
  scale[n] = {};
  for (const system of SCALE_SYSTEMS) scale[n][system] = runScale(n, system);
}
const scaleMinutes = round((performance.now() - scaleStarted) / 60_000, 1);
report.scale = scale;
report.scale_minutes = scaleMinutes;

const ratio = (ours: number | undefined, other: number | undefined) =>
  ours && other !== undefined ? `${round(other / ours, 1)}x` : '-';
const mem = (m: Memory) => `${m.heap_mb} / ${m.rss_mb}`;
const lat = (l: Latency | undefined) => (l ? `${l.p50} | ${l.p95} | ${l.p99}` : '- | - | -');
const ok = (n: number, s: ScaleSystem) => {
  const r = scale[n][s];
  return failed(r) ? undefined : r;
};
const skipped = (n: number, s: ScaleSystem, label: string, cols: number) => {
  const r = scale[n][s] as Extract<ScaleRun, { failed: string }>;
  return `| ${label} | ${r.failed} (after ${r.seconds} s) |${' - |'.repeat(cols - 2)}`;
};

md.push(
  '## Scale: synthetic corpora from SciFact and XQuAD paragraphs',
  '',
  'Documents: a SciFact or XQuAD title with 1-3 paragraphs drawn at random (seeded); queries: 2-4',
  `consecutive words of a random document (${QUICK ? 200 : 500} per size, after 30 of them untimed). Each system at each size runs in a`,
  `process of its own (\`bench/scale.ts\`, ${HEAP_MB / 1024} GB heap) that builds the corpus, then the index, then queries it,`,
  'one after the other on the same machine in the same run. Memory: "heap" is the heap growth after',
  'building and querying (after GC); "RSS" is the process RSS growth over the same process before any index',
  '(runtime, corpus and queries loaded). Ratios are the other system over ours: above 1x, ours is faster or smaller.',
  '',
  '**Vectors are synthetic** in the vector and hybrid rows: seeded random unit vectors of 512 dimensions',
  "(the bundled model's size), one per document in both engines (our index would hold one per chunk, see",
  "below); each query's vector is at cosine ≈ 0.9 from the vector of the document its words come from, so",
  "Orama's default similarity threshold (0.8) keeps that document. Embedding 50K documents with the bundled",
  'model would take hours on this machine; the cost of a vector search and of the fusion does not depend on',
  'what the vectors mean. Query embedding is not included (it is measured on real text in the hybrid',
  'section above). Ours: `semantic` is `SemanticIndex.search` (top 100, as the service asks); `hybrid` is',
  "bm25 top 100 + vector top 100 fused by `hybridRank` with the service's facts (the path of",
  "`searchUnified` in hybrid mode, without snippets). Orama: `mode: 'vector'` and `mode: 'hybrid'` with its",
  'defaults (similarity 0.8, hybrid weights 0.5 / 0.5), the same vectors given as `vector[512]`.',
  '',
  `Scale section run time: ${scaleMinutes} min.`,
  '',
);

// At a glance: ratios per size.
md.push(
  '### At a glance (query p95 and memory, other system over ours)',
  '',
  '| documents | ours bm25 p95 ms | Orama bm25 p95 | MiniSearch p95 | ours hybrid p95 ms | Orama hybrid p95 | ours RSS MB, lexical / + vectors | Orama RSS, lexical / + vectors | MiniSearch RSS | ours build s | Orama build | MiniSearch build |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
);
for (const n of SIZES) {
  const ours = ok(n, 'ours');
  const orama = ok(n, 'orama');
  const mini = ok(n, 'minisearch');
  const ov = ok(n, 'orama-vectors');
  const cell = (r: ScaleRun | undefined, f: () => string) => (r && failed(r) ? r.failed : f());
  md.push(
    `| ${n.toLocaleString('en')} | ${ours?.latency.bm25?.p95 ?? '-'} | ${cell(scale[n].orama, () => ratio(ours?.latency.bm25?.p95, orama?.latency.bm25?.p95))} | ${cell(scale[n].minisearch, () => ratio(ours?.latency.bm25?.p95, mini?.latency.bm25?.p95))} | ${ours?.latency.hybrid?.p95 ?? '-'} | ${cell(scale[n]['orama-vectors'], () => ratio(ours?.latency.hybrid?.p95, ov?.latency.hybrid?.p95))} | ${ours ? `${ours.memory.rss_mb} / ${ours.vectors?.memory.rss_mb ?? '-'}` : '-'} | ${ratio(ours?.memory.rss_mb, orama?.memory.rss_mb)} / ${ratio(ours?.vectors?.memory.rss_mb, ov?.memory.rss_mb)} | ${ratio(ours?.memory.rss_mb, mini?.memory.rss_mb)} | ${ours ? round(ours.build_ms / 1000, 1) : '-'} | ${ratio(ours?.build_ms, orama?.build_ms)} | ${ratio(ours?.build_ms, mini?.build_ms)} |`,
  );
}
md.push('');

for (const n of SIZES) {
  const ours = ok(n, 'ours');
  const first = SCALE_SYSTEMS.map((s) => scale[n][s]).find((r) => !failed(r)) as ScaleResult | undefined;
  md.push(
    `### ${n.toLocaleString('en')} documents${first ? ` (${first.text_mb} MB of text; RSS before any index ${first.base_rss_mb} MB)` : ''}`,
    '',
    'Lexical (bm25), real text:',
    '',
    '| system | build ms | start to first result ms | p50 ms | p95 ms | p99 ms | heap / RSS MB | p95 vs ours | build vs ours | RSS vs ours |',
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const s of ['ours', 'orama', 'minisearch'] as const) {
    const r = ok(n, s);
    if (!r) {
      md.push(skipped(n, s, s, 10));
      continue;
    }
    const l = r.latency.bm25;
    md.push(
      `| ${r.name} | ${r.build_ms} | ${r.first_result_ms} | ${lat(l)} | ${mem(r.memory)} | ${ratio(ours?.latency.bm25?.p95, l?.p95)} | ${ratio(ours?.build_ms, r.build_ms)} | ${ratio(ours?.memory.rss_mb, r.memory.rss_mb)} |`,
    );
  }
  md.push(
    '',
    'Vector and hybrid, **synthetic vectors** (512 dims, one per document), same queries:',
    '',
    '| system | mode | build ms (text + vectors) | p50 ms | p95 ms | p99 ms | heap / RSS MB | p95 vs ours, same mode | RSS vs ours |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  const ov = ok(n, 'orama-vectors');
  if (ours?.vectors) {
    const build = `${ours.build_ms} + ${ours.vectors.build_ms}`;
    md.push(
      `| ${ours.name} | semantic (vector top 100) | ${build} | ${lat(ours.latency.semantic)} | ${mem(ours.vectors.memory)} | 1x | 1x |`,
      `| ${ours.name} | hybrid (bm25 100 + vector 100, hybridRank) | ${build} | ${lat(ours.latency.hybrid)} | ${mem(ours.vectors.memory)} | 1x | 1x |`,
    );
  } else md.push(skipped(n, 'ours', 'backlog-search', 9));
  if (ov) {
    md.push(
      `| ${ov.name} | vector (similarity ≥ 0.8: ${ov.vector_hits_mean} hits a query) | ${ov.build_ms} | ${lat(ov.latency.vector)} | ${mem(ov.memory)} | ${ratio(ours?.latency.semantic?.p95, ov.latency.vector?.p95)} | ${ratio(ours?.vectors?.memory.rss_mb, ov.memory.rss_mb)} |`,
      `| ${ov.name} | hybrid (weights 0.5 / 0.5) | ${ov.build_ms} | ${lat(ov.latency.hybrid)} | ${mem(ov.memory)} | ${ratio(ours?.latency.hybrid?.p95, ov.latency.hybrid?.p95)} | ${ratio(ours?.vectors?.memory.rss_mb, ov.memory.rss_mb)} |`,
    );
  } else md.push(skipped(n, 'orama-vectors', 'Orama 3.1.18, default settings', 9));
  md.push('');
  if (ours?.cache && ours.vectors)
    md.push(
      `Ours, start to first result: cold (build the index, nothing cached) ${ours.first_result_ms} ms; warm from the cache file`,
      `(${ours.cache.index_file_mb} MB: the index and the items, as \`openBacklog\` writes \`.cache/index.bin\`) ${ours.cache.restore_to_first_result_ms} ms;`,
      `hybrid ready from the embedding cache (${ours.cache.vectors_file_mb} MB, int8) ${ours.cache.restore_to_hybrid_ready_ms} ms after start. Peak RSS of the process ${ours.peak_rss_mb} MB.`,
      `Chunked for the bundled model (70-word windows) these documents would give ${ours.vectors.deployed_chunks_per_doc} vectors each, and a vector`,
      'search scores every chunk: that many times the vector work above (the fusion and bm25 parts do not change).',
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

// The chart: query p95 (bm25, hybrid) and RSS growth against corpus size, every system at every size
// (a system that did not finish at a size leaves a gap).
if (SIZES.length > 1) {
  const xs = [...SIZES].sort((a, b) => a - b);
  const line = (name: string, s: ScaleSystem, f: (r: ScaleResult) => number | undefined) => ({
    name,
    values: xs.map((n) => {
      const r = ok(n, s);
      return r ? (f(r) ?? NaN) : NaN;
    }),
  });
  const panel = { width: 430, height: 280 };
  writeFileSync(
    join(OUT, 'performance.svg'),
    svg(1290, 280, [
      lineChart({
        ...panel,
        title: 'bm25 query p95 (ms, log)',
        xs,
        yLabel: 'ms',
        logY: true,
        series: [
          line('backlog-search', 'ours', (r) => r.latency.bm25?.p95),
          line('Orama defaults', 'orama', (r) => r.latency.bm25?.p95),
          line('MiniSearch defaults', 'minisearch', (r) => r.latency.bm25?.p95),
        ],
      }),
      lineChart({
        ...panel,
        x: 430,
        title: 'hybrid / vector query p95 (ms, log; synthetic vectors)',
        xs,
        yLabel: 'ms',
        logY: true,
        series: [
          line('backlog-search hybrid', 'ours', (r) => r.latency.hybrid?.p95),
          line('Orama hybrid', 'orama-vectors', (r) => r.latency.hybrid?.p95),
          line('backlog-search semantic', 'ours', (r) => r.latency.semantic?.p95),
          line('Orama vector', 'orama-vectors', (r) => r.latency.vector?.p95),
        ],
        colors: [COLORS[0], COLORS[1], COLORS[4], COLORS[3]],
      }),
      lineChart({
        ...panel,
        x: 860,
        title: 'RSS growth over the process (MB, log)',
        xs,
        yLabel: 'MB',
        logY: true,
        series: [
          line('backlog-search', 'ours', (r) => r.memory.rss_mb),
          line('Orama defaults', 'orama', (r) => r.memory.rss_mb),
          line('MiniSearch defaults', 'minisearch', (r) => r.memory.rss_mb),
          line('backlog-search + vectors', 'ours', (r) => r.vectors?.memory.rss_mb),
          line('Orama + vectors', 'orama-vectors', (r) => r.memory.rss_mb),
        ],
        colors: [COLORS[0], COLORS[1], COLORS[2], COLORS[4], COLORS[3]],
      }),
    ]),
  );
  md.push('![Query p95 and RSS against corpus size](performance.svg)', '');
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
  'when node runs with --expose-gc). Numbers are lexical (bm25) except in the hybrid section and the',
  'vector and hybrid rows of the scale section.',
  '',
];
// npm run bench:hybrid-ready's own section (an hour of runs: not re-measured here), kept in the page.
const hybridReady = join(OUT, 'hybrid-ready.md');
writeFileSync(
  join(OUT, 'performance.md'),
  [
    ...header,
    ...md,
    `Process RSS at the end of the run: ${rss} MB.`,
    '',
    ...(existsSync(hybridReady) ? [readFileSync(hybridReady, 'utf8')] : []),
  ].join('\n'),
);
writeFileSync(join(OUT, 'performance.json'), JSON.stringify(report, null, 2));
process.stdout.write([...header, ...md].join('\n'));
