/**
 * The query language against plain search on the Backlog.md folder, through `searchUnified`, in a process
 * of its own: `npm run bench` spawns it, and `npm run bench:query-language` runs it alone. Prints JSON
 * ({ forms: { plain | phrase | boolean | prefix: { p50, p95, p99 } }, examples }).
 *
 * Each query's words in four forms: as typed, as a phrase, with AND/OR, with prefixes. The forms take
 * turns query by query (a warm-up pass, then two timed passes). Timed one form after the other, each met
 * different background load, and prefix read 2.2x plain where it is 1.16x interleaved. In a process of
 * its own, because inside `npm run bench` (with SciFact and three engines' garbage behind it) the forms
 * that allocate more met more of the collector's pauses: boolean read 1.72x there, 1.00-1.06x here (3 runs).
 *
 * Options: --queries N (default 200), --dir (default ../shared/eval/backlog-md, env BACKLOG_EVAL_DIR).
 */
import { parseArgs } from 'node:util';
import { percentile } from '../src/eval/metrics.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { wordQueries } from './scale-corpus.js';
import { BACKLOG_MD } from './common.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '200' },
    dir: { type: 'string', default: BACKLOG_MD },
  },
});

const words = (q: string) =>
  q
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}\p{N}-]/gu, ''))
    .filter(Boolean);
export const FORMS: Record<string, (q: string) => string> = {
  plain: (q) => q,
  phrase: (q) => `"${words(q).join(' ')}"`,
  boolean: (q) => {
    const w = words(q);
    return w.length > 2 ? `${w[0]} AND ${w[1]} OR ${w.slice(2).join(' ')}` : w.join(' AND ');
  },
  prefix: (q) =>
    words(q)
      .map((w) => (w.length > 4 ? `${w.slice(0, 4)}*` : w))
      .join(' '),
};

const round = (n: number) => Number(n.toFixed(3));
// Without embeddings searchUnified never awaits: timing the call times the whole search.
const service = await openBacklog({ dir: values.dir, cacheDir: false, embeddings: 'none' });
const items = service.list({ limit: 1000 }).results.map((r) => service.get(r.id));
const queries = wordQueries(
  items.map((i) => `${i.title} ${i.body}`),
  Number(values.queries),
);
const times: Record<string, number[]> = Object.fromEntries(Object.keys(FORMS).map((f) => [f, []]));
for (let pass = 0; pass < 3; pass++) {
  for (const q of queries) {
    for (const [form, make] of Object.entries(FORMS)) {
      const text = make(q);
      if (!text.replace(/["*]/g, '').trim()) continue;
      const t = performance.now();
      service.searchUnified(text, { limit: 10, match_mode: form === 'plain' ? 'simple' : 'raw' });
      if (pass > 0) times[form].push(performance.now() - t);
    }
  }
}
await closeBacklog(service);
const forms = Object.fromEntries(
  Object.entries(times).map(([form, t]) => [
    form,
    { p50: round(percentile(t, 50)), p95: round(percentile(t, 95)), p99: round(percentile(t, 99)) },
  ]),
);
const examples = Object.fromEntries(
  Object.entries(FORMS).map(([form, make]) => [form, make('login rate limit')]),
);
console.log(JSON.stringify({ queries: queries.length, forms, examples }));
