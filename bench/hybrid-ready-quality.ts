/**
 * The judged dev set (bench/devset) on the semantic index as the first pass of a background build leaves
 * it (every document by its title or its only chunk, the build held there while the queries run) against
 * the complete index (`backlog-search index`'s one pass, the dev set's persistent copy: warm when an
 * earlier `npm run eval` built it). Both through `searchUnified`, this tree's code, in one process.
 *
 *   npx tsx bench/hybrid-ready-quality.ts
 *
 * bench/hybrid-ready.ts --quality measures the same in the timed processes (and the full build there).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, sep } from 'node:path';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { backlogSourceDir, loadDevset } from './devset/corpus.js';
import { score } from './devset/eval.js';
import { openDevsetBacklog } from './devset/open.js';

const devset = await loadDevset();

async function run(svc: BacklogService, mode: 'bm25' | 'hybrid') {
  const ranked = new Map<string, string[]>();
  for (const q of devset.queries) {
    const res = await svc.searchUnified(q.text, { ...(q.options ?? {}), mode, limit: 10 });
    if (res.search_mode !== mode) throw new Error(`asked ${mode}, ran ${res.search_mode}`);
    ranked.set(
      q.id,
      res.results.map((r) => r.path),
    );
  }
  const s = score(devset, ranked);
  const st = svc.semanticStatus();
  return {
    ndcg_at_10: Number(s.overall.ndcg_at_10.toFixed(4)),
    by_class: Object.fromEntries(
      Object.entries(s.by_class).map(([c, v]) => [c, Number(v.ndcg_at_10.toFixed(3))]),
    ),
    chunks: `${st.done} of ${st.total}`,
  };
}

// The first pass on an empty cache, held there.
const base = await mkdtemp(join(os.tmpdir(), 'bs-ready-quality-'));
const dir = join(base, 'backlog-md');
await cp(backlogSourceDir(), dir, { recursive: true, filter: (s) => !s.split(sep).includes('.cache') });
const load = [os.loadavg()[0]];
const first = await openBacklog({ dir, embeddings: 'bundled', embedMissing: 'background' });
while (first.semanticStatus().state !== 'ready') await new Promise((r) => setTimeout(r, 20));
const semantic = (first as unknown as { semantic: { enqueue(w: () => Promise<unknown>): unknown } }).semantic;
let release: () => void = () => {};
semantic.enqueue(() => new Promise<void>((r) => (release = r)));
await new Promise((r) => setTimeout(r, 100));
const bm25 = await run(first, 'bm25');
const atFirstPass = await run(first, 'hybrid');
release();
await closeBacklog(first);
await rm(base, { recursive: true, force: true });

// The complete index.
const full = await openDevsetBacklog('bundled', (m) => process.stderr.write(`${m}\n`));
const complete = await run(full.backlog, 'hybrid');
await full.close();
load.push(os.loadavg()[0]);

process.stdout.write(
  JSON.stringify(
    { bm25, hybrid_first_pass: atFirstPass, hybrid_complete: complete, cache_warm: full.cacheWasWarm, load },
    null,
    1,
  ) + '\n',
);
