/**
 * `npm run bench:hybrid-latency`: the hybrid latency target of `npm run bench` alone, in a minute instead
 * of half an hour. On the Backlog.md folder with the bundled model: lexical, fresh hybrid and repeated
 * hybrid queries, and the query embedding alone, interleaved with the fresh hybrid queries (the target:
 * hybrid p95 <= embedding p95 + 5 ms). Uses the cache `npm run bench` leaves in .cache/bench/backlog-md;
 * without it every chunk is embedded first (minutes). Prints JSON.
 *
 * Options: --queries N (default 300, as `npm run bench` runs), --runs N (repeat the measurement, default 1).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { measureQueryLatency } from './hybrid-perf.js';
import { wordQueries } from './scale-corpus.js';
import { BACKLOG_MD, ROOT } from './common.js';

const { values } = parseArgs({
  options: { queries: { type: 'string', default: '300' }, runs: { type: 'string', default: '1' } },
});
const backlogDir = BACKLOG_MD;

// The queries of `npm run bench`: words taken from the tasks themselves.
const lexical = await openBacklog({ dir: backlogDir, cacheDir: false, embeddings: 'none' });
const items = lexical.list({ limit: 1000 }).results.map((r) => lexical.get(r.id));
const queries = wordQueries(
  items.map((i) => `${i.title} ${i.body}`),
  Number(values.queries),
);
await closeBacklog(lexical);

for (let run = 0; run < Number(values.runs); run++) {
  const { bm25, hybridFresh, hybridRepeat, embed } = await measureQueryLatency(
    backlogDir,
    join(ROOT, '.cache', 'bench', 'backlog-md'),
    // Each run its own fresh queries: a repeated run would find its embeddings cached.
    queries.map((q) => (run === 0 ? q : `${q} ${run}`)),
    (s) => process.stderr.write(`${s}\n`),
  );
  const limit = Number((embed.p95 + 5).toFixed(2));
  console.log(
    JSON.stringify({
      run,
      bm25,
      hybrid_fresh: hybridFresh,
      hybrid_repeat: hybridRepeat,
      query_embedding: embed,
      target_ms: limit,
      met: hybridFresh.p95 <= limit,
      hybrid_minus_embedding_p50_ms: Number((hybridFresh.p50 - embed.p50).toFixed(2)),
    }),
  );
}
