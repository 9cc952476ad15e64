/**
 * The evaluation harness for any engine behind the `SearchEngine` seam (bench/engine-eval.ts): the
 * embedded engine answers through it exactly as the eval's own retriever does, and an adapter over
 * another engine (MiniSearch, bench/engines/minisearch.ts) is scored by the same code and must filter
 * before its top-K.
 */
import { describe, expect, it } from 'vitest';
import type { BeirDataset } from '../src/eval/beir.js';
import { engineQuery, engineRetriever, oramaServiceRetriever, runEval } from '../src/eval/run-eval.js';
import * as embedded from '../bench/engines/embedded.js';
import * as minisearch from '../bench/engines/minisearch.js';

const TOPICS = ['login', 'sync', 'theme', 'export', 'search', 'upload', 'billing', 'backup'];
const WORDS = ['queue', 'retry', 'offline', 'token', 'dark', 'csv', 'index', 'quota', 'invoice', 'nightly'];

/** 40 short documents over eight topics, one query per topic naming words only its documents share. */
function dataset(): BeirDataset {
  const docs = Array.from({ length: 40 }, (_, i) => {
    const topic = TOPICS[i % TOPICS.length];
    const words = [WORDS[i % WORDS.length], WORDS[(i * 3) % WORDS.length]];
    return {
      id: `d${i}`,
      title: `${topic} ${words[0]}`,
      text: `The ${topic} flow needs ${words.join(' and ')} handling, case ${i}.`,
    };
  });
  const queries = TOPICS.map((t, i) => ({ id: `q${i}`, text: `${t} ${WORDS[i % WORDS.length]}` }));
  const qrels = new Map(
    queries.map((q, i) => [
      q.id,
      new Map(docs.filter((_, j) => j % TOPICS.length === i).map((d) => [d.id, 1] as [string, number])),
    ]),
  );
  return { name: 'synthetic', split: 'test', docs, queries, qrels };
}

// The embedded engine waits for the language detector (a worker thread): slow on a loaded machine.
describe('engine evaluation harness', { timeout: 180_000 }, () => {
  it('ranks the embedded engine through the seam as the eval ranks it directly', async () => {
    const data = dataset();
    const direct = oramaServiceRetriever();
    const seam = engineRetriever(embedded.name, embedded.createEngine);
    await direct.build(data.docs);
    await seam.build(data.docs);
    for (const q of data.queries)
      expect(await seam.search(q.text, 10)).toEqual(await direct.search(q.text, 10));
    const [a, b] = [await runEval(data, direct), await runEval(data, seam)];
    expect(b.ndcg_at_10).toBe(a.ndcg_at_10);
    expect(a.ndcg_at_10).toBeGreaterThan(0.5);
  });

  it('scores another engine behind the seam with the same code', async () => {
    const report = await runEval(dataset(), engineRetriever(minisearch.name, minisearch.createEngine));
    expect(report.queries).toBe(TOPICS.length);
    expect(report.ndcg_at_10).toBeGreaterThan(0.5);
  });

  it('an adapter filters before its top-K: a filtered page is full when enough documents match', async () => {
    for (const mod of [embedded, minisearch]) {
      const engine = await mod.createEngine();
      // 30 strong matches that are done, then 3 weak ones that are open: the open ones rank last unfiltered.
      const strong = Array.from({ length: 30 }, (_, i) => ({
        id: `s${i}`,
        title: 'login login token',
        body: 'login token refresh',
        status: 'Done',
        type: 'task' as const,
      }));
      const weak = Array.from({ length: 3 }, (_, i) => ({
        id: `w${i}`,
        title: `unrelated ${i}`,
        body: 'a long note that mentions login once among many other words about other things',
        status: 'To Do',
        type: 'task' as const,
      }));
      await engine.build([...strong, ...weak]);
      const unfiltered = await engine.query(engineQuery('login', 10));
      expect(unfiltered.results.map((r) => r.id).some((id) => id.startsWith('w'))).toBe(false);
      const open = await engine.query(engineQuery('login', 2, { status: ['To Do'] }));
      expect(open.results.map((r) => r.id)).toHaveLength(2);
      expect(open.results.every((r) => r.status === 'To Do')).toBe(true);
      expect(open.total).toBe(3);
    }
  });
});
