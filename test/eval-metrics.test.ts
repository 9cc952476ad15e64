import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBacklogError } from '../src/errors.js';
import { loadBeir } from '../src/eval/beir.js';
import fc from 'fast-check';
import { monotoneFusionBound } from '../src/eval/fusion-bound.js';
import { mrrAtK, ndcgAtK, percentile, recallAtK } from '../src/eval/metrics.js';
import { fuseLinear, fuseRrf, minMax } from '../src/search/fusion.js';
import { formatReport, runEval, type Retriever } from '../src/eval/run-eval.js';

const rels = (o: Record<string, number>) => new Map(Object.entries(o));

describe('ndcgAtK', () => {
  it('binary: relevant docs at ranks 1 and 3, two qrels', () => {
    // DCG  = 1/log2(2) + 1/log2(4)  = 1 + 0.5           = 1.5
    // IDCG = 1/log2(2) + 1/log2(3)  = 1 + 0.6309297536  = 1.6309297536
    // nDCG = 1.5 / 1.6309297536 = 0.9197207891
    expect(ndcgAtK(['a', 'x', 'b', 'y'], rels({ a: 1, b: 1 }), 10)).toBeCloseTo(0.9197207891, 9);
  });

  it('graded gain is the qrel score; ideal comes from all qrels', () => {
    // ranking a(2), x, b(1); qrels a:2 b:1 c:3
    // DCG  = 2/1 + 1/log2(4) = 2.5
    // IDCG = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.2618595071 + 0.5 = 4.7618595071
    expect(ndcgAtK(['a', 'x', 'b'], rels({ a: 2, b: 1, c: 3 }), 10)).toBeCloseTo(2.5 / 4.7618595071, 9);
    // k = 1: DCG = 2, IDCG = 3
    expect(ndcgAtK(['a', 'x', 'b'], rels({ a: 2, b: 1, c: 3 }), 1)).toBeCloseTo(2 / 3, 9);
  });

  it('ignores hits past k, zero-score qrels and repeated ids; 0 without relevant docs', () => {
    expect(ndcgAtK(['x', 'y', 'a'], rels({ a: 1 }), 2)).toBe(0);
    expect(ndcgAtK(['z', 'a'], rels({ a: 1, z: 0 }), 10)).toBeCloseTo(1 / Math.log2(3), 9);
    // the second 'a' does not count again: DCG = 1, IDCG = 1
    expect(ndcgAtK(['a', 'a'], rels({ a: 1 }), 10)).toBe(1);
    expect(ndcgAtK(['a'], rels({ a: 0 }), 10)).toBe(0);
    expect(ndcgAtK([], rels({ a: 1 }), 10)).toBe(0);
  });
});

describe('recallAtK and mrrAtK', () => {
  const r = rels({ a: 1, b: 2, c: 0 });
  it('recall: relevant found in top k / all relevant', () => {
    expect(recallAtK(['a', 'x', 'b'], r, 2)).toBe(0.5);
    expect(recallAtK(['a', 'x', 'b'], r, 3)).toBe(1);
    expect(recallAtK(['c', 'x'], r, 10)).toBe(0);
    expect(recallAtK(['a'], rels({ c: 0 }), 10)).toBe(0);
  });
  it('mrr: 1 / rank of the first relevant hit within k', () => {
    expect(mrrAtK(['x', 'c', 'b', 'a'], r, 10)).toBeCloseTo(1 / 3, 12);
    expect(mrrAtK(['x', 'c', 'b'], r, 2)).toBe(0);
    expect(mrrAtK(['a'], r, 10)).toBe(1);
  });
});

describe('percentile (nearest rank)', () => {
  const v = [50, 15, 40, 20, 35]; // sorted: 15 20 35 40 50
  it('picks sorted[ceil(p/100 * n) - 1]', () => {
    expect(percentile(v, 0)).toBe(15);
    expect(percentile(v, 30)).toBe(20); // ceil(1.5) = 2
    expect(percentile(v, 40)).toBe(20); // ceil(2) = 2
    expect(percentile(v, 50)).toBe(35); // ceil(2.5) = 3
    expect(percentile(v, 95)).toBe(50); // ceil(4.75) = 5
    expect(percentile(v, 100)).toBe(50);
    expect(v).toEqual([50, 15, 40, 20, 35]); // input untouched
  });
  it('p95 of 1..100 is 95; empty gives NaN', () => {
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(95);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('loadBeir + runEval on a tiny BEIR folder', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'beir-'));
    mkdirSync(join(dir, 'qrels'));
    const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeFileSync(
      join(dir, 'corpus.jsonl'),
      jsonl([
        { _id: 'd1', title: 'Cats', text: 'cats purr softly' },
        { _id: 'd2', title: 'Dogs', text: 'dogs bark loudly' },
        { _id: 'd3', title: 'Pets', text: 'cats and dogs live together' },
        // same id as query q1, and the best match for it: must be dropped (BEIR convention)
        { _id: 'q1', title: '', text: 'why do cats purr' },
      ]),
    );
    writeFileSync(
      join(dir, 'queries.jsonl'),
      jsonl([
        { _id: 'q1', text: 'why do cats purr' },
        { _id: 'q2', text: 'do dogs bark' },
        { _id: 'q3', text: 'no qrels for me' },
      ]),
    );
    writeFileSync(
      join(dir, 'qrels', 'test.tsv'),
      'query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t1\nq2\td3\t1\nq2\td1\t0\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Scores each doc by the number of distinct query words in title + text; ties by id. */
  function overlapRetriever(calls: string[][]): Retriever {
    let docs: { id: string; words: Set<string> }[] = [];
    const words = (s: string) => new Set(s.toLowerCase().split(/\W+/).filter(Boolean));
    return {
      name: 'overlap',
      async build(input) {
        docs = input.map((d) => ({ id: d.id, words: words(`${d.title} ${d.text}`) }));
      },
      search(query, k) {
        const q = words(query);
        const hits = docs
          .map((d) => ({ id: d.id, score: [...q].filter((w) => d.words.has(w)).length }))
          .filter((h) => h.score > 0)
          .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
          .slice(0, k)
          .map((h) => h.id);
        calls.push(hits);
        return hits;
      },
    };
  }

  it('loads docs, keeps only queries with qrels, reads graded qrels', async () => {
    const ds = await loadBeir(dir, 'test');
    expect(ds.docs.map((d) => d.id)).toEqual(['d1', 'd2', 'd3', 'q1']);
    expect(ds.docs[0]).toEqual({ id: 'd1', title: 'Cats', text: 'cats purr softly' });
    expect(ds.queries).toEqual([
      { id: 'q1', text: 'why do cats purr' },
      { id: 'q2', text: 'do dogs bark' },
    ]);
    expect(ds.qrels.get('q1')).toEqual(rels({ d1: 2, d3: 1 }));
    expect(ds.qrels.get('q2')).toEqual(rels({ d3: 1, d1: 0 }));
  });

  it('computes the exact metrics and drops the hit equal to the query id', async () => {
    const ds = await loadBeir(dir, 'test');
    const calls: string[][] = [];
    const report = await runEval(ds, overlapRetriever(calls), { warmup: 0 });
    // q1 raw: q1(4 words) d1(2) d3(1) -> q1 dropped -> [d1, d3]: ideal order, nDCG 1, recall 1, MRR 1.
    //   (Had q1 been kept: DCG = 2/log2(3) + 1/log2(4) = 1.7619, nDCG = 1.7619 / 2.6309 = 0.6697.)
    // q2 raw: d2(2) d3(1) q1(1) -> d3 relevant at rank 2: nDCG 1/log2(3) = 0.6309, recall 1, MRR 0.5.
    // means: nDCG (1 + 0.6309298) / 2 = 0.8155, recall 1, MRR 0.75
    expect(calls[0]).toEqual(['q1', 'd1', 'd3']);
    expect(report).toMatchObject({
      ndcg_at_10: 0.8155,
      recall_at_10: 1,
      mrr_at_10: 0.75,
      queries: 2,
      docs: 4,
    });
    expect(report.p50_ms).toBeGreaterThanOrEqual(0);
    expect(report.p95_ms).toBeGreaterThanOrEqual(report.p50_ms);
    expect(report.build_ms).toBeGreaterThanOrEqual(0);
    expect(formatReport(report, 'bm25')).toContain('nDCG@10 0.8155');
  });

  it('asks for k + 1 results so the dropped query id does not cost a slot; warm-up queries are untimed extras', async () => {
    const ds = await loadBeir(dir, 'test');
    const calls: string[][] = [];
    const report = await runEval(ds, overlapRetriever(calls), { k: 2, warmup: 3 });
    // 3 warm-up calls (q1, q2, q1) + 2 timed ones, each asking for 3 results
    expect(calls).toHaveLength(5);
    // q1 @2: [d1, d3] -> nDCG 1 (cutting to 2 before dropping q1 would give [d1]: 2 / 2.6309 = 0.7602)
    // q2 @2: [d2, d3] -> 0.6309; mean 0.8155
    expect(report).toMatchObject({ ndcg_at_10: 0.8155, recall_at_10: 1, mrr_at_10: 0.75 });
  });

  it('names the missing file and the expected layout', async () => {
    const err = await loadBeir(dir, 'dev').catch((e: unknown) => e);
    expect(isBacklogError(err)).toBe(true);
    if (!isBacklogError(err)) return;
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain(join('qrels', 'dev.tsv'));
    expect(err.hint).toContain('corpus.jsonl');
    expect(err.hint).toContain('Splits present here: test');
    await expect(loadBeir(join(dir, 'nope'), 'test')).rejects.toThrow(/corpus\.jsonl/);
  });
});

describe('monotoneFusionBound', () => {
  const rels = new Map([['r', 1]]);
  const s = (...ids: string[]) => ids.map((id, i) => ({ id, score: 10 - i }));

  it('is 1 when one list has the relevant document first', () => {
    expect(monotoneFusionBound(s('x', 'r'), s('r', 'x'), rels, 10)).toBe(1);
  });

  it('counts only documents that beat the relevant one in both lists', () => {
    // x beats r in both lists: r can be second at best, whatever the fusion.
    expect(monotoneFusionBound(s('x', 'r', 'y'), s('x', 'y', 'r'), rels, 10)).toBeCloseTo(1 / Math.log2(3));
  });

  it('treats a document missing from a list as below everything there', () => {
    // r only in the first list, second there; x is first there and also in the second list.
    expect(monotoneFusionBound(s('x', 'r'), s('x'), rels, 10)).toBeCloseTo(1 / Math.log2(3));
    expect(monotoneFusionBound(s('x'), s('y'), rels, 10)).toBe(0);
  });

  it('does not let a score tie order documents: rank fusions break it by position', () => {
    // Found by the property below: c ties q in the second list but is listed after it, so reciprocal-rank
    // fusion ranks q above c although c scores higher in the first list.
    const a = [
      { id: 'd', score: 3e-323 },
      { id: 'c', score: 5e-324 },
      { id: 'q', score: 0 },
      { id: 'r', score: 0 },
    ];
    const b = [
      { id: 'q', score: 1 },
      { id: 'c', score: 1 },
      { id: 'r', score: 0 },
      { id: 'd', score: 0 },
    ];
    const judged = new Map([
      ['r', 1],
      ['q', 1],
    ]);
    const ranked = [...fuseRrf([a, b])].sort((p, q) => q[1] - p[1]).map(([id]) => id);
    expect(ranked[0]).toBe('q');
    expect(monotoneFusionBound(a, b, judged, 5)).toBeGreaterThanOrEqual(ndcgAtK(ranked, judged, 5));
  });

  it('counts a document missing from a list as scoring like its last (min-max fusion gives both 0)', () => {
    // u beats r in the second list only by position (tied at 1), and r is missing from the first list
    // where u is last: linear fusion ties them (0.7 each at w = 0.3), so r can come first.
    const a = [
      { id: 'x', score: 2 },
      { id: 'u', score: 1 },
    ];
    const b = [
      { id: 'u', score: 1 },
      { id: 'r', score: 1 },
      { id: 'z', score: 0 },
    ];
    const rel = new Map([['r', 1]]);
    const fused = fuseLinear(minMax(a), minMax(b), { lexical: 0.3 });
    expect(fused.get('u')).toBeCloseTo(fused.get('r')!);
    expect(monotoneFusionBound(a, b, rel, 5)).toBe(1);
  });

  it('bounds every linear and reciprocal-rank fusion of random lists, ties going the best way (property)', () => {
    const ids = ['r', 'q', 'a', 'b', 'c', 'd', 'e', 'f'];
    // Scores on a grid of twentieths: ties (where score and rank fusions part ways) come often, and no
    // subnormal number makes a strictly increasing fusion tie by rounding.
    const grid = (n: number) => fc.integer({ min: 0, max: n }).map((i) => i / n);
    const list = fc
      .subarray(ids, { minLength: 0 })
      .chain((sub) =>
        fc.tuple(
          fc.shuffledSubarray(sub, { minLength: sub.length }),
          fc.array(grid(20), { minLength: sub.length, maxLength: sub.length }),
        ),
      )
      .map(([order, scores]) => order.map((id, i) => ({ id, score: [...scores].sort((x, y) => y - x)[i] })));
    const judged = new Map([
      ['r', 1],
      ['q', 1],
    ]);
    // Linear fusion strictly increasing in both scores: a weight strictly between 0 and 1.
    const weight = fc.integer({ min: 1, max: 19 }).map((i) => i / 20);
    fc.assert(
      fc.property(list, list, weight, (a, b, w) => {
        const bound = monotoneFusionBound(a, b, judged, 5);
        for (const fused of [fuseLinear(minMax(a), minMax(b), { lexical: w }), fuseRrf([a, b])]) {
          // Ties broken for the relevant documents, the fusion's best case: the bound holds for any order.
          const ranked = [...fused]
            .sort((p, q) => q[1] - p[1] || (judged.has(q[0]) ? 1 : 0) - (judged.has(p[0]) ? 1 : 0))
            .map(([id]) => id);
          expect(ndcgAtK(ranked, judged, 5)).toBeLessThanOrEqual(bound + 1e-12);
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 500) },
    );
  });
});
