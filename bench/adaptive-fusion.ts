/**
 * `npx tsx bench/adaptive-fusion.ts [--sets xquad-en,scifact] [--no-devset]`: per-query vector shares
 * (HybridSettings.adaptive) against the fixed one and bm25, nDCG@10: on the BEIR sets (lexical and vector
 * lists built as `npm run eval` builds them, embeddings cached in .cache/eval-embeddings/<set>) and on the
 * Backlog.md dev set per class (through searchUnified, the persistent copy of bench/devset/open.ts).
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadBeir } from '../src/eval/beir.js';
import { ndcgAtK } from '../src/eval/metrics.js';
import { EmbeddingCache, EmbeddingPool, SemanticIndex } from '../src/embeddings/index.js';
import { englishOnlyQuerySupported } from '../src/embeddings/query-language.js';
import { DEFAULT_HYBRID_SETTINGS, hybridRank, type HybridSettings } from '../src/search/hybrid.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { CLASSES, loadDevset } from './devset/corpus.js';
import { openDevsetBacklog } from './devset/open.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const { values } = parseArgs({
  options: {
    sets: { type: 'string', default: 'xquad-en' },
    'no-devset': { type: 'boolean', default: false },
    /** coverage-short with these most vector shares (HybridSettings.coverageShare), one row each. */
    shares: { type: 'string', default: '' },
  },
});
type Variant = string;
const VARIANTS: Variant[] = [
  'fixed',
  'coverage',
  'short',
  'agreement',
  'coverage-short',
  ...values
    .shares!.split(',')
    .filter(Boolean)
    .map((x) => `coverage-short@${x}`),
];
/** A variant's settings: `name@share` is coverage-short with that coverageShare. */
function settingsOf(v: Variant): HybridSettings {
  const [adaptive, share] = v.split('@');
  return {
    ...DEFAULT_HYBRID_SETTINGS,
    adaptive: adaptive as HybridSettings['adaptive'],
    ...(share ? { coverageShare: Number(share) } : { coverageShare: undefined }),
  };
}
const log = (m: string) => process.stderr.write(m + '\n');
const f4 = (x: number) => x.toFixed(4);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function beir(name: string): Promise<string> {
  const data = await loadBeir(join(EVAL_DIR, name), name === 'scifact' ? 'train' : 'dev');
  const lexical = new OramaSearchService();
  await lexical.build(data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  await lexical.languagesSettled();
  const pool = (await EmbeddingPool.start({ provider: 'bundled' })).embedder!;
  const cache = await EmbeddingCache.open(join(ROOT, '.cache', 'eval-embeddings', name), pool.id, pool.dims);
  const semantic = new SemanticIndex({ embedder: pool, cache });
  await semantic.upsert(data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  await cache.save();
  const sums = new Map<string, number[]>([
    ['bm25', []],
    ...VARIANTS.map((v) => [v, []] as [string, number[]]),
  ]);
  for (const q of data.queries) {
    const rels = data.qrels.get(q.id)!;
    const lex = lexical.search({ query: q.text, limit: 101 }).hits.map((h) => ({ id: h.id, score: h.score }));
    const vec = (await englishOnlyQuerySupported(q.text))
      ? (await semantic.search(q.text, 101)).map((h) => ({ id: h.docId, score: h.score }))
      : [];
    const top = (ids: string[]) => ids.filter((id) => id !== q.id).slice(0, 10);
    sums.get('bm25')!.push(ndcgAtK(top(lex.map((h) => h.id)), rels, 10));
    for (const v of VARIANTS) {
      const fused = hybridRank(
        {
          lexical: lex,
          vector: vec,
          lexicalUpperBound: lexical.upperBound(q.text),
          queryTerms: lexical.analyzer.queryTerms(q.text),
          facts: () => ({ titleTerms: [], idKey: '' }),
        },
        settingsOf(v),
      );
      sums.get(v)!.push(ndcgAtK(top(fused.map((h) => h.id)), rels, 10));
    }
  }
  await pool.close();
  return `| ${name} | ${[...sums.values()].map((xs) => f4(mean(xs))).join(' | ')} |`;
}

async function devset(): Promise<string[]> {
  const set = await loadDevset();
  const opened = await openDevsetBacklog('bundled', log);
  const svc = opened.backlog.index as unknown as { hybridSettings: HybridSettings };
  const saved = svc.hybridSettings;
  const rows: string[] = [];
  try {
    for (const mode of ['bm25', ...VARIANTS] as const) {
      if (mode !== 'bm25') svc.hybridSettings = settingsOf(mode);
      const byClass = new Map<string, number[]>();
      for (const q of set.queries) {
        const res = await opened.backlog.searchUnified(q.text, {
          ...(q.options ?? {}),
          mode: mode === 'bm25' ? 'bm25' : 'hybrid',
          limit: 10,
        });
        const score = ndcgAtK(
          res.results.map((r) => r.path),
          set.qrels.get(q.id) ?? new Map(),
          10,
        );
        for (const k of ['all', q.class]) byClass.set(k, [...(byClass.get(k) ?? []), score]);
      }
      rows.push(
        `| ${mode} | ${['all', ...CLASSES].map((c) => f4(mean(byClass.get(c) ?? []))).join(' | ')} |`,
      );
    }
  } finally {
    svc.hybridSettings = saved;
    await opened.close();
  }
  return rows;
}

console.log(`Generated by \`npx tsx bench/adaptive-fusion.ts\` on ${new Date().toISOString()}. nDCG@10.\n`);
console.log(`| set | bm25 | ${VARIANTS.join(' | ')} |`);
console.log(`|---|---|${VARIANTS.map(() => '---|').join('')}`);
for (const name of values.sets!.split(',').filter(Boolean)) console.log(await beir(name));
if (!values['no-devset']) {
  console.log(`\n| Backlog.md dev set | all | ${CLASSES.join(' | ')} |`);
  console.log(`|---|---|${CLASSES.map(() => '---|').join('')}`);
  for (const r of await devset()) console.log(r);
}
