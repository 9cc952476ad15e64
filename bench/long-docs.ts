/**
 * `npm run ablation:long-docs` (`tsx bench/long-docs.ts [--only base,title3]`): ranking changes for long,
 * structured markdown, one at a time, measured on the judged Backlog.md dev set (through searchUnified,
 * bm25, per class) and on SciFact train and XQuAD-en dev (lexical), with MiniSearch on the dev set in the
 * same run. No per-dataset tuning: a variant is one setting for every set. Prints markdown tables
 * (docs/search.md, "Ranking long documents").
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBeir } from '../src/eval/beir.js';
import { oramaServiceRetriever, runEval } from '../src/eval/run-eval.js';
import type { SearchSettings } from '../src/search/lexical-index.js';
import { closeBacklog, openBacklog } from '../src/index.js';
import { CLASSES, backlogCopy, loadDevset, readDocs } from './devset/corpus.js';
import { runSystem } from './devset/eval.js';
import { miniSearchSystem, ourSystem } from './devset/systems.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));
const log = (s: string) => process.stderr.write(`${s}\n`);

/** The variants: each changes one thing from the current default (`base`). */
export const VARIANTS: Record<string, { label: string; settings: Partial<SearchSettings> }> = {
  base: { label: 'current default', settings: {} },
  prox25: { label: 'proximity +25%', settings: { proximity: 0.25 } },
  prox50: { label: 'proximity +50%', settings: { proximity: 0.5 } },
  prox100: { label: 'proximity +100%', settings: { proximity: 1 } },
  prox25title3: {
    label: 'proximity +25%, title weight 3',
    settings: { proximity: 0.25, fieldWeights: { title: 3 } as never },
  },
  prox25k15: { label: 'proximity +25%, k1 1.5', settings: { proximity: 0.25, k1: 1.5 } },
  prox25tags2: {
    label: 'proximity +25%, tags weight 2',
    settings: { proximity: 0.25, fieldWeights: { tags: 2 } as never },
  },
  title3: { label: 'title weight 2 -> 3', settings: { fieldWeights: { title: 3 } as never } },
  bodyB05: { label: 'body b 0.75 -> 0.5', settings: { b: { body: 0.5 } as never } },
  bodyB09: { label: 'body b 0.75 -> 0.9', settings: { b: { body: 0.9 } as never } },
  k1_09: { label: 'k1 1.2 -> 0.9', settings: { k1: 0.9 } },
  k1_15: { label: 'k1 1.2 -> 1.5', settings: { k1: 1.5 } },
  coord05: { label: 'coordination 0.5', settings: { coordination: 0.5 } },
  coord1: { label: 'coordination 1 (as MiniSearch)', settings: { coordination: 1 } },
  coord2: { label: 'coordination 2', settings: { coordination: 2 } },
  title25: { label: 'title coverage +25%', settings: { titleCoverage: 0.25 } },
  title50: { label: 'title coverage +50%', settings: { titleCoverage: 0.5 } },
  title100: { label: 'title coverage +100%', settings: { titleCoverage: 1 } },
  title75: { label: 'title coverage +75%', settings: { titleCoverage: 0.75 } },
  title75k15: { label: 'title coverage +75%, k1 1.5', settings: { titleCoverage: 0.75, k1: 1.5 } },
  title100k15: { label: 'title coverage +100%, k1 1.5', settings: { titleCoverage: 1, k1: 1.5 } },
  title75b05: {
    label: 'title coverage +75%, body b 0.5',
    settings: { titleCoverage: 0.75, b: { body: 0.5 } as never },
  },
};

const only = (() => {
  const i = process.argv.indexOf('--only');
  return i >= 0 ? process.argv[i + 1].split(',') : Object.keys(VARIANTS);
})();

const devset = await loadDevset();
const docs = await readDocs();
const rows: string[] = [];
const copy = await backlogCopy();
try {
  const mini = await runSystem(devset, miniSearchSystem(docs, 2), { warmup: false });
  const fmt = (r: { overall: { ndcg_at_10: number }; by_class: Record<string, { ndcg_at_10: number }> }) =>
    [r.overall.ndcg_at_10, ...CLASSES.map((c) => r.by_class[c].ndcg_at_10)]
      .map((x) => x.toFixed(4))
      .join(' | ');
  rows.push(`| MiniSearch, title boost 2 (baseline) | ${fmt(mini)} | - | - |`);
  const scifact = await loadBeir(join(EVAL_DIR, 'scifact'), 'train');
  const xquad = await loadBeir(join(EVAL_DIR, 'xquad-en'), 'dev');
  for (const name of only) {
    const v = VARIANTS[name];
    log(`${name}: ${v.label}`);
    const backlog = await openBacklog({
      dir: copy.dir,
      embeddings: 'none',
      cacheDir: false,
      search: v.settings,
    });
    const ours = await runSystem(devset, ourSystem(name, backlog, 'bm25'), { warmup: false });
    await closeBacklog(backlog);
    const sf = await runEval(scifact, oramaServiceRetriever(v.settings), { warmup: 0 });
    const xq = await runEval(xquad, oramaServiceRetriever(v.settings), { warmup: 0 });
    rows.push(`| ${v.label} | ${fmt(ours)} | ${sf.ndcg_at_10.toFixed(4)} | ${xq.ndcg_at_10.toFixed(4)} |`);
    log(
      `  dev set ${ours.overall.ndcg_at_10.toFixed(4)}, SciFact ${sf.ndcg_at_10.toFixed(4)}, XQuAD-en ${xq.ndcg_at_10.toFixed(4)}`,
    );
  }
} finally {
  await copy.cleanup();
}
process.stdout.write(
  [
    '',
    `| variant (bm25) | dev set all | ${CLASSES.join(' | ')} | SciFact | XQuAD-en |`,
    `|---|---|${CLASSES.map(() => '---').join('|')}|---|---|`,
    ...rows,
    '',
  ].join('\n'),
);
