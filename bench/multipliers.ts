/**
 * `npm run bench:multipliers`: the effect of each hybrid multiplier on the judged fixture
 * (test/fixtures/judged-queries.json) on the demo backlog, hybrid mode with the bundled model: the
 * judged queries passing and the mean reciprocal rank of their expected results, all multipliers on
 * and each one off. Prints a markdown table (pasted into docs/search.md).
 */
import { join } from 'node:path';
import { scoreJudged } from '../test/judged-fixture.js';
import { fileURLToPath } from 'node:url';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import type { HybridSettings } from '../src/search/hybrid.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const off = { title: false, id: false, type: false, recency: false };
const variants: [string, Partial<HybridSettings>][] = [
  ['hybrid, default multipliers (title, id, epic)', {}],
  ['no multipliers', { multipliers: off }],
  ['without title coverage', { multipliers: { ...off, id: true, type: true } }],
  ['without exact id', { multipliers: { ...off, title: true, type: true } }],
  ['without epic type', { multipliers: { ...off, title: true, id: true } }],
  ['default + recency', { multipliers: { title: true, id: true, type: true, recency: true } }],
];
const lines = ['| hybrid setting | judged queries passing | MRR of expected results |', '|---|---|---|'];
for (const [name, hybrid] of variants) {
  const service = await openBacklog({
    dir: join(ROOT, 'demo/backlog'),
    embeddings: 'bundled',
    embedMissing: 'wait',
    hybrid,
  });
  const { pass, total, mrr } = await scoreJudged(service, { mode: 'hybrid' });
  lines.push(`| ${name} | ${pass} / ${total} | ${mrr.toFixed(3)} |`);
  await closeBacklog(service);
}
process.stdout.write(`${lines.join('\n')}\n`);
