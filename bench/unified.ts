/**
 * The cost of the one search path on a real backlog: lexical `searchUnified` (filters, ranking, snippets,
 * result fields: what every surface pays) on the Backlog.md folder, side by side with MiniSearch (defaults,
 * title + body) answering the same queries in the same process, interleaved query by query so both see
 * the same load. Queries: 300 runs of 2-4 consecutive words of the items' titles (seeded).
 *
 *   npm run bench:unified [-- --queries 300 --limit 20 --passes 5 --dir ../shared/eval/backlog-md]
 *
 * Prints one JSON object (p50/p95/p99 in ms of each, and the index search alone).
 */
import MiniSearch from 'minisearch';
import { parseArgs } from 'node:util';
import { titleQueries } from './scale-corpus.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { percentile } from '../src/eval/metrics.js';
import { BACKLOG_MD } from './common.js';

const { values: args } = parseArgs({
  options: {
    dir: {
      type: 'string',
      default: BACKLOG_MD,
    },
    queries: { type: 'string', default: '300' },
    limit: { type: 'string', default: '20' },
    passes: { type: 'string', default: '5' },
  },
});
const limit = Number(args.limit);

const service = await openBacklog({ dir: args.dir, cacheDir: false, embeddings: 'none' });
const items = service.ids().map((id) => service.get(id));
const queries = titleQueries(
  items.map((i) => i.title),
  Number(args.queries),
);

const mini = new MiniSearch<{ id: string; title: string; text: string }>({ fields: ['title', 'text'] });
mini.addAll(items.map((i) => ({ id: i.id, title: i.title, text: i.body })));

const ours: number[] = [];
const theirs: number[] = [];
const index: number[] = [];
const time = (times: number[], run: () => unknown) => {
  const t = performance.now();
  run();
  times.push(performance.now() - t);
};
// Warm up both, then interleave: the same query through each, in turn.
for (const q of queries.slice(0, 50)) {
  await service.searchUnified(q, { limit });
  mini.search(q).slice(0, limit);
}
for (let pass = 0; pass < Number(args.passes); pass++) {
  for (const q of queries) {
    // Without embeddings searchUnified never awaits: the synchronous part is the whole search.
    time(ours, () => service.searchUnified(q, { limit }));
    time(theirs, () => mini.search(q).slice(0, limit));
    time(index, () => service.index.search({ query: q, limit }));
  }
}
const stats = (xs: number[]) => ({
  p50: Number(percentile(xs, 50).toFixed(3)),
  p95: Number(percentile(xs, 95).toFixed(3)),
  p99: Number(percentile(xs, 99).toFixed(3)),
});
const result = {
  files: items.length,
  queries: queries.length,
  passes: Number(args.passes),
  limit,
  searchUnified: stats(ours),
  minisearch: stats(theirs),
  index_search: stats(index),
  p95_ratio_vs_minisearch: Number((percentile(ours, 95) / percentile(theirs, 95)).toFixed(2)),
  examples: queries.slice(0, 5),
};
await closeBacklog(service);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
