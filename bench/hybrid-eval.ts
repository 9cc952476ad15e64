/**
 * `npm run eval:hybrid` (`tsx bench/hybrid-eval.ts [--only xquad-en,xquad-ru,scifact]`): chooses the
 * fusion setting. For each dataset it runs both retrievers once (BM25F top 100, and vector top 100 with
 * the bundled model; embeddings cached in .cache/eval-embeddings, so only the first run embeds), then
 * scores every fusion variant on the same lists. Writes docs/fusion.md and docs/fusion.json.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadBeir, type BeirDataset } from '../src/eval/beir.js';
import { ndcgAtK } from '../src/eval/metrics.js';
import { monotoneFusionBound } from '../src/eval/fusion-bound.js';
import { create, insertMultiple, search, type AnyOrama } from '@orama/orama';
import { EmbeddingCache, EmbeddingPool, SemanticIndex } from '../src/embeddings/index.js';
import { embedWithCache } from '../src/embeddings/semantic-index.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { hybridRank, DEFAULT_HYBRID_SETTINGS, type HybridSettings } from '../src/search/hybrid.js';
import type { Scored } from '../src/search/fusion.js';
import { englishOnlyQuerySupported as supportsQuery } from '../src/embeddings/query-language.js';
import { EVAL_DIR, ROOT } from './common.js';

const DATASETS = [
  { name: 'xquad-en', split: 'dev' },
  { name: 'xquad-ru', split: 'dev' },
  { name: 'scifact', split: 'train' },
];
const onlyArg = process.argv.indexOf('--only');
const datasets =
  onlyArg >= 0 ? DATASETS.filter((d) => process.argv[onlyArg + 1].split(',').includes(d.name)) : DATASETS;
const log = (s: string) => process.stderr.write(`${s}\n`);

interface QueryLists {
  qid: string;
  lexical: Scored[];
  vector: Scored[];
  upper: number;
  terms: string[];
  /** Orama's own modes on one vector per document (its title + text, cut to the model's 128 tokens). */
  orama: Record<OramaVariant, string[]>;
}

type OramaVariant = 'orama-hybrid' | 'orama-hybrid-0.2' | 'orama-vector';
const ORAMA_VARIANTS: [string, OramaVariant][] = [
  ['Orama 3.1.18 hybrid mode, default settings (similarity 0.8, weights 0.5/0.5)', 'orama-hybrid'],
  ['Orama 3.1.18 hybrid mode, similarity lowered to 0.2', 'orama-hybrid-0.2'],
  ['Orama 3.1.18 vector mode, default settings (similarity 0.8)', 'orama-vector'],
];

/**
 * Orama used directly, as its docs show: one `vector[512]` per document next to the text fields, and
 * `search({ mode: 'hybrid' | 'vector', term, vector })` with its defaults.
 */
async function oramaVectorDb(data: BeirDataset, pool: EmbeddingPool, cache: EmbeddingCache) {
  const texts = data.docs.map((d) => `${d.title}\n${d.text}`.trim());
  const { vectors } = await embedWithCache(pool, cache, texts);
  const db: AnyOrama = create({
    schema: { title: 'string', text: 'string', embedding: `vector[${pool.dims}]` } as const,
  });
  await insertMultiple(
    db,
    data.docs.map((d, i) => ({ id: d.id, title: d.title, text: d.text, embedding: Array.from(vectors[i]) })),
  );
  return async (query: string, variant: OramaVariant): Promise<string[]> => {
    const value = Array.from(await pool.embedQuery(query));
    const res = await search(db, {
      mode: variant === 'orama-vector' ? 'vector' : 'hybrid',
      term: query,
      vector: { value, property: 'embedding' },
      ...(variant === 'orama-hybrid-0.2' ? { similarity: 0.2 } : {}),
      limit: 101,
    } as never);
    return res.hits.map((h) => String(h.id));
  };
}

async function lists(data: BeirDataset, pool: EmbeddingPool): Promise<QueryLists[]> {
  const lexical = new OramaSearchService();
  await lexical.build(data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  const cache = await EmbeddingCache.open(
    join(ROOT, '.cache', 'eval-embeddings', data.name),
    pool.id,
    pool.dims,
  );
  const semantic = new SemanticIndex({ embedder: pool, cache });
  let last = 0;
  const started = performance.now();
  const res = await semantic.upsert(
    data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })),
    {
      onProgress: (done, total) => {
        if (done - last >= 500 || done === total) {
          last = done;
          log(
            `  ${data.name}: embedded ${done}/${total} chunks (${Math.round((performance.now() - started) / 1000)} s)`,
          );
        }
      },
    },
  );
  await cache.save();
  log(`  ${data.name}: ${res.chunks} chunks, ${res.embedded} embedded, ${res.reused} from cache`);
  const orama = await oramaVectorDb(data, pool, cache);
  await cache.save();
  const out: QueryLists[] = [];
  for (const q of data.queries) {
    const oramaLists = {} as Record<OramaVariant, string[]>;
    for (const [, v] of ORAMA_VARIANTS) oramaLists[v] = (await orama(q.text, v)).filter((id) => id !== q.id);
    const found = lexical.search({ query: q.text, limit: 101 });
    // The bundled model is English-only: a query written mostly in another script gets no vector list.
    const vector = (await supportsQuery(q.text)) ? await semantic.search(q.text, 101) : [];
    out.push({
      qid: q.id,
      lexical: found.hits.filter((h) => h.id !== q.id).map((h) => ({ id: h.id, score: h.score })),
      vector: vector.filter((h) => h.docId !== q.id).map((h) => ({ id: h.docId, score: h.score })),
      upper: lexical.upperBound(q.text),
      terms: lexical.analyzer.queryTerms(q.text),
      orama: oramaLists,
    });
  }
  return out;
}

const none = { title: false, id: false, type: false, recency: false };
// Every variant spells out its normalizations (the default setting may change; these rows must not).
const lin = (lexicalWeight: number, extra: Partial<HybridSettings> = {}): HybridSettings => ({
  ...DEFAULT_HYBRID_SETTINGS,
  lexicalNorm: 'upper',
  vectorNorm: 'floor',
  vectorFloor: 0.2,
  lexicalWeight,
  multipliers: none,
  ...extra,
});
const BOUND =
  'upper bound: any fusion strictly increasing in both lists (linear, RRF), even with weights chosen per query in hindsight';
const variants: [string, HybridSettings | 'bm25' | 'vector' | 'bound' | OramaVariant][] = [
  ['bm25 alone', 'bm25'],
  ['vector alone (bundled USE-lite)', 'vector'],
  ...[0.3, 0.4, 0.5, 0.6, 0.7, 0.8].map((w): [string, HybridSettings] => [
    `linear ${w}, BM25 / upper bound, cosine floor 0.2`,
    lin(w),
  ]),
  ...[0.3, 0.5].map((f): [string, HybridSettings] => [
    `linear 0.5, BM25 / upper bound, cosine floor ${f}`,
    lin(0.5, { vectorFloor: f }),
  ]),
  ...[0.4, 0.5, 0.6].map((w): [string, HybridSettings] => [
    `linear ${w}, BM25 / upper bound, cosine min-max`,
    lin(w, { vectorNorm: 'minmax' }),
  ]),
  ...[0.5, 0.7, 0.75, 0.8, 0.85, 0.9].map((w): [string, HybridSettings] => [
    `linear ${w}, BM25 min-max, cosine min-max`,
    lin(w, { lexicalNorm: 'minmax', vectorNorm: 'minmax' }),
  ]),
  ...[0.7, 0.75, 0.8, 0.85, 0.9].map((w): [string, HybridSettings] => [
    `linear ${w}, BM25 / max, cosine min-max${w === DEFAULT_HYBRID_SETTINGS.lexicalWeight ? ' (default)' : ''}`,
    lin(w, { lexicalNorm: 'max', vectorNorm: 'minmax' }),
  ]),
  ...[0.5, 0.7, 0.8].map((w): [string, HybridSettings] => [
    `linear ${w}, BM25 min-max, cosine floor 0.2`,
    lin(w, { lexicalNorm: 'minmax' }),
  ]),
  ['rrf k=60', { ...DEFAULT_HYBRID_SETTINGS, fusion: 'rrf', multipliers: none }],
  [
    'default setting + title multiplier (XQuAD and SciFact have no titles worth the name)',
    { ...DEFAULT_HYBRID_SETTINGS, multipliers: { ...none, title: true } },
  ],
  ...ORAMA_VARIANTS,
  [BOUND, 'bound'],
];

const pool = (await EmbeddingPool.start({ provider: 'bundled', workers: 2 })).embedder;
if (!pool) throw new Error('bundled model did not load');
const table: Record<string, Record<string, number>> = {};
for (const ds of datasets) {
  log(`${ds.name} ...`);
  const data = await loadBeir(join(EVAL_DIR, ds.name), ds.split);
  const perQuery = await lists(data, pool);
  for (const [name, v] of variants) {
    let sum = 0;
    for (const q of perQuery) {
      if (v === 'bound') {
        sum += monotoneFusionBound(q.lexical, q.vector, data.qrels.get(q.qid)!, 10);
        continue;
      }
      const ranked =
        v === 'bm25'
          ? q.lexical.map((h) => h.id)
          : v === 'vector'
            ? q.vector.map((h) => h.id)
            : typeof v === 'string'
              ? q.orama[v]
              : hybridRank(
                  {
                    lexical: q.lexical,
                    vector: q.vector,
                    lexicalUpperBound: q.upper,
                    queryTerms: q.terms,
                    facts: () => ({ titleTerms: [], idKey: '' }),
                  },
                  v,
                ).map((h) => h.id);
      sum += ndcgAtK(ranked.slice(0, 10), data.qrels.get(q.qid)!, 10);
    }
    (table[name] ??= {})[ds.name] = Number((sum / perQuery.length).toFixed(4));
  }
}
await pool.close();

const cols = datasets.map((d) => `${d.name} \`${d.split}\``);
const lines = [
  '# Fusion: choosing how BM25F and vector scores combine',
  '',
  `Generated by \`npm run eval:hybrid\` on ${new Date().toISOString()} (Node ${process.version}, ${os.cpus()[0]?.model} × ${os.cpus().length}).`,
  'Vector: the bundled Universal Sentence Encoder Lite, documents chunked for its 128-token input, a document',
  'scored by its best chunk. Each variant re-ranks the same two top-100 lists per query. nDCG@10.',
  '',
  `| variant | ${cols.join(' | ')} |`,
  `|---|${cols.map(() => '---').join('|')}|`,
  ...variants.map(
    ([name]) => `| ${name} | ${datasets.map((d) => table[name][d.name].toFixed(4)).join(' | ')} |`,
  ),
  '',
];
writeFileSync(join(ROOT, 'docs', 'fusion.md'), lines.join('\n'));
writeFileSync(join(ROOT, 'docs', 'fusion.json'), JSON.stringify(table, null, 2));
process.stdout.write(lines.join('\n'));
