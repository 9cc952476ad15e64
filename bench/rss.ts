/**
 * Memory of the service alone, in a process of its own: opens a backlog folder with the bundled model
 * (`embeddings: 'bundled', embedMissing: 'background'`), waits for the semantic index, runs hybrid
 * queries, and prints one JSON object on stdout (progress goes to stderr). RSS is the whole process:
 * the main thread, the embedding worker threads and every WASM heap.
 *
 *   npx tsx bench/rss.ts --phase cold   # empties the cache folder first: embeds every chunk (minutes)
 *   npx tsx bench/rss.ts --phase warm   # everything cached
 *
 * Options: --dir (default ../shared/eval/backlog-md), --cache (default .cache/bench/rss/<folder name>;
 * never inside the backlog folder), --queries FILE (JSON array of strings; `-` reads stdin; default:
 * words from the items' titles), --limit N (queries run, default 100), --sample-ms (default 100).
 *
 * bench/hybrid-perf.ts spawns this script for the RSS row of docs/performance.md.
 */
import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    phase: { type: 'string', default: 'warm' },
    dir: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'backlog-md') },
    cache: { type: 'string' },
    queries: { type: 'string' },
    limit: { type: 'string', default: '100' },
    'sample-ms': { type: 'string', default: '100' },
  },
});
if (args.phase !== 'cold' && args.phase !== 'warm') throw new Error('--phase is cold or warm');
const dir = resolve(args.dir);
const cacheDir = resolve(args.cache ?? join(ROOT, '.cache', 'bench', 'rss', basename(dir)));
const inside = relative(dir, cacheDir);
if (!inside.startsWith('..') && !inside.startsWith('/'))
  throw new Error(`--cache ${cacheDir} is inside the backlog folder ${dir}; refusing to write there`);
const log = (s: string) => process.stderr.write(`[rss ${args.phase}] ${s}\n`);

const MB = 2 ** 20;
const mb = (bytes: number) => Math.round(bytes / MB);

/** Resident memory by kind from /proc (Linux): anonymous (heaps, WASM memories) vs mapped files (code). */
function procStatus(): Record<string, number> {
  try {
    const text = readFileSync('/proc/self/status', 'utf8');
    const pick = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return {
      rss_anon_mb: Math.round(pick('RssAnon') / 1024),
      rss_file_mb: Math.round(pick('RssFile') / 1024),
      threads: pick('Threads'),
    };
  } catch {
    return {};
  }
}

/** The process's memory now: RSS, and this (main) thread's V8 heap, external and ArrayBuffer bytes. */
function snapshot() {
  const m = process.memoryUsage();
  return {
    rss_mb: mb(m.rss),
    main_heap_used_mb: mb(m.heapUsed),
    main_heap_total_mb: mb(m.heapTotal),
    main_external_mb: mb(m.external),
    main_array_buffers_mb: mb(m.arrayBuffers),
    ...procStatus(),
  };
}

const gc = (globalThis as { gc?: () => void }).gc;
const settle = async (ms = 500) => {
  gc?.();
  await new Promise((r) => setTimeout(r, ms));
};

async function queriesFrom(service: Awaited<ReturnType<typeof openBacklog>>): Promise<string[]> {
  if (args.queries) {
    const text = args.queries === '-' ? readFileSync(0, 'utf8') : await readFile(args.queries, 'utf8');
    return JSON.parse(text) as string[];
  }
  // Two or three words of each title: real vocabulary, and each query embeds once.
  return service
    .list({ limit: 1000 })
    .results.map((r) =>
      r.title
        .split(/\s+/)
        .slice(0, 2 + (r.title.length % 2))
        .join(' '),
    )
    .filter((q) => q.trim().length > 0);
}

if (args.phase === 'cold') await rm(cacheDir, { recursive: true, force: true });
await settle();
const before = snapshot();
let peak = before.rss_mb;
let peakAt = 'before';
let stage = 'opening';
const sampler = setInterval(
  () => {
    const rss = mb(process.memoryUsage.rss());
    if (rss > peak) {
      peak = rss;
      peakAt = stage;
    }
  },
  Math.max(10, Number(args['sample-ms'])),
);

log(`opening ${dir} (cache ${cacheDir})`);
const t0 = performance.now();
const service = await openBacklog({ dir, cacheDir, embeddings: 'bundled', embedMissing: 'background' });
const queries = (await queriesFrom(service)).slice(0, Math.max(1, Number(args.limit)));
await service.searchUnified(queries[0], { limit: 10 });
const firstResultMs = performance.now() - t0;
stage = 'building';
const opened = snapshot();
log(`first result after ${Math.round(firstResultMs)} ms; waiting for the semantic index`);
await service.semanticReady();
const readyMs = performance.now() - t0;
const status = service.semanticStatus();
const items = service.list({ limit: 1 }).total;
const justReady = snapshot();
log(`semantic ${status.state} after ${(readyMs / 1000).toFixed(1)} s (${status.total} chunks)`);
stage = 'after build';
await settle(2000);
const afterBuild = snapshot();

stage = 'queries';
log(`${queries.length} hybrid queries, then the same again`);
const times: number[] = [];
for (const round of [0, 1]) {
  for (const q of queries) {
    const s = performance.now();
    await service.searchUnified(q, { limit: 10, mode: 'hybrid' });
    if (round === 0) times.push(performance.now() - s);
  }
}
stage = 'after queries';
await settle(1000);
const afterQueries = snapshot();
clearInterval(sampler);
await closeBacklog(service);

times.sort((a, b) => a - b);
const result = {
  phase: args.phase,
  node: process.version,
  gc_exposed: gc !== undefined,
  items,
  chunks: status.total,
  semantic_state: status.state,
  warnings: status.warnings,
  queries: queries.length,
  first_result_ms: Math.round(firstResultMs),
  semantic_ready_ms: Math.round(readyMs),
  hybrid_fresh_p50_ms: Number(times[Math.floor(times.length / 2)].toFixed(2)),
  rss_mb: {
    before: before.rss_mb,
    peak,
    after_build: afterBuild.rss_mb,
    after_queries: afterQueries.rss_mb,
  },
  peak_during: peakAt,
  detail: { before, opened, just_ready: justReady, after_build: afterBuild, after_queries: afterQueries },
};
process.stdout.write(`${JSON.stringify(result)}\n`);
