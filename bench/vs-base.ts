/**
 * This checkout against another one (a pristine checkout of main, say) on the two speed guards of the
 * language work (issue #12), measured in the same run, in alternating child processes so both see the
 * same machine load:
 * - SciFact index build (5,183 abstracts): a fresh process builds once (cold: modules and the language
 *   detector load during the build) and then again (warm);
 * - lexical `searchUnified` on the Backlog.md folder (snippets included, no embeddings): p50/p95 of 300
 *   queries of 2-4 title words (seeded, as bench/unified.ts), one untimed pass then 3 timed, once the background work that
 *   follows an open (the languages settled, the bodies prepared for snippets, proximity's filters filled) is done: a server's
 *   steady state. How long that background work takes after the open is reported as `warm_ms`.
 *
 *   git worktree add --detach ../wt-base main && (cd ../wt-base && npm ci)
 *   npx tsx bench/vs-base.ts --base ../wt-base [--rounds 5] [--this-search '{"proximity":0}'] [--queries-only]
 *     [--warm-passes 1] [--compiled]   (--compiled: run `npm run build` here first)
 *
 * Prints one JSON object: medians per side, the ratios this / base of those medians, and the median of
 * each round's own ratio (`paired`).
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { titleQueries } from './scale-corpus.js';
import { percentile } from '../src/eval/metrics.js';
import { BACKLOG_MD, EVAL_DIR, ROOT } from './common.js';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    child: { type: 'string' },
    part: { type: 'string' },
    // Search settings for this checkout's queries (JSON), e.g. '{"proximity":0}' to see a ranking feature's share.
    'this-search': { type: 'string' },
    // Only the queries (no SciFact builds): a quicker loop while working on query speed.
    'queries-only': { type: 'boolean', default: false },
    // Untimed passes over the queries before the timed ones (the JIT's warm-up; 1 is the guard's protocol).
    'warm-passes': { type: 'string', default: '1' },
    // Each side's compiled dist/ (what users run; build this one first) instead of its src/ through tsx,
    // whose keepNames wraps every closure a call creates in a __name call.
    compiled: { type: 'boolean', default: false },
  },
});

interface ChildResult {
  cold_build_ms: number;
  warm_build_ms: number;
  /** CPU time of the process (every thread: the detector's worker too) during each build. */
  cold_cpu_ms: number;
  warm_cpu_ms: number;
  p50_ms: number;
  p95_ms: number;
  /** From the end of `openBacklog` until the languages settled and the snippet bodies are prepared. */
  warm_ms: number;
}

/** A module of the checkout at `root`: its TypeScript source, or with --compiled its dist/ JavaScript. */
const codeOf = (root: string, module: string) =>
  args.compiled ? join(root, 'dist', `${module}.js`) : join(root, 'src', `${module}.ts`);

type BuildResult = Pick<ChildResult, 'cold_build_ms' | 'warm_build_ms' | 'cold_cpu_ms' | 'warm_cpu_ms'>;
type QueryResult = Pick<ChildResult, 'p50_ms' | 'p95_ms' | 'warm_ms'>;

/**
 * The builds, in a process of their own (the queries get a fresh one: what the JIT learns from one
 * workload is not carried into the other), with the code of the checkout at `root`.
 */
async function buildChild(root: string): Promise<BuildResult> {
  const { loadBeir } = await import(join(ROOT, 'src/eval/beir.ts'));
  const scifact = await loadBeir(join(EVAL_DIR, 'scifact'), 'train');
  const docs = scifact.docs.map((d: { id: string; title: string; text: string }) => ({
    id: d.id,
    title: d.title,
    body: d.text,
  }));
  const build = async () => {
    const { OramaSearchService } = await import(codeOf(root, 'search/orama-search-service'));
    const cpu = process.cpuUsage();
    const t = performance.now();
    const service = new OramaSearchService();
    await service.build(docs);
    await service.languagesSettled?.();
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    // Its background work (snippet bodies, proximity's filters) is done before anything else is timed.
    await (service.warmedUp ?? service.snippetsReady)?.call(service);
    return { wall, cpu: (used.user + used.system) / 1000 };
  };
  const cold = await build();
  const warm = await build();
  return {
    cold_build_ms: cold.wall,
    warm_build_ms: warm.wall,
    cold_cpu_ms: cold.cpu,
    warm_cpu_ms: warm.cpu,
  };
}

/** The Backlog.md queries, in a process of their own, after one untimed pass over them. */
async function queryChild(root: string): Promise<QueryResult> {
  const { openBacklog, closeBacklog } = await import(codeOf(root, 'service/open-backlog'));
  const service = await openBacklog({
    dir: BACKLOG_MD,
    cacheDir: false,
    embeddings: 'none',
    ...(root === ROOT && args['this-search'] ? { search: JSON.parse(args['this-search']) } : {}),
  });
  const opened = performance.now();
  const index = (
    service as {
      index?: {
        languagesSettled?(): Promise<void>;
        snippetsReady?(): Promise<void>;
        warmedUp?(): Promise<void>;
      };
    }
  ).index;
  await index?.languagesSettled?.();
  await index?.snippetsReady?.();
  await index?.warmedUp?.();
  const warmMs = performance.now() - opened;
  const items = (service.ids() as string[]).map((id) => service.get(id) as { title: string });
  const queries = titleQueries(
    items.map((i) => i.title),
    300,
  );
  for (let pass = 0; pass < Number(args['warm-passes']); pass++)
    for (const q of queries) await service.searchUnified(q, { limit: 20 });
  const times: number[] = [];
  for (let pass = 0; pass < 3; pass++)
    for (const q of queries) {
      const t = performance.now();
      await service.searchUnified(q, { limit: 20 });
      times.push(performance.now() - t);
    }
  await closeBacklog(service);
  return {
    p50_ms: percentile(times, 50),
    p95_ms: percentile(times, 95),
    warm_ms: warmMs,
  };
}

function runChild(root: string): ChildResult {
  const run = (part: 'build' | 'query') => {
    const out = execFileSync(
      process.execPath,
      [
        ...['--import', 'tsx', fileURLToPath(import.meta.url), '--child', root, '--part', part],
        ...(args['this-search'] ? ['--this-search', args['this-search']] : []),
        ...['--warm-passes', args['warm-passes']!],
        ...(args.compiled ? ['--compiled'] : []),
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 1 << 24,
      },
    );
    return JSON.parse(out.trim().split('\n').pop()!) as object;
  };
  return { ...(args['queries-only'] ? {} : run('build')), ...run('query') } as ChildResult;
}

/** The middle value (the mean of the two middle ones for an even count). */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main(): Promise<void> {
  if (args.child) {
    const root = resolve(args.child);
    const result = args.part === 'query' ? await queryChild(root) : await buildChild(root);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (!args.base) throw new Error('--base <checkout of the code to compare against> is required');
  const base = resolve(args.base);
  const sides: Record<'base' | 'this', ChildResult[]> = { base: [], this: [] };
  for (let r = 0; r < Number(args.rounds); r++) {
    // Alternate which side goes first, so neither always runs on a warmer machine.
    const order: ('base' | 'this')[] = r % 2 === 0 ? ['base', 'this'] : ['this', 'base'];
    for (const side of order) {
      sides[side].push(runChild(side === 'base' ? base : ROOT));
      process.stderr.write(`round ${r + 1} ${side}: ${JSON.stringify(sides[side].at(-1))}\n`);
    }
  }
  // Medians of what was measured (the builds are left out with --queries-only).
  const keys = [
    'cold_build_ms',
    'warm_build_ms',
    'cold_cpu_ms',
    'warm_cpu_ms',
    'p50_ms',
    'p95_ms',
    'warm_ms',
  ] as const;
  const summary = (rs: ChildResult[]) => {
    const out: Partial<Record<keyof ChildResult, number>> = {};
    for (const k of keys)
      if (rs[0][k] !== undefined)
        out[k] = Number(median(rs.map((r) => r[k])).toFixed(k.startsWith('p') ? 3 : 1));
    return out;
  };
  const a = summary(sides.base);
  const b = summary(sides.this);
  const pairedRatio = (k: keyof ChildResult) =>
    Number(median(sides.this.map((t, r) => t[k] / sides.base[r][k])).toFixed(2));
  const ratio = (k: keyof ChildResult) =>
    a[k] === undefined || b[k] === undefined ? undefined : Number((b[k] / a[k]).toFixed(2));
  const result = {
    rounds: Number(args.rounds),
    base: { dir: base, ...a },
    this: b,
    ratio: {
      scifact_cold_build: ratio('cold_build_ms'),
      scifact_warm_build: ratio('warm_build_ms'),
      scifact_cold_build_cpu: ratio('cold_cpu_ms'),
      scifact_warm_build_cpu: ratio('warm_cpu_ms'),
      backlog_md_p50: ratio('p50_ms'),
      backlog_md_p95: ratio('p95_ms'),
      backlog_md_warm: ratio('warm_ms'),
    },
    // The median of each round's own ratio: the two sides of a round ran back to back, so a burst of
    // load on this shared machine moves both (the ratio of medians pairs rounds that did not).
    paired: {
      backlog_md_p50: pairedRatio('p50_ms'),
      backlog_md_p95: pairedRatio('p95_ms'),
      per_round_p95: sides.this.map((t, r) => Number((t.p95_ms / sides.base[r].p95_ms).toFixed(2))),
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
