/**
 * `npm run bench:weights`: the judged fixture (test/fixtures/judged-queries.json) on the demo backlog
 * under several field-weight settings: how many judged queries pass and the mean reciprocal rank of
 * their expected results. Prints a markdown table (pasted into docs/search.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBacklog } from '../src/service/open-backlog.js';
import { DEFAULT_SEARCH_SETTINGS, type SearchSettings } from '../src/search/orama-search-service.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
interface Judged {
  query: string;
  expect: string[];
  within: number;
  absent?: string[];
  in?: 'results' | 'related' | 'groups';
  options?: Record<string, unknown>;
}
const judged: Judged[] = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/judged-queries.json'), 'utf8'));

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
  let pass = 0;
  let rr = 0;
  let expected = 0;
  for (const j of judged) {
    const res = await service.searchUnified(j.query, { limit: 20, ...j.options });
    const list =
      j.in === 'related'
        ? (res.related ?? [])
        : j.in === 'groups'
          ? (res.groups?.[0]?.results ?? [])
          : res.results;
    const ids = list.map((r) => r.id);
    const ok =
      j.expect.every((id) => ids.slice(0, j.within).includes(id)) &&
      (j.absent ?? []).every((id) => !ids.includes(id));
    if (ok) pass++;
    for (const id of j.expect) {
      const at = ids.indexOf(id);
      rr += at >= 0 ? 1 / (at + 1) : 0;
      expected++;
    }
  }
  lines.push(`| ${name} | ${pass} / ${judged.length} | ${(rr / expected).toFixed(3)} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
