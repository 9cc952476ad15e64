/**
 * The judged Backlog.md dev set in `npm run eval` (docs/devset.md): this project's bm25 and hybrid through
 * `searchUnified` on a temp copy of the folder, side by side with MiniSearch (defaults, and defaults with a
 * title boost) and Orama defaults in the same run, nDCG@10 / Recall@10 / MRR@10 per query class.
 * `bench/eval.ts` appends `devsetSection()` to docs/quality.md; `npx tsx bench/devset/eval.ts [--no-hybrid]
 * [--per-query]` prints the same tables alone (and, with --per-query, every query's scores and top results).
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { mrrAtK, ndcgAtK, percentile, recallAtK } from '../../src/eval/metrics.js';
import { CLASSES, backlogSourceDir, loadDevset, readDocs, type Devset, type QueryClass } from './corpus.js';
import { openDevsetBacklog, type OpenedBacklog } from './open.js';
import { miniSearchSystem, oramaSystem, ourSystem, type DevsetSystem } from './systems.js';

const K = 10;

export interface Scores {
  ndcg_at_10: number;
  recall_at_10: number;
  mrr_at_10: number;
  /** Share of the top 10 that is judged (a system that ranks unjudged documents is measured low: re-pool). */
  judged_at_10: number;
  queries: number;
}

export interface SystemResult {
  system: string;
  overall: Scores;
  by_class: Record<QueryClass, Scores>;
  /** nDCG@10 of each query, for comparing two runs query by query. */
  per_query: Record<string, number>;
  /** The top 3 paths of each query (only with `keepRankings`), for reading failures. */
  top?: Record<string, string[]>;
  p50_ms: number;
  p95_ms: number;
}

export interface DevsetReport {
  /** When the run started (ISO). */
  date: string;
  dir: string;
  queries: number;
  judgments: number;
  by_class_queries: Record<QueryClass, number>;
  hybrid_ready_ms: number | null;
  hybrid_chunks: number | null;
  /** Whether the copy's embedding cache existed before the run (warm: loaded, cold: every chunk embedded). */
  hybrid_cache_warm: boolean | null;
  results: SystemResult[];
}

const round = (x: number) => Number(x.toFixed(4));

/** Scores of one system's rankings against the qrels (graded nDCG as BEIR; grade > 0 is relevant). */
export function score(
  devset: Devset,
  ranked: Map<string, string[]>,
): Omit<SystemResult, 'system' | 'p50_ms' | 'p95_ms'> {
  const sums = new Map<string, Scores>();
  const per_query: Record<string, number> = {};
  const bucket = (key: string) => {
    if (!sums.has(key))
      sums.set(key, { ndcg_at_10: 0, recall_at_10: 0, mrr_at_10: 0, judged_at_10: 0, queries: 0 });
    return sums.get(key)!;
  };
  for (const q of devset.queries) {
    const rels = devset.qrels.get(q.id);
    if (!rels) continue;
    const top = (ranked.get(q.id) ?? []).slice(0, K);
    const ndcg = ndcgAtK(top, rels, K);
    per_query[q.id] = round(ndcg);
    for (const s of [bucket('all'), bucket(q.class)]) {
      s.ndcg_at_10 += ndcg;
      s.recall_at_10 += recallAtK(top, rels, K);
      s.mrr_at_10 += mrrAtK(top, rels, K);
      s.judged_at_10 += top.length ? top.filter((p) => rels.has(p)).length / top.length : 1;
      s.queries++;
    }
  }
  const mean = (s: Scores | undefined): Scores =>
    !s || s.queries === 0
      ? { ndcg_at_10: 0, recall_at_10: 0, mrr_at_10: 0, judged_at_10: 0, queries: 0 }
      : {
          ndcg_at_10: round(s.ndcg_at_10 / s.queries),
          recall_at_10: round(s.recall_at_10 / s.queries),
          mrr_at_10: round(s.mrr_at_10 / s.queries),
          judged_at_10: round(s.judged_at_10 / s.queries),
          queries: s.queries,
        };
  return {
    overall: mean(sums.get('all')),
    by_class: Object.fromEntries(CLASSES.map((c) => [c, mean(sums.get(c))])) as Record<QueryClass, Scores>,
    per_query,
  };
}

/** Runs every query through the system (limit K), timed, after an untimed pass unless `warmup` is false. */
export async function runSystem(
  devset: Devset,
  system: DevsetSystem,
  { keepRankings = false, warmup = true } = {},
): Promise<SystemResult> {
  const ranked = new Map<string, string[]>();
  const times: number[] = [];
  if (warmup) for (const q of devset.queries) await system.search(q, K);
  for (const q of devset.queries) {
    const t = performance.now();
    ranked.set(q.id, await system.search(q, K));
    times.push(performance.now() - t);
  }
  return {
    system: system.name,
    ...score(devset, ranked),
    ...(keepRankings
      ? { top: Object.fromEntries([...ranked].map(([id, paths]) => [id, paths.slice(0, 3)])) }
      : {}),
    p50_ms: round(percentile(times, 50)),
    p95_ms: round(percentile(times, 95)),
  };
}

export const OUR_BM25 = 'backlog-search (bm25)';
export const OUR_HYBRID = 'backlog-search (hybrid, bundled model)';

/** Runs the dev set for our bm25 (and hybrid unless `hybrid: false`) and the baselines. */
export async function runDevset({
  hybrid = true,
  keepRankings = false,
  log = (msg: string): void => void process.stderr.write(msg + '\n'),
}: { hybrid?: boolean; keepRankings?: boolean; log?: (msg: string) => void } = {}): Promise<DevsetReport> {
  const date = new Date().toISOString();
  const devset = await loadDevset();
  const docs = await readDocs();
  const judgments = [...devset.qrels.values()].reduce((n, m) => n + m.size, 0);
  log(
    `\n== backlog-md dev set: ${devset.queries.length} queries, ${judgments} judgments, ${docs.length} files`,
  );
  const results: SystemResult[] = [];
  const opened: OpenedBacklog[] = [];
  let hybridReady: OpenedBacklog | undefined;
  try {
    const lexical = await openDevsetBacklog('none');
    opened.push(lexical);
    results.push(await runSystem(devset, ourSystem(OUR_BM25, lexical.backlog, 'bm25'), { keepRankings }));
    if (hybrid) {
      log('   hybrid: embeddings in the temp copy (the first run embeds the whole folder)...');
      hybridReady = await openDevsetBacklog('bundled', log);
      opened.push(hybridReady);
      log(
        `   hybrid ready in ${(hybridReady.readyMs / 1000).toFixed(1)} s (${hybridReady.chunks} chunks, cache ${hybridReady.cacheWasWarm ? 'warm' : 'cold'})`,
      );
      results.push(
        await runSystem(devset, ourSystem(OUR_HYBRID, hybridReady.backlog, 'hybrid'), { keepRankings }),
      );
    }
  } finally {
    for (const o of opened) await o.close();
  }
  for (const system of [miniSearchSystem(docs), miniSearchSystem(docs, 2), await oramaSystem(docs)])
    results.push(await runSystem(devset, system, { keepRankings }));
  for (const r of results) log(`   ${r.system}: nDCG@10 ${r.overall.ndcg_at_10.toFixed(4)}`);
  return {
    date,
    dir: backlogSourceDir(),
    queries: devset.queries.length,
    judgments,
    by_class_queries: Object.fromEntries(
      CLASSES.map((c) => [c, devset.queries.filter((q) => q.class === c).length]),
    ) as Record<QueryClass, number>,
    hybrid_ready_ms: hybridReady ? Math.round(hybridReady.readyMs) : null,
    hybrid_chunks: hybridReady ? hybridReady.chunks : null,
    hybrid_cache_warm: hybridReady ? hybridReady.cacheWasWarm : null,
    results,
  };
}

const f4 = (x: number) => x.toFixed(4);

/** The section of docs/quality.md: one table per metric, a row per system, a column per class. */
export function devsetMarkdown(r: DevsetReport): string {
  const out: string[] = [
    '',
    '## Backlog.md dev set (real long markdown, graded judgments)',
    '',
    `Run on ${r.date} (\`npm run eval\`, or alone: \`npx tsx bench/devset/eval.ts\`).`,
    '',
    `${r.queries} queries in six classes over the files of the Backlog.md project's own backlog`,
    `(\`../shared/eval/backlog-md\`), ${r.judgments} graded judgments (0-3) of pooled documents:`,
    'bench/devset/backlog-md, protocol in [devset.md](devset.md). Each system ranks paths; ours through',
    '`searchUnified` on a temp copy of the folder (filters passed as options), the baselines over title, body',
    'and keys (front matter id and labels) of the same files, filters applied to their rankings as a Backlog.md user means them.',
    r.hybrid_ready_ms === null
      ? 'Hybrid was not run (`--no-hybrid`).'
      : `Hybrid: embeddings built as \`backlog-search index\` builds them (\`openBacklog\` with \`embedMissing: 'wait'\`), into the copy's \`.cache/\`, kept between runs in the temp dir: this run was hybrid-ready in ${(r.hybrid_ready_ms / 1000).toFixed(1)} s, ${r.hybrid_chunks} chunks, cache ${r.hybrid_cache_warm ? 'warm (loaded from an earlier run)' : 'cold (every chunk embedded in this run)'}. A cold build takes minutes (docs/devset.md).`,
  ];
  const header = [
    `| system | all (${r.queries}) | ${CLASSES.map((c) => `${c} (${r.by_class_queries[c]})`).join(' | ')} |`,
    `|---|---|${CLASSES.map(() => '---|').join('')}`,
  ];
  const table = (title: string, pick: (s: Scores) => number) => {
    out.push('', `### ${title}`, '', ...header);
    for (const s of r.results)
      out.push(
        `| ${s.system} | ${f4(pick(s.overall))} | ${CLASSES.map((c) => f4(pick(s.by_class[c]))).join(' | ')} |`,
      );
  };
  table('nDCG@10', (s) => s.ndcg_at_10);
  table('Recall@10', (s) => s.recall_at_10);
  table('MRR@10', (s) => s.mrr_at_10);
  table(
    'Judged@10 (share of the top 10 that has a judgment; unjudged counts as not relevant)',
    (s) => s.judged_at_10,
  );
  out.push('', '| system | query p50 ms | p95 ms |', '|---|---|---|');
  for (const s of r.results) out.push(`| ${s.system} | ${s.p50_ms.toFixed(2)} | ${s.p95_ms.toFixed(2)} |`);
  return out.join('\n') + '\n';
}

/** For bench/eval.ts: runs the dev set and returns its section of docs/quality.md and its JSON. */
export async function devsetSection(options: { hybrid?: boolean; log?: (msg: string) => void } = {}) {
  const report = await runDevset(options);
  return { markdown: devsetMarkdown(report), json: report };
}

/**
 * One line per query: nDCG@10 of each system and, for the first two systems (ours), the top result next
 * to the best-graded document; for reading where the ranking loses.
 */
export function perQueryText(r: DevsetReport, devset: Devset): string {
  const short = (p: string | undefined) => (p ? p.slice(0, 60) : '-');
  const out = [`query\tclass\t${r.results.map((s) => s.system).join('\t')}\ttext`];
  for (const q of devset.queries) {
    out.push(
      [
        q.id,
        q.class,
        ...r.results.map((s) => (s.per_query[q.id] ?? 0).toFixed(3)),
        JSON.stringify(q.text),
      ].join('\t'),
    );
    const best = [...(devset.qrels.get(q.id) ?? [])].sort((a, b) => b[1] - a[1])[0];
    for (const s of r.results.slice(0, 2))
      out.push(`\t${s.system} top: ${(s.top?.[q.id] ?? []).map(short).join(' | ')}`);
    out.push(`\tbest judged: ${short(best?.[0])} (${best?.[1] ?? '-'})`);
  }
  return out.join('\n') + '\n';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const perQuery = process.argv.includes('--per-query');
  runDevset({ hybrid: !process.argv.includes('--no-hybrid'), keepRankings: perQuery })
    .then(async (report) => {
      process.stdout.write(devsetMarkdown(report));
      if (perQuery) process.stdout.write('\n' + perQueryText(report, await loadDevset()));
    })
    .catch((e: unknown) => {
      process.stderr.write((e instanceof Error ? (e.stack ?? e.message) : String(e)) + '\n');
      process.exit(1);
    });
}
