/**
 * The README's quality line, generated from docs/quality.json (the last `npm run eval`), so the README
 * quotes one source: `npm run eval` rewrites it, `npx tsx bench/readme-numbers.ts` rewrites it from the
 * JSON as it is, and test/docs-check.test.ts fails when the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './common.js';

export const BEGIN = '<!-- quality: generated from docs/quality.json by npm run eval; do not edit -->';
export const END = '<!-- /quality -->';

interface Quality {
  date: string;
  results: { dataset: string; split: string; system: string; report: { ndcg_at_10: number } }[];
  devset?: { results: { system: string; overall: { ndcg_at_10: number } }[] };
}

const OURS = 'backlog-search (bm25)';
const HYBRID = 'backlog-search (hybrid, bundled model)';
const MINISEARCH = 'MiniSearch 7, default settings';
const ORAMA = 'Orama 3.1.18, default settings';

/** The README's quality bullet for a docs/quality.json. */
export function qualityLine(q: Quality): string {
  const score = (dataset: string, system: string) =>
    q.results.find((r) => r.dataset === dataset && r.system === system)?.report.ndcg_at_10;
  const f = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(4));
  const parts: string[] = [];
  const sci = score('scifact', OURS);
  if (sci !== undefined) {
    const hybrid = score('scifact', HYBRID);
    parts.push(
      `nDCG@10 ${f(sci)} on SciFact train (MiniSearch ${f(score('scifact', MINISEARCH))}, Orama defaults ${f(score('scifact', ORAMA))} in the same run${hybrid === undefined ? '' : `; hybrid with the bundled model ${f(hybrid)}`})`,
    );
  }
  const xquad = [...new Set(q.results.map((r) => r.dataset))].filter((d) => d.startsWith('xquad-'));
  const ours = xquad.map((d) => score(d, OURS)).filter((x): x is number => x !== undefined);
  if (ours.length > 0) {
    const above = xquad.every((d) => (score(d, OURS) ?? 0) > (score(d, MINISEARCH) ?? 1));
    parts.push(
      `on XQuAD dev ${f(Math.min(...ours))}-${f(Math.max(...ours))} in each of ${xquad.map((d) => d.slice(6)).join(', ')}${above ? ', above MiniSearch in each' : ''}`,
    );
    const en = score('xquad-en', HYBRID);
    if (en !== undefined) parts.push(`hybrid ${f(en)} on XQuAD-en (bm25 ${f(score('xquad-en', OURS))})`);
  }
  const dev = q.devset?.results;
  if (dev) {
    const of = (s: string) => dev.find((r) => r.system === s)?.overall.ndcg_at_10;
    parts.push(
      `on the Backlog.md dev set ${f(of(OURS))}${of(HYBRID) === undefined ? '' : `, hybrid ${f(of(HYBRID))}`} (MiniSearch ${f(of(MINISEARCH))})`,
    );
  }
  return (
    `- **Quality** (the last \`npm run eval\`, ${q.date.slice(0, 10)}: [docs/quality.md](docs/quality.md)): ` +
    `BM25F over Orama, ${parts.join('; ')}. How each change moved them: [docs/search.md](docs/search.md).`
  );
}

/** README.md with its quality block replaced (the block must be there). */
export function withQualityLine(readme: string, q: Quality): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md: no ${BEGIN} ... ${END} block`);
  return `${readme.slice(0, start + BEGIN.length)}\n${qualityLine(q)}\n${readme.slice(end)}`;
}

export function readQuality(root = ROOT): Quality {
  return JSON.parse(readFileSync(join(root, 'docs', 'quality.json'), 'utf8')) as Quality;
}

/** Rewrites README.md's quality block from docs/quality.json. */
export function updateReadme(root = ROOT): void {
  const file = join(root, 'README.md');
  writeFileSync(file, withQualityLine(readFileSync(file, 'utf8'), readQuality(root)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) updateReadme();
