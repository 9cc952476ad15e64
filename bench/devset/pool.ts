/**
 * Pooling for the judged dev set (`npx tsx bench/devset/pool.ts`, docs/devset.md): the top POOL_DEPTH
 * paths of several systems for every query of queries.jsonl, so that the documents judged are not those of
 * one ranker. Writes bench/devset/backlog-md/pool.tsv (query-id, path, `system:rank ...`) and lists the
 * pooled documents not judged yet in qrels/dev.tsv. Opening hybrid the first time embeds the whole
 * folder (about 5 minutes here); the copy's cache makes later runs start in seconds.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEVSET_DIR, DEVSET_SPLIT, loadDevset, readDocs } from './corpus.js';
import { openDevsetBacklog } from './open.js';
import {
  miniSearchSystem,
  oramaSystem,
  ourSystem,
  ourSystemIdealFilters,
  type DevsetSystem,
} from './systems.js';

/** How deep each system is pooled; the vector-only ranking adds its top 10 (it is not a system under test). */
export const POOL_DEPTH = 20;
const SEMANTIC_DEPTH = 10;

const log = (msg: string) => process.stderr.write(msg + '\n');

async function main(): Promise<void> {
  const qrelsPath = join(DEVSET_DIR, 'qrels', `${DEVSET_SPLIT}.tsv`);
  if (!existsSync(qrelsPath)) {
    await mkdir(join(DEVSET_DIR, 'qrels'), { recursive: true });
    await writeFile(qrelsPath, 'query-id\tcorpus-id\tscore\n');
  }
  const { queries, qrels } = await loadDevset();
  const docs = await readDocs();
  log(`${queries.length} queries, ${docs.length} documents`);

  const lexical = await openDevsetBacklog('none');
  log('opening hybrid (embeddings into the temp copy, once)...');
  const hybrid = await openDevsetBacklog('bundled', log);
  log(
    `hybrid ready in ${(hybrid.readyMs / 1000).toFixed(1)} s (${hybrid.chunks} chunks, cache ${hybrid.cacheWasWarm ? 'warm' : 'cold'})`,
  );

  const systems: [short: string, system: DevsetSystem, depth: number][] = [
    ['bm25', ourSystem('backlog-search bm25', lexical.backlog, 'bm25'), POOL_DEPTH],
    ['hybrid', ourSystem('backlog-search hybrid', hybrid.backlog, 'hybrid'), POOL_DEPTH],
    ['vector', ourSystem('backlog-search semantic', hybrid.backlog, 'semantic'), SEMANTIC_DEPTH],
    ['ms', miniSearchSystem(docs), POOL_DEPTH],
    ['msb', miniSearchSystem(docs, 2), POOL_DEPTH],
    ['orama', await oramaSystem(docs), POOL_DEPTH],
  ];
  const idealFilters = ourSystemIdealFilters('bm25, filters as meant', lexical.backlog, docs);

  const rows: string[] = ['query-id\tcorpus-id\tsystems'];
  let unjudged = 0;
  for (const q of queries) {
    const pooled = new Map<string, string[]>();
    const add = (short: string, paths: string[]) =>
      paths.forEach((p, i) => pooled.set(p, [...(pooled.get(p) ?? []), `${short}:${i + 1}`]));
    for (const [short, system, depth] of systems) add(short, await system.search(q, depth));
    if (q.options) add('bm25f', await idealFilters.search(q, POOL_DEPTH));
    for (const [path, hits] of pooled) {
      rows.push(`${q.id}\t${path}\t${hits.join(' ')}`);
      if (!qrels.get(q.id)?.has(path)) unjudged++;
    }
    log(`${q.id} ${JSON.stringify(q.text)}: ${pooled.size} pooled`);
  }
  await writeFile(join(DEVSET_DIR, 'pool.tsv'), rows.join('\n') + '\n');
  log(
    `wrote pool.tsv: ${rows.length - 1} (query, document) pairs; ${unjudged} not judged yet in qrels/dev.tsv`,
  );
  await lexical.close();
  await hybrid.close();
}

main().catch((e: unknown) => {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
