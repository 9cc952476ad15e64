/**
 * `npm run bench:weights`: the judged fixture (test/fixtures/judged-queries.json) on the demo backlog
 * under several field-weight settings: how many judged queries pass and the mean reciprocal rank of
 * their expected results. Prints a markdown table (pasted into docs/search.md).
 */
import { join } from 'node:path';
import { scoreJudged } from '../test/judged-fixture.js';
import { fileURLToPath } from 'node:url';
import { openBacklog } from '../src/service/open-backlog.js';
import { DEFAULT_SEARCH_SETTINGS, type SearchSettings } from '../src/search/orama-search-service.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const variants: [string, Partial<SearchSettings['fieldWeights']>][] = [
  ['default: title 2, tags 1.5, author 1.2, body 1, extra 0.5', {}],
  ['all fields 1', { title: 1, tags: 1, author: 1, body: 1, extra: 1 }],
  ['title 4', { title: 4 }],
  ['body only (title, tags, author 0.01)', { title: 0.01, tags: 0.01, author: 0.01 }],
  ['tags 0.01 (tags nearly off)', { tags: 0.01 }],
];

const lines = ['| field weights | judged queries passing | MRR of expected results |', '|---|---|---|'];
for (const [name, weights] of variants) {
  const service = await openBacklog({
    dir: join(ROOT, 'demo/backlog'),
    cacheDir: false,
    search: { fieldWeights: { ...DEFAULT_SEARCH_SETTINGS.fieldWeights, ...weights } },
  });
  const { pass, total, mrr } = await scoreJudged(service, {});
  lines.push(`| ${name} | ${pass} / ${total} | ${mrr.toFixed(3)} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
