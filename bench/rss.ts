/**
 * Memory of the service alone, in a process of its own: opens a backlog folder with the bundled model
 * (`embeddings: 'bundled', embedMissing: 'background'`), waits for the semantic index, runs hybrid
 * queries, and prints one JSON object on stdout (progress goes to stderr). RSS is the whole process:
 * the main thread, the embedding worker threads and every WASM heap.
 *
 *   npx tsx bench/rss.ts --phase cold   # empties the cache folder first: embeds every chunk (minutes)
 *   npx tsx bench/rss.ts --phase warm   # everything cached
 *   npx tsx bench/rss.ts --phase both   # cold, then warm, each in a process of its own: { cold, warm }
 *
 * Measured on compiled JavaScript, as the service runs when installed: this script and the sources it
 * imports are compiled with tsc into a temporary folder and run there by plain `node` (tsx would add its
 * loader thread and transforms: about 35 MB more on the main thread and 15 MB per worker).
 * `--source` measures right here under tsx instead.
 *
 * Options: --dir (default ../shared/eval/backlog-md), --cache (default .cache/bench/rss/<folder name>;
 * never inside the backlog folder), --queries FILE (JSON array of strings; `-` reads stdin; default:
 * words from the items' titles), --limit N (queries run, default 100), --sample-ms (default 100),
 * --workers N (embedding workers for the initial build; default the service's: the cores, at most 2, that
 * its memory budget leaves room for), --memory-budget MB (the service's budget, default 400),
 * --idle-ms N (after the queries, wait this long and measure again: what V8 gives back when idle).
 *
 * bench/hybrid-perf.ts spawns this script for the RSS row of docs/performance.md.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compileBench } from './compile.js';
import type { SemanticSearch } from '../src/embeddings/semantic-search.js';

type Phase = 'cold' | 'warm';
const HERE = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    phase: { type: 'string', default: 'warm' },
    dir: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'backlog-md') },
    cache: { type: 'string' },
    queries: { type: 'string' },
    limit: { type: 'string', default: '100' },
    'sample-ms': { type: 'string', default: '100' },
    source: { type: 'boolean', default: false },
    workers: { type: 'string' },
    'memory-budget': { type: 'string' },
    'idle-ms': { type: 'string', default: '0' },
  },
});
if (!['cold', 'warm', 'both'].includes(args.phase)) throw new Error('--phase is cold, warm or both');
const dir = resolve(args.dir);
const cacheDir = resolve(args.cache ?? join(ROOT, '.cache', 'bench', 'rss', basename(dir)));
const inside = relative(dir, cacheDir);
if (!inside.startsWith('..') && !inside.startsWith('/'))
  throw new Error(`--cache ${cacheDir} is inside the backlog folder ${dir}; refusing to write there`);
const log = (s: string) => process.stderr.write(`[rss] ${s}\n`);

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One phase, measured in this process. */
async function measure(phase: Phase) {
  const { closeBacklog, openBacklog } = await import('../src/service/open-backlog.js');
  type Service = Awaited<ReturnType<typeof openBacklog>>;

  /** The semantic side's own account: each worker's heap and WASM memory, the vector index, the cache. */
  const semanticMemory = async (service: Service) => {
    const semantic = (service as unknown as { semantic: Partial<SemanticSearch> }).semantic;
    if (!semantic.memory) return {}; // an older service (comparisons against earlier commits)
    const m = await semantic.memory();
    return {
      workers: m.workers.map((w) => ({
        heap_used_mb: mb(w.heapUsed),
        heap_total_mb: mb(w.heapTotal),
        external_mb: mb(w.external),
        ...(w.wasm ? { wasm_mb: mb(w.wasm) } : {}),
      })),
      vector_index_mb: Number((m.vectorIndexBytes / MB).toFixed(1)),
      embedding_cache_mb: Number((m.cacheBytes / MB).toFixed(1)),
    };
  };

  const queriesFrom = async (service: Service): Promise<string[]> => {
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
  };

  if (phase === 'cold') await rm(cacheDir, { recursive: true, force: true });
  await sleep(500);
  const before = snapshot();
  let peak = before.rss_mb;
  let peakAt = 'before';
  let peakDone: number | undefined;
  const started = performance.now();
  let peakMs = 0;
  let stage = 'opening';
  let service: Service | undefined = undefined;
  // Halfway through the embedding (cold): where the memory is while every worker runs.
  let midBuild: Promise<Record<string, unknown>> | undefined;
  const sampler = setInterval(
    () => {
      const rss = mb(process.memoryUsage.rss());
      const status = service?.semanticStatus();
      if (rss > peak) {
        peak = rss;
        peakAt = stage;
        peakMs = performance.now() - started;
        peakDone = status?.state === 'indexing' ? status.done : undefined;
      }
      if (service && !midBuild && status?.state === 'indexing' && status.done >= status.total / 2) {
        const s = service;
        midBuild = semanticMemory(s).then((m) => ({ ...snapshot(), ...m, done: status.done }));
      }
    },
    Math.max(10, Number(args['sample-ms'])),
  );

  log(`${phase}: opening ${dir} (cache ${cacheDir})`);
  const t0 = performance.now();
  service = await openBacklog({
    dir,
    cacheDir,
    embeddings: 'bundled',
    embedMissing: 'background',
    ...(args.workers ? { embeddingWorkers: Number(args.workers) } : {}),
    ...(args['memory-budget'] ? { memoryBudgetMb: Number(args['memory-budget']) } : {}),
  });
  const queries = (await queriesFrom(service)).slice(0, Math.max(1, Number(args.limit)));
  await service.searchUnified(queries[0], { limit: 10 });
  const firstResultMs = performance.now() - t0;
  stage = 'building';
  const opened = snapshot();
  log(`${phase}: first result after ${Math.round(firstResultMs)} ms; waiting for the semantic index`);
  await service.semanticReady();
  const readyMs = performance.now() - t0;
  const status = service.semanticStatus();
  const items = service.list({ limit: 1 }).total;
  log(`${phase}: semantic ${status.state} after ${(readyMs / 1000).toFixed(1)} s (${status.total} chunks)`);
  stage = 'after build';
  await sleep(2000);
  const afterBuild = { ...snapshot(), ...(await semanticMemory(service)) };

  stage = 'queries';
  log(`${phase}: ${queries.length} hybrid queries, then the same again`);
  const times: number[] = [];
  for (const round of [0, 1]) {
    for (const q of queries) {
      const s = performance.now();
      await service.searchUnified(q, { limit: 10, mode: 'hybrid' });
      if (round === 0) times.push(performance.now() - s);
    }
  }
  stage = 'after queries';
  await sleep(1000);
  const afterQueries = { ...snapshot(), ...(await semanticMemory(service)) };
  const idleMs = Number(args['idle-ms']);
  let idle: typeof afterQueries | undefined;
  if (idleMs > 0) {
    stage = 'idle';
    log(`${phase}: idle for ${idleMs} ms`);
    await sleep(idleMs);
    idle = { ...snapshot(), ...(await semanticMemory(service)) };
  }
  clearInterval(sampler);
  await closeBacklog(service);

  times.sort((a, b) => a - b);
  return {
    phase,
    node: process.version,
    compiled: !HERE.endsWith('.ts'),
    items,
    chunks: status.total,
    semantic_state: status.state,
    build_workers: status.buildWorkers,
    build_note: status.buildNote,
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
      ...(idle ? { idle: idle.rss_mb } : {}),
    },
    peak_during: peakAt,
    peak_after_ms: Math.round(peakMs),
    ...(peakDone !== undefined ? { peak_at_chunks_done: peakDone } : {}),
    detail: {
      before,
      opened,
      ...(midBuild ? { mid_build: await midBuild } : {}),
      after_build: afterBuild,
      after_queries: afterQueries,
      ...(idle ? { idle } : {}),
    },
  };
}

/** Compiles this script (and the worker, which nothing imports statically) into a temporary folder. */
async function compile(): Promise<string> {
  return join(await compileBench(ROOT, 'rss'), 'bench', 'rss.js');
}

/** Runs one phase in a new process (the compiled script, or this one under tsx) and returns its JSON. */
function runPhase(script: string, phase: Phase, queries: string | undefined) {
  const argv = [
    ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []),
    script,
    ...['--phase', phase, '--dir', dir, '--cache', cacheDir, '--limit', args.limit],
    ...['--sample-ms', args['sample-ms'], '--source'],
    ...(args.workers ? ['--workers', args.workers] : []),
    ...(args['memory-budget'] ? ['--memory-budget', args['memory-budget']] : []),
    ...['--idle-ms', args['idle-ms']],
    ...(queries !== undefined ? ['--queries', '-'] : []),
  ];
  const child = spawnSync(process.execPath, argv, {
    cwd: ROOT,
    input: queries ?? '',
    stdio: ['pipe', 'pipe', 'inherit'],
    maxBuffer: 64 * MB,
  });
  if (child.status !== 0) throw new Error(`rss ${phase} exited with ${child.status ?? child.signal}`);
  const lines = child.stdout.toString().trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Awaited<ReturnType<typeof measure>>;
}

if (args.source && args.phase !== 'both') {
  // The measuring process itself.
  process.stdout.write(`${JSON.stringify(await measure(args.phase as Phase))}\n`);
} else {
  const queries =
    args.queries === undefined
      ? undefined
      : args.queries === '-'
        ? readFileSync(0, 'utf8')
        : await readFile(args.queries, 'utf8');
  let script = HERE;
  let compiledTo: string | undefined;
  if (!args.source && HERE.endsWith('.ts')) {
    log('compiling (tsc) to measure the JavaScript the package ships ...');
    script = await compile();
    compiledTo = resolve(script, '..', '..');
  }
  try {
    const phases: Phase[] = args.phase === 'both' ? ['cold', 'warm'] : [args.phase as Phase];
    const results = phases.map((p) => runPhase(script, p, queries));
    const out = args.phase === 'both' ? { cold: results[0], warm: results[1] } : results[0];
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    if (compiledTo) await rm(compiledTo, { recursive: true, force: true });
  }
}
