/**
 * The ceiling of one process: the embedded engine (OramaSearchService, lexical) on generated corpora of
 * 50K, 200K and 500K documents (SciFact and XQuAD paragraphs recombined, bench/scale-corpus.ts), each
 * size in a process of its own. Per size: build time, heap and RSS after GC, lexical latency (the index
 * alone, and the whole `query()` with snippets once the bodies are prepared in the background, 300
 * queries of 2-4 words, limit 20), and the restart:
 * the index and its items written as `.cache/index.bin` is, read back and restored, to the first result.
 *
 *   npm run bench:ceiling [-- 50000 200000 500000]
 *
 * Prints a markdown table (docs/scaling.md) and one JSON line per size.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import type { SearchQuery } from '../src/search/types.js';
import { readIndexCache, writeIndexCache } from '../src/service/index-cache.js';
import type { BacklogItem } from '../src/storage/types.js';
import { latencyOf, loadPool, synthesize, wordQueriesFrom, type Latency } from './scale-corpus.js';
import { EVAL_DIR, timed } from './common.js';

const HERE = fileURLToPath(import.meta.url);
const MB = 2 ** 20;
const round = (n: number, d = 1) => Number(n.toFixed(d));

interface Ceiling {
  n: number;
  text_mb: number;
  build_s: number;
  heap_mb: number;
  rss_mb: number;
  peak_rss_mb: number;
  index_search: Latency;
  query: Latency;
  cache_mb: number | null;
  write_s: number | null;
  restore_to_first_result_s: number | null;
  /** Why the persisted index could not be written, when it could not. */
  cache_error?: string;
}

function gcMemory(): NodeJS.MemoryUsage {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage();
}

function itemOf(d: { id: string; title: string; text: string }): BacklogItem {
  return {
    ...{
      id: d.id,
      type: 'resource',
      state: null,
      title: d.title,
      status: null,
      parent_id: null,
      tags: [],
      author: null,
    },
    ...{ assignee: null, priority: null, references: [], created_at: null, updated_at: null, body: d.text },
    ...{ path: `docs/${d.id}.md`, folder: 'docs', file_type: 'md', size: d.text.length, mtime_ms: 0 },
    frontmatter: {},
  };
}

async function measure(n: number): Promise<Ceiling> {
  const pool = await loadPool(EVAL_DIR);
  const docs = synthesize(pool, n);
  pool.length = 0;
  const queries = wordQueriesFrom(
    docs.map((d) => d.text),
    300,
    n,
  ).map((q) => q.text);
  const searchDocs = docs.map((d) => ({
    id: d.id,
    type: 'resource' as const,
    title: d.title,
    body: d.text,
    path: `docs/${d.id}.md`,
  }));
  const base = gcMemory();
  const engine = new OramaSearchService();
  const [, build] = await timed(() => engine.build(searchDocs));
  const after = gcMemory();
  const request = (text: string): SearchQuery => ({
    ...{ text, matchMode: 'simple', filters: {}, sort: 'relevant', conjunctive: false },
    ...{ limit: 20, offset: 0, includeScores: false },
  });
  // As a server answers once its background work is done: bodies prepared (at most MAX_PREPARED of
  // them), proximity's word-pair filters filled.
  await engine.warmedUp();
  const indexSearch = await latencyOf((q) => engine.search({ query: q, limit: 20 }), queries);
  const query = await latencyOf((q) => engine.query(request(q)), queries);

  const result: Ceiling = {
    n,
    text_mb: round(docs.reduce((a, d) => a + d.title.length + d.text.length, 0) / MB),
    build_s: round(build / 1000),
    heap_mb: round((after.heapUsed - base.heapUsed) / MB, 0),
    rss_mb: round((after.rss - base.rss) / MB, 0),
    peak_rss_mb: 0,
    index_search: indexSearch,
    query,
    cache_mb: null,
    write_s: null,
    restore_to_first_result_s: null,
  };
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-ceiling-'));
  try {
    const file = join(dir, 'index.bin');
    const [bytes, write] = await timed(async () =>
      writeIndexCache(file, 'ceiling', {
        files: {},
        items: docs.map(itemOf),
        diagnostics: [],
        index: await engine.serialize(),
      }),
    );
    const [, restore] = await timed(async () => {
      const read = await readIndexCache(file, 'ceiling');
      if (!('snapshot' in read)) throw new Error(read.reason);
      const again = new OramaSearchService();
      again.restore(
        read.snapshot.index,
        read.snapshot.items.map((i) => ({
          id: i.id,
          type: i.type,
          title: i.title,
          body: i.body,
          path: i.path,
        })),
      );
      await again.query(request(queries[0]));
    });
    result.cache_mb = round(bytes / MB);
    result.write_s = round(write / 1000);
    result.restore_to_first_result_s = round(restore / 1000);
  } catch (err) {
    // The service reports the same failure as a `cache_unwritable` diagnostic and rebuilds on each start.
    result.cache_error = (err as Error).message;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.peak_rss_mb = round(process.resourceUsage().maxRSS / 1024, 0);
  return result;
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  process.stdout.write(`${JSON.stringify(await measure(Number(args[1])))}\n`);
} else {
  const sizes = (args.length ? args : ['50000', '200000', '500000']).map(Number);
  const rows: Ceiling[] = [];
  for (const n of sizes) {
    process.stderr.write(`ceiling: ${n.toLocaleString('en')} documents ...\n`);
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--max-old-space-size=16384', '--import', 'tsx', HERE, '--child', String(n)],
      { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * MB },
    );
    const row = JSON.parse(out.toString().trim().split('\n').pop()!) as Ceiling;
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  const ms = (l: Latency) => `${l.p50.toFixed(2)} / ${l.p95.toFixed(2)}`;
  process.stdout.write(
    [
      '',
      '| documents | text MB | build s | heap / RSS MB after build | peak RSS MB | index search p50 / p95 ms | query() with snippets p50 / p95 ms | cache file MB | cache write s | restore to first result s |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.n.toLocaleString('en')} | ${r.text_mb} | ${r.build_s} | ${r.heap_mb} / ${r.rss_mb} | ${r.peak_rss_mb} | ${ms(r.index_search)} | ${ms(r.query)} | ${r.cache_mb ?? `not written: ${r.cache_error}`} | ${r.write_s ?? '-'} | ${r.restore_to_first_result_s ?? '-'} |`,
      ),
      '',
    ].join('\n'),
  );
}
