/**
 * `npm run bench:multipliers`: the effect of each hybrid multiplier on the judged fixture
 * (test/fixtures/judged-queries.json) on the demo backlog, hybrid mode with the bundled model: the
 * judged queries passing and the mean reciprocal rank of their expected results, all multipliers on
 * and each one off. Prints a markdown table (pasted into docs/search.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import type { HybridSettings } from '../src/search/hybrid.js';

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
  let pass = 0;
  let rr = 0;
  let expected = 0;
  for (const j of judged) {
    const res = await service.searchUnified(j.query, { limit: 20, mode: 'hybrid', ...j.options });
    const list =
      j.in === 'related'
        ? (res.related ?? [])
        : j.in === 'groups'
          ? (res.groups?.[0]?.results ?? [])
          : res.results;
    const ids = list.map((r) => r.id);
    if (
      j.expect.every((id) => ids.slice(0, j.within).includes(id)) &&
      (j.absent ?? []).every((id) => !ids.includes(id))
    )
      pass++;
    for (const id of j.expect) {
      const at = ids.indexOf(id);
      rr += at >= 0 ? 1 / (at + 1) : 0;
      expected++;
    }
  }
  lines.push(`| ${name} | ${pass} / ${judged.length} | ${(rr / expected).toFixed(3)} |`);
  await closeBacklog(service);
}
process.stdout.write(`${lines.join('\n')}\n`);
