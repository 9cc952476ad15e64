/**
 * `npm run bench:semantic-floor`: chooses the cosine a result found by meaning alone must reach
 * (HybridSettings.semanticOnlyFloor). For each dev set it takes both retrievers' lists once (BM25F top
 * 100, vector top 100 with the bundled model; embeddings cached in .cache/eval-embeddings), then for each
 * candidate floor: hybrid nDCG@10 (the default fusion), how many relevant documents only the vector list
 * found survive it, and how many queries that should find nothing (made-up words, ids no item has,
 * keyboard mashes) still come back with a result by meaning. Prints a markdown table (docs/search.md).
 *
 *   npm run bench:semantic-floor [-- --only xquad-en,scifact]
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBeir, type BeirDataset } from '../src/eval/beir.js';
import { ndcgAtK } from '../src/eval/metrics.js';
import { EmbeddingCache, EmbeddingPool, SemanticIndex } from '../src/embeddings/index.js';
import { englishOnlyQuerySupported } from '../src/embeddings/query-language.js';
import type { Scored } from '../src/search/fusion.js';
import { DEFAULT_HYBRID_SETTINGS, hybridRank } from '../src/search/hybrid.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { GIBBERISH_GATE, gibberishScore, pseudoWords } from '../src/embeddings/gibberish.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const DATASETS = [
  { name: 'xquad-en', split: 'dev' },
  { name: 'scifact', split: 'train' },
];
const FLOORS = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];
const log = (s: string) => process.stderr.write(`${s}\n`);

/**
 * Queries that should find nothing: pseudo-words (another seed than the gate's own panel), ids no item
 * has, keyboard mashes. And real English about nothing in these corpora, which should find little.
 */
const MADE_UP = [
  ...[
    'narwhalbyte',
    'quibblefrost zentrix',
    'task-12',
    'TASK-9999',
    'BACK-99999',
    'asdfghjkl',
    'qwertyuiop zxcvbnm',
    'xqzv',
  ],
  ...pseudoWords(52, 11),
];
const OFF_TOPIC = [
  'recipe for banana bread',
  'football match results',
  'how to train a puppy',
  'best hiking trails in autumn',
  'knitting a wool scarf',
  'guitar chords for beginners',
  'cheap flights to Lisbon',
  'how tall is a giraffe',
  'wedding dress shopping',
  'fix a flat bicycle tire',
  'grow tomatoes on a balcony',
  'learn to juggle three balls',
];

interface Lists {
  /** Cosine of the query to the pseudo-word centroid (gibberish.ts). */
  gibberish: number;
  lexical: Scored[];
  vector: Scored[];
  upper: number;
  terms: string[];
}

async function listsFor(data: BeirDataset, pool: EmbeddingPool) {
  const lexical = new OramaSearchService();
  await lexical.build(data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  const cache = await EmbeddingCache.open(
    join(ROOT, '.cache', 'eval-embeddings', data.name),
    pool.id,
    pool.dims,
  );
  const semantic = new SemanticIndex({ embedder: pool, cache });
  const res = await semantic.upsert(data.docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  await cache.save();
  log(`  ${data.name}: ${res.chunks} chunks, ${res.embedded} embedded, ${res.reused} from cache`);
  const titles = new Map(data.docs.map((d) => [d.id, lexical.analyzer.queryTerms(d.title)]));
  const centroid = await semantic.gibberishCentroid();
  const one = async (text: string): Promise<Lists> => ({
    gibberish: gibberishScore(await pool.embedQuery(text), centroid),
    lexical: lexical.search({ query: text, limit: 100 }).hits.map((h) => ({ id: h.id, score: h.score })),
    vector: (await englishOnlyQuerySupported(text))
      ? (await semantic.search(text, 100)).map((h) => ({ id: h.docId, score: h.score }))
      : [],
    upper: lexical.upperBound(text),
    terms: lexical.analyzer.queryTerms(text),
  });
  const judged: Lists[] = [];
  for (const q of data.queries) judged.push(await one(q.text));
  const probes = async (texts: string[]) => {
    const out: Lists[] = [];
    for (const q of texts) out.push(await one(q));
    return out;
  };
  return { judged, madeUp: await probes(MADE_UP), offTopic: await probes(OFF_TOPIC), titles };
}

function fuse(l: Lists, floor: number, titles: Map<string, string[]>): string[] {
  return hybridRank(
    {
      lexical: l.lexical,
      vector: l.vector,
      lexicalUpperBound: l.upper,
      queryTerms: l.terms,
      facts: (id) => ({ titleTerms: titles.get(id) ?? [], idKey: '' }),
    },
    { ...DEFAULT_HYBRID_SETTINGS, semanticOnlyFloor: floor },
  ).map((h) => h.id);
}

const onlyArg = process.argv.indexOf('--only');
const datasets =
  onlyArg >= 0 ? DATASETS.filter((d) => process.argv[onlyArg + 1].split(',').includes(d.name)) : DATASETS;
const pool = (await EmbeddingPool.start({ provider: 'bundled' })).embedder;
if (!pool) throw new Error('the bundled embedding model could not be loaded');
const rows: string[] = [];
const gateRows: string[] = [];
try {
  for (const { name, split } of datasets) {
    log(`${name} (${split}) ...`);
    const data = await loadBeir(join(EVAL_DIR, name), split);
    const { judged, madeUp, offTopic, titles } = await listsFor(data, pool);
    const gated = (ls: Lists[]) => ls.filter((l) => l.gibberish >= GIBBERISH_GATE).length;
    const maxOf = (ls: Lists[]) => Math.max(...ls.map((l) => l.gibberish)).toFixed(3);
    const minOf = (ls: Lists[]) => Math.min(...ls.map((l) => l.gibberish)).toFixed(3);
    gateRows.push(
      `| ${name} | ${gated(judged)} / ${judged.length} (max ${maxOf(judged)}) | ${gated(madeUp)} / ${madeUp.length} (min ${minOf(madeUp)}) | ${gated(offTopic)} / ${offTopic.length} (max ${maxOf(offTopic)}) |`,
    );
    // Relevant documents that only the vector list has: what a floor may cost.
    const vectorOnly: number[] = [];
    data.queries.forEach((q, i) => {
      const lex = new Set(judged[i].lexical.map((h) => h.id));
      for (const v of judged[i].vector)
        if (!lex.has(v.id) && (data.qrels.get(q.id)?.get(v.id) ?? 0) > 0) vectorOnly.push(v.score);
    });
    /** Queries that come back with at least one result no word of theirs matched. */
    const answered = (ls: Lists[], floor: number) =>
      ls.filter((l) => {
        const words = new Set(l.lexical.map((h) => h.id));
        return fuse(l, floor, titles).some((id) => !words.has(id));
      }).length;
    for (const floor of FLOORS) {
      const ndcg =
        data.queries.reduce(
          (s, q, i) => s + ndcgAtK(fuse(judged[i], floor, titles), data.qrels.get(q.id)!, 10),
          0,
        ) / data.queries.length;
      const kept = vectorOnly.filter((c) => c >= floor).length;
      rows.push(
        `| ${name} | ${floor.toFixed(2)} | ${ndcg.toFixed(4)} | ${kept} / ${vectorOnly.length} | ${answered(madeUp, floor)} / ${madeUp.length} | ${answered(offTopic, floor)} / ${offTopic.length} |`,
      );
    }
  }
} finally {
  await pool.close();
}
process.stdout.write(
  [
    '',
    `Gate: queries whose vector is within cosine ${GIBBERISH_GATE} of the pseudo-word centroid get no results by meaning.`,
    '',
    '| dev set | its real queries gated | made-up queries gated | off-topic English gated |',
    '|---|---|---|---|',
    ...gateRows,
    '',
    '| dev set | floor | hybrid nDCG@10 | relevant docs found by meaning alone, kept | made-up queries answered by meaning | off-topic queries answered by meaning |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
