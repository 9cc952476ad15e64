/**
 * `npm run ablation` (`tsx bench/ablation.ts [--only scifact]`): what each change to Orama's default
 * full-text ranking is worth, one step at a time, on the BEIR datasets in ../shared/eval.
 * Steps 1-6 are Orama's own index and scoring with one more option or component swapped in each time;
 * step 7 is our engine (BM25F over raw term frequencies). Writes docs/ablation.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const FINDINGS_HEADING = '## Findings of retired experiments';
import os from 'node:os';
import { join } from 'node:path';
import { create, insertMultiple, search, type AnyOrama } from '@orama/orama';
import { index as oramaIndex } from '@orama/orama/components';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import { loadBeir } from '../src/eval/beir.js';
import { oramaServiceRetriever, runEval, type EvalReport, type Retriever } from '../src/eval/run-eval.js';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { EVAL_DIR, ROOT } from './common.js';

const DATASETS = [
  { name: 'scifact', split: 'train' },
  { name: 'xquad-ru', split: 'dev' },
  { name: 'xquad-en', split: 'dev' },
];

interface OramaVariant {
  stem?: boolean;
  /** Tokens not deduplicated, tf stored as the raw count (and df counted once per document). */
  rawTf?: boolean;
  /** Query terms matched as whole words, not expanded as prefixes. */
  exact?: boolean;
  relevance?: { k: number; b: number; d: number };
  ourTokenizer?: boolean;
}

const base = oramaIndex.createIndex();

/** The parts of Orama's index store the replaced functions touch. */
interface ScoreTables {
  frequencies: Record<string, Record<number, Record<string, number>>>;
  tokenOccurrences: Record<string, Record<string, number>>;
}
type SearchFn = (...args: unknown[]) => unknown;

/** Orama's index component with single functions replaced, as a user of Orama could do. */
function variantIndex(v: OramaVariant) {
  const component: Record<string, unknown> = { ...base };
  if (v.rawTf) {
    component.insertTokenScoreParameters = (
      index: ScoreTables,
      prop: string,
      id: number,
      tokens: string[],
      token: string,
    ) => {
      const freqs = index.frequencies[prop][id];
      if (token in freqs) return; // a repeated token: already counted
      let tf = 0;
      for (const t of tokens) if (t === token) tf++;
      freqs[token] = tf;
      index.tokenOccurrences[prop][token] = (index.tokenOccurrences[prop][token] ?? 0) + 1;
    };
    component.removeTokenScoreParameters = () => undefined;
  }
  if (v.exact) {
    component.search = (
      index: unknown,
      term: string,
      tokenizer: unknown,
      language: unknown,
      props: string[],
      _exact: boolean,
      ...rest: unknown[]
    ) => (base.search as SearchFn)(index, term, tokenizer, language, props, true, ...rest);
  }
  return component;
}

function oramaVariant(name: string, v: OramaVariant): Retriever {
  let db: AnyOrama | undefined;
  return {
    name,
    async build(docs) {
      const analyzer = new TextAnalyzer();
      const tokenizer = v.ourTokenizer
        ? {
            language: 'english',
            normalizationCache: new Map(),
            tokenize: (raw: string) => analyzer.indexTerms(raw),
          }
        : {
            stemming: v.stem ?? false,
            stopWords: v.stem ? englishStopwords : undefined,
            allowDuplicates: v.rawTf ?? false,
          };
      db = create({
        schema: { title: 'string', text: 'string' } as const,
        components: { tokenizer: tokenizer as never, index: variantIndex(v) as never },
      });
      await insertMultiple(db, docs);
    },
    async search(query, k) {
      // Orama tokenizes the query with the same tokenizer; ours must see query terms, not index terms.
      const term = v.ourTokenizer ? new TextAnalyzer().queryTerms(query).join(' ') : query;
      const res = await search(db!, { term, limit: k, relevance: v.relevance });
      return res.hits.map((h) => String(h.id));
    },
  };
}

const textbook = { k: 1.2, b: 0.75, d: 0 };
const STEPS: { what: string; retriever: () => Retriever }[] = [
  { what: 'Orama 3.1.18 defaults', retriever: () => oramaVariant('1', {}) },
  {
    what: '+ English stemming and stop-words (Orama tokenizer options)',
    retriever: () => oramaVariant('2', { stem: true }),
  },
  {
    what: '+ term frequency kept (duplicates tokenized; tf = raw count, df once per doc)',
    retriever: () => oramaVariant('3', { stem: true, rawTf: true }),
  },
  {
    what: '+ exact terms (no prefix expansion of every query word)',
    retriever: () => oramaVariant('4', { stem: true, rawTf: true, exact: true }),
  },
  {
    what: '+ BM25 instead of BM25+ (d = 0), k1 1.2, b 0.75',
    retriever: () => oramaVariant('5', { stem: true, rawTf: true, exact: true, relevance: textbook }),
  },
  {
    what: '+ our tokenizer (Unicode words, Russian, compounds, ids)',
    retriever: () => oramaVariant('6', { rawTf: true, exact: true, relevance: textbook, ourTokenizer: true }),
  },
  {
    what: 'backlog-search: BM25F over raw tf (title 2x body), our tokenizer',
    retriever: () => oramaServiceRetriever(),
  },
  {
    what: 'backlog-search, title weight 1 (title and body equal)',
    retriever: () => oramaServiceRetriever({ fieldWeights: { title: 1 } as never }),
  },
  {
    what: 'backlog-search, k1 0.9, b 0.4 (Pyserini defaults)',
    retriever: () => oramaServiceRetriever({ k1: 0.9, b: { body: 0.4, title: 0.4 } as never }),
  },
];

const only =
  process.argv.find((a) => a.startsWith('--only'))?.split('=')[1] ??
  process.argv[process.argv.indexOf('--only') + 1];
const datasets =
  process.argv.includes('--only') || process.argv.some((a) => a.startsWith('--only='))
    ? DATASETS.filter((d) => only.split(',').includes(d.name))
    : DATASETS;

const results: Record<string, EvalReport>[] = STEPS.map(() => ({}));
for (const ds of datasets) {
  const data = await loadBeir(join(EVAL_DIR, ds.name), ds.split);
  for (const [i, step] of STEPS.entries()) {
    process.stderr.write(`${ds.name}: step ${i + 1} ${step.what}\n`);
    results[i][ds.name] = await runEval(data, step.retriever(), { warmup: 10 });
  }
}

const cols = datasets.map((d) => `${d.name} \`${d.split}\``);
const lines = [
  '# Ablation: Orama defaults to textbook BM25, one change at a time',
  '',
  `Generated by \`npm run ablation\` on ${new Date().toISOString()} (Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}).`,
  "Each row adds one change to the row above (rows 1-6 use Orama's own index and scoring, changed only through",
  'its options and by replacing single functions of its index component); rows 7-9 are our engine. nDCG@10,',
  'with query p95 in ms in brackets.',
  '',
  `| # | change | ${cols.join(' | ')} |`,
  `|---|---|${cols.map(() => '---').join('|')}|`,
  ...STEPS.map(
    (s, i) =>
      `| ${i + 1} | ${s.what} | ${datasets.map((d) => `${results[i][d.name].ndcg_at_10.toFixed(4)} (${results[i][d.name].p95_ms})`).join(' | ')} |`,
  ),
  '',
];
// Findings of one-off experiments (their scripts retired) follow the table, kept as written.
const target = join(ROOT, 'docs', 'ablation.md');
const previous = existsSync(target) ? readFileSync(target, 'utf8') : '';
const findings = previous.indexOf(FINDINGS_HEADING);
if (findings >= 0) lines.push(previous.slice(findings));
writeFileSync(target, lines.join('\n'));
process.stdout.write(lines.join('\n'));
