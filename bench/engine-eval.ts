/**
 * The judged evaluation against any engine behind the `SearchEngine` seam (src/search/types.ts): an
 * adapter for another engine is held to the numbers of the embedded one, in the same run.
 *
 *   npx tsx bench/engine-eval.ts [--engine <module>] [--sets devset,scifact,xquad-en]
 *
 * `<module>` exports `createEngine(): SearchEngine | Promise<SearchEngine>` (and optionally `name`):
 * bench/engines/embedded.ts is ours, bench/engines/minisearch.ts an adapter over another engine that runs
 * here. Every engine gets the same documents and the same validated requests (bm25, filters inside the
 * request); the dev set is scored per class, the BEIR sets as `npm run eval` scores them. docs/scaling.md.
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { loadBeir } from '../src/eval/beir.js';
import { engineRetriever, runEval } from '../src/eval/run-eval.js';
import type { SearchEngine } from '../src/search/types.js';
import { CLASSES, backlogSourceDir, loadDevset, readDocs } from './devset/corpus.js';
import { runSystem } from './devset/eval.js';
import { engineSystem } from './devset/systems.js';
import { EVAL_DIR, ROOT } from './common.js';

const SPLITS: Record<string, string> = { scifact: 'train' };

interface EngineModule {
  name?: string;
  createEngine(): SearchEngine | Promise<SearchEngine>;
}

const { values } = parseArgs({
  options: {
    engine: { type: 'string' },
    sets: { type: 'string', default: 'devset,scifact,xquad-en' },
  },
});

async function load(path: string): Promise<Required<EngineModule>> {
  const mod = (await import(pathToFileURL(resolve(path)).href)) as EngineModule;
  if (typeof mod.createEngine !== 'function') throw new Error(`${path}: exports no createEngine()`);
  return { name: mod.name ?? path, createEngine: mod.createEngine };
}

const f4 = (x: number) => x.toFixed(4);
const log = (m: string) => process.stderr.write(m + '\n');

async function main(): Promise<void> {
  const engines = [await load(join(ROOT, 'bench', 'engines', 'embedded.ts'))];
  if (values.engine) engines.push(await load(values.engine));
  const sets = values.sets!.split(',').map((s) => s.trim());
  const out: string[] = [];
  for (const set of sets) {
    if (set === 'devset') {
      if (!existsSync(backlogSourceDir())) {
        log(`devset: ${backlogSourceDir()} is missing; skipped`);
        continue;
      }
      const [devset, docs] = await Promise.all([loadDevset(), readDocs()]);
      out.push(
        '',
        `Judged dev set (${devset.queries.length} queries), nDCG@10:`,
        '',
        `| engine | all | ${CLASSES.join(' | ')} | p95 ms |`,
        `|---|---|${CLASSES.map(() => '---|').join('')}---|`,
      );
      for (const e of engines) {
        const r = await runSystem(devset, await engineSystem(e.name, await e.createEngine(), docs));
        out.push(
          `| ${e.name} | ${f4(r.overall.ndcg_at_10)} | ${CLASSES.map((c) => f4(r.by_class[c].ndcg_at_10)).join(' | ')} | ${r.p95_ms.toFixed(1)} |`,
        );
      }
      continue;
    }
    const dir = join(EVAL_DIR, set);
    if (!existsSync(dir)) {
      log(`${set}: ${dir} is missing; skipped`);
      continue;
    }
    const data = await loadBeir(dir, SPLITS[set] ?? 'dev');
    out.push(
      '',
      `${set} (${data.queries.length} queries over ${data.docs.length} documents):`,
      '',
      '| engine | nDCG@10 | Recall@10 | MRR@10 | p95 ms | build ms |',
      '|---|---|---|---|---|---|',
    );
    for (const e of engines) {
      const r = await runEval(data, engineRetriever(e.name, e.createEngine));
      out.push(
        `| ${e.name} | ${f4(r.ndcg_at_10)} | ${f4(r.recall_at_10)} | ${f4(r.mrr_at_10)} | ${r.p95_ms} | ${Math.round(r.build_ms)} |`,
      );
    }
  }
  process.stdout.write(out.join('\n') + '\n');
}

await main();
