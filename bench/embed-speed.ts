/**
 * The speed of the initial embedding on the path `backlog-search eval <scifact> --mode hybrid` takes
 * (embeddingRetriever in src/eval/run-eval.ts): one `SemanticIndex.upsert` of SciFact abstracts on an
 * `EmbeddingPool` of min(2, cores) workers with the bundled model, no cache. Each run is a process of its
 * own; the variants take turns (`--rounds`), so that a shared machine's load falls on all of them alike.
 *
 *   npx tsx bench/embed-speed.ts --limit 400 --rounds 3 --variants head,young-v8
 *   npx tsx bench/embed-speed.ts --variants head,base --baseline-ref f52d35f^   # code at another commit
 *
 * A run reports chunks, CPU seconds of the whole process (every thread: process.cpuUsage) for loading the
 * pool and for the embedding, the embedding's CPU ms per chunk and chunks per wall second, its peak RSS
 * and its workers' WebAssembly heaps. The summary gives each variant's median CPU per chunk and its ratio
 * to the first variant's, round by round (same round, neighbouring processes). The full corpus's estimate
 * is the CPU per chunk times its chunk count, over 2 cores.
 *
 * Options: --limit N abstracts (default 400, spread evenly over the corpus), --rounds R (default 3),
 * --variants (default head; see VARIANTS), --workers N (default min(2, cores), as eval), --data DIR
 * (default ../shared/eval/scifact), --baseline-ref REF (the code of the `base` variant), --json.
 * Run it under `nice` on a shared machine. The code is compiled with tsc into a temp folder and run by
 * plain node, as the package runs (bench/compile.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ResourceLimits } from 'node:worker_threads';
import { compileBench } from './compile.js';

const HERE = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    limit: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'head' },
    workers: { type: 'string' },
    data: { type: 'string', default: join(ROOT, '..', 'shared', 'eval', 'scifact') },
    'baseline-ref': { type: 'string', default: 'HEAD' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});
const log = (s: string) => process.stderr.write(`[embed-speed] ${s}\n`);

interface Variant {
  what: string;
  /** `base`: the code at --baseline-ref; else this tree. */
  code?: 'base';
  resourceLimits?: ResourceLimits;
  batchSize?: number;
  maxBatchChars?: number;
  env?: Record<string, string>;
}

/** What each variant changes against this tree's defaults. */
const VARIANTS: Record<string, Variant> = {
  head: { what: "this tree's defaults" },
  base: { what: 'the code at --baseline-ref', code: 'base' },
  'young-v8': {
    what: "V8's default young generation in the workers (no DEFAULT_WORKER_LIMITS)",
    resourceLimits: {},
  },
  young16: { what: 'a 16 MB young generation', resourceLimits: { maxYoungGenerationSizeMb: 16 } },
  young32: { what: 'a 32 MB young generation', resourceLimits: { maxYoungGenerationSizeMb: 32 } },
  batch32: { what: 'batches of 32 texts / 8,000 chars', batchSize: 32, maxBatchChars: 8000 },
};

interface RunResult {
  variant: string;
  docs: number;
  chunks: number;
  workers: number;
  load_cpu_s: number;
  load_wall_s: number;
  embed_cpu_s: number;
  embed_wall_s: number;
  cpu_ms_per_chunk: number;
  chunks_per_wall_s: number;
  peak_rss_mb: number;
  wasm_mb: number[];
  load_avg: number;
  /** Vector search alone (the part embeddings decide) over the sample, for the train queries with a judged document in it. */
  semantic_queries: number;
  semantic_ndcg_at_10: number;
  /** SHA-1 of every such query's top 10 ids in order: equal means the same answers. */
  rankings_sha1: string;
}

async function child(name: string): Promise<void> {
  const v = VARIANTS[name];
  const { loadBeir } = await import('../src/eval/beir.js');
  const { EmbeddingPool, SemanticIndex } = await import('../src/embeddings/index.js');
  const data = await loadBeir(resolve(args.data), 'train');
  const limit = Math.min(data.docs.length, Math.max(1, Number(args.limit)));
  const step = data.docs.length / limit;
  const docs = Array.from({ length: limit }, (_, i) => data.docs[Math.floor(i * step)]);
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const c0 = cpu();
  const t0 = performance.now();
  const { embedder: pool } = await EmbeddingPool.start({
    provider: 'bundled',
    ...(args.workers ? { workers: Number(args.workers) } : {}),
    ...(v.resourceLimits ? { resourceLimits: v.resourceLimits } : {}),
    ...(v.batchSize ? { batchSize: v.batchSize } : {}),
    ...(v.maxBatchChars ? { maxBatchChars: v.maxBatchChars } : {}),
  });
  if (!pool) throw new Error('the bundled model did not load');
  const c1 = cpu();
  const t1 = performance.now();
  const semantic = new SemanticIndex({ embedder: pool });
  const r = await semantic.upsert(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  const c2 = cpu();
  const t2 = performance.now();
  // Older code (a --baseline-ref) may have no workerMemory.
  const memoryOf = (pool as { workerMemory?: () => Promise<{ wasm?: number }[]> }).workerMemory;
  // The answers: vector search alone for the train queries that have a judged document in the sample.
  const { ndcgAtK } = await import('../src/eval/metrics.js');
  const inSample = new Set(docs.map((d) => d.id));
  const queries = data.queries.filter((q) =>
    [...(data.qrels.get(q.id)?.keys() ?? [])].some((id) => inSample.has(id)),
  );
  const hash = createHash('sha1');
  let ndcg = 0;
  for (const q of queries) {
    const hits = await semantic.search(q.text, 10);
    hash.update(`${q.id}:${hits.map((h) => h.docId).join(',')}\n`);
    ndcg += ndcgAtK(
      hits.map((h) => h.docId),
      data.qrels.get(q.id)!,
      10,
    );
  }
  const wasm = ((await memoryOf?.call(pool)) ?? []).map((m) => Math.round((m.wasm ?? 0) / 2 ** 20));
  const result: RunResult = {
    variant: name,
    docs: limit,
    chunks: r.embedded,
    workers: pool.workerCount,
    load_cpu_s: round(c1 - c0, 2),
    load_wall_s: round((t1 - t0) / 1000, 2),
    embed_cpu_s: round(c2 - c1, 2),
    embed_wall_s: round((t2 - t1) / 1000, 2),
    cpu_ms_per_chunk: round(((c2 - c1) * 1000) / r.embedded, 2),
    chunks_per_wall_s: round(r.embedded / ((t2 - t1) / 1000), 2),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    wasm_mb: wasm,
    load_avg: round(os.loadavg()[0], 2),
    semantic_queries: queries.length,
    semantic_ndcg_at_10: round(ndcg / Math.max(1, queries.length), 4),
    rankings_sha1: hash.digest('hex'),
  };
  await pool.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The code at `ref` (src/) with this bench beside it, in a temp folder. */
async function baseTree(ref: string): Promise<string> {
  const tree = await mkdtemp(join(os.tmpdir(), 'bs-embed-speed-src-'));
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${ref}" src | tar -x -C "${tree}"`]);
  mkdirSync(join(tree, 'bench'), { recursive: true });
  cpSync(HERE, join(tree, 'bench', 'embed-speed.ts'));
  cpSync(join(ROOT, 'bench', 'compile.ts'), join(tree, 'bench', 'compile.ts'));
  await symlink(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
  await writeFile(join(tree, 'package.json'), JSON.stringify({ type: 'module' }));
  return tree;
}

async function parent(): Promise<void> {
  const names = args.variants.split(',').filter(Boolean);
  for (const n of names)
    if (!VARIANTS[n]) throw new Error(`unknown variant ${n}: ${Object.keys(VARIANTS).join(', ')}`);
  const temps: string[] = [];
  const scripts = new Map<string, string>();
  try {
    for (const code of new Set(names.map((n) => VARIANTS[n].code ?? 'head'))) {
      const tree = code === 'base' ? await baseTree(args['baseline-ref']) : ROOT;
      if (tree !== ROOT) temps.push(tree);
      const out = await compileBench(tree, 'embed-speed');
      temps.push(out);
      scripts.set(code, join(out, 'bench', 'embed-speed.js'));
    }
    const runs: RunResult[][] = [];
    for (let round = 0; round < Math.max(1, Number(args.rounds)); round++) {
      const row: RunResult[] = [];
      for (const n of names) {
        const script = scripts.get(VARIANTS[n].code ?? 'head')!;
        const passOn = [...process.argv.slice(2).filter((a) => a !== '--json'), '--data', resolve(args.data)];
        const res = spawnSync(process.execPath, [script, ...passOn, '--child', n], {
          encoding: 'utf8',
          env: { ...process.env, ...VARIANTS[n].env },
          stdio: ['ignore', 'pipe', 'inherit'],
          maxBuffer: 1 << 24,
        });
        if (res.status !== 0) throw new Error(`${n} failed (${res.status})`);
        const r = JSON.parse(res.stdout.trim().split('\n').pop()!) as RunResult;
        log(
          `round ${round + 1} ${n}: ${r.chunks} chunks, ${r.cpu_ms_per_chunk} CPU ms/chunk, ` +
            `${r.chunks_per_wall_s} chunks/s, embed ${r.embed_cpu_s} CPU s / ${r.embed_wall_s} s, ` +
            `load ${r.load_cpu_s} CPU s, peak RSS ${r.peak_rss_mb} MB, wasm ${r.wasm_mb.join('/')} MB, load avg ${r.load_avg}`,
        );
        row.push(r);
      }
      runs.push(row);
    }
    const summary = names.map((n, i) => {
      const mine = runs.map((row) => row[i]);
      return {
        variant: n,
        what: VARIANTS[n].what,
        chunks: mine[0].chunks,
        cpu_ms_per_chunk: median(mine.map((r) => r.cpu_ms_per_chunk)),
        ratio_to_first_by_round: runs.map((row) =>
          round(row[i].cpu_ms_per_chunk / row[0].cpu_ms_per_chunk, 3),
        ),
        chunks_per_wall_s: median(mine.map((r) => r.chunks_per_wall_s)),
        semantic_ndcg_at_10: mine[0].semantic_ndcg_at_10,
        semantic_queries: mine[0].semantic_queries,
        rankings_sha1: [...new Set(mine.map((r) => r.rankings_sha1))],
        peak_rss_mb: median(mine.map((r) => r.peak_rss_mb)),
        wasm_mb: mine[mine.length - 1].wasm_mb,
      };
    });
    const report = {
      date: new Date().toISOString(),
      command: `npx tsx bench/embed-speed.ts ${process.argv.slice(2).join(' ')}`.trim(),
      baseline_ref: names.some((n) => VARIANTS[n].code === 'base') ? args['baseline-ref'] : undefined,
      summary,
      runs,
    };
    if (args.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else
      for (const s of summary)
        process.stdout.write(
          `${s.variant}: ${s.chunks} chunks, ${s.cpu_ms_per_chunk} CPU ms/chunk (ratio to ${names[0]} by round: ` +
            `${s.ratio_to_first_by_round.join(', ')}), ${s.chunks_per_wall_s} chunks/s, peak RSS ${s.peak_rss_mb} MB, wasm ${s.wasm_mb.join('/')} MB; ` +
            `vector search nDCG@10 ${s.semantic_ndcg_at_10} over ${s.semantic_queries} queries, answers ${s.rankings_sha1.map((h) => h.slice(0, 10)).join('/')}\n`,
        );
  } finally {
    for (const t of temps) await rm(t, { recursive: true, force: true });
  }
}

if (args.child) await child(args.child);
else await parent();
