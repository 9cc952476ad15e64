import { describe, expect, it } from 'vitest';
import { idf, lengthNormInverse, saturate } from '../src/search/bm25.js';
import { FieldIndex, phraseDocs } from '../src/search/field-index.js';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { LengthNorms, ScoreScratch, scoreBm25f } from '../src/search/score.js';

const groups = (...terms: string[]) => terms.map((term) => ({ alternatives: [{ term, weight: 1 }] }));

function setup(docs: Record<number, { title: string[]; body: string[] }>) {
  const title = new FieldIndex();
  const body = new FieldIndex();
  for (const [id, d] of Object.entries(docs)) {
    title.add(
      Number(id),
      d.title,
      d.title.map((_, i) => i),
    );
    body.add(
      Number(id),
      d.body,
      d.body.map((_, i) => i),
    );
  }
  const fields = [title, body];
  const size = Math.max(...Object.keys(docs).map(Number)) + 1;
  const scratch = new ScoreScratch();
  scratch.ensure(size);
  const run = (
    terms: string[],
    opts: Partial<{ weights: number[]; conjunctive: boolean; filter: Set<number> }> = {},
  ) => {
    const b = [0.5, 0.75];
    const norms = new LengthNorms().get(fields, b, size, 1);
    const out = scoreBm25f(
      fields,
      norms,
      groups(...terms),
      {
        weights: opts.weights ?? [2, 1],
        b,
        k1: 1.2,
        docCount: Object.keys(docs).length,
        conjunctive: opts.conjunctive ?? false,
        filter: opts.filter,
      },
      scratch,
    );
    return new Map(out.docs.map((d, i) => [d, { score: out.scores[i], mask: out.fieldMasks[i] }]));
  };
  return { run, title, body };
}

describe('BM25 functions', () => {
  it('idf is positive and falls as a term gets common', () => {
    expect(idf(100, 1)).toBeCloseTo(Math.log(1 + 99.5 / 1.5), 10);
    expect(idf(100, 100)).toBeGreaterThan(0);
    expect(idf(100, 1)).toBeGreaterThan(idf(100, 10));
  });
  it('length norm is 1 at average length and penalizes long fields', () => {
    expect(lengthNormInverse(10, 10, 0.75)).toBe(1);
    expect(lengthNormInverse(20, 10, 0.75)).toBeCloseTo(1 / 1.75, 10);
    expect(lengthNormInverse(20, 10, 0)).toBe(1);
    expect(lengthNormInverse(5, 0, 0.75)).toBe(1);
  });
  it('saturation approaches k1 + 1', () => {
    expect(saturate(1, 1.2)).toBeCloseTo(1, 10);
    expect(saturate(1000, 1.2)).toBeLessThan(2.2);
    expect(saturate(2, 1.2)).toBeGreaterThan(saturate(1, 1.2));
  });
});

describe('scoreBm25f', () => {
  const docs = {
    1: { title: ['login'], body: ['user', 'cannot', 'login', 'login'] },
    2: { title: ['billing'], body: ['login', 'page', 'color', 'theme', 'font', 'size'] },
    3: { title: ['sync'], body: ['offline', 'sync', 'queue'] },
  };

  it('ranks by weighted, length-normalized term frequency across fields', () => {
    const { run } = setup(docs);
    const r = run(['login']);
    expect([...r.keys()].sort()).toEqual([1, 2]);
    expect(r.get(1)!.score).toBeGreaterThan(r.get(2)!.score);
    expect(r.get(1)!.mask).toBe(0b11);
    expect(r.get(2)!.mask).toBe(0b10);
  });

  it('matches the BM25F formula exactly for one document', () => {
    const { run, title, body } = setup(docs);
    const r = run(['sync']);
    const tfTitle = 1 * lengthNormInverse(1, title.averageLength, 0.5);
    const tfBody = 1 * lengthNormInverse(3, body.averageLength, 0.75);
    const expected = idf(3, 1) * saturate(2 * tfTitle + 1 * tfBody, 1.2);
    expect(r.get(3)!.score).toBeCloseTo(expected, 10);
  });

  it('coordination: a document matching more query terms ranks higher', () => {
    const { run } = setup(docs);
    const r = run(['offline', 'queue', 'login']);
    expect(r.get(3)!.score).toBeGreaterThan(r.get(1)!.score);
  });

  it('conjunctive keeps only documents matching every term, across fields', () => {
    const { run } = setup(docs);
    expect([...run(['billing', 'page'], { conjunctive: true }).keys()]).toEqual([2]);
    expect([...run(['billing', 'offline'], { conjunctive: true }).keys()]).toEqual([]);
  });

  it('a filter removes documents but not their weight in idf', () => {
    const { run } = setup(docs);
    const all = run(['login']);
    const filtered = run(['login'], { filter: new Set([2]) });
    expect([...filtered.keys()]).toEqual([2]);
    expect(filtered.get(2)!.score).toBeCloseTo(all.get(2)!.score, 10);
  });

  it('a zero field weight leaves the field out', () => {
    const { run } = setup(docs);
    expect(run(['billing'], { weights: [0, 1] }).size).toBe(0);
  });

  it('the scratch buffers are clean between queries', () => {
    const { run } = setup(docs);
    const first = run(['login', 'sync']);
    const again = run(['login', 'sync']);
    expect([...again]).toEqual([...first]);
  });
});

describe('FieldIndex', () => {
  it('removes documents and reports emptied terms; round-trips through JSON', () => {
    const f = new FieldIndex();
    expect(f.add(1, ['a', 'b', 'a'], [0, 1, 2])).toEqual(['a', 'b']);
    expect(f.add(2, ['a'], [0])).toEqual([]);
    expect(f.postings.get('a')).toEqual({ docs: [1, 2], tfs: [2, 1], pos: [[0, 2], [0]] });
    expect(f.averageLength).toBe(2);
    expect(f.remove(1)).toEqual(['b']);
    expect(f.postings.get('a')).toEqual({ docs: [2], tfs: [1], pos: [[0]] });
    expect(f.averageLength).toBe(1);
    const copy = FieldIndex.fromJSON(JSON.parse(JSON.stringify(f.toJSON())));
    expect(copy.postings).toEqual(f.postings);
    expect(copy.averageLength).toBe(1);
    expect(copy.has(2)).toBe(true);
    expect(copy.remove(2)).toEqual(['a']);
  });
});

describe('phrases from positional postings', () => {
  it('finds terms at consecutive positions, counted as the query side counts words', () => {
    const analyzer = new TextAnalyzer();
    const f = new FieldIndex();
    const texts = [
      'The FeatureStore caches flags',
      'store the feature flags',
      'rate of the limit',
      'TASK-0042 blocks rate-limit work',
    ];
    texts.forEach((t, d) => {
      const { terms, positions } = analyzer.indexTermsWithPositions(t);
      f.add(d, terms, positions);
    });
    const all = new Set([0, 1, 2, 3]);
    const phrase = (q: string) => [...phraseDocs(f, analyzer.sequence(q), all)].sort();
    expect(phrase('feature store')).toEqual([0]);
    expect(phrase('store feature')).toEqual([1]); // not FeatureStore (order); "store the feature" (the is a stop-word)
    expect(phrase('feature flags')).toEqual([1]);
    expect(phrase('rate limit')).toEqual([2, 3]); // stop-words between words are not positions
    expect(phrase('task-42 blocks rate')).toEqual([3]);
    expect([...phraseDocs(f, analyzer.sequence('rate limit'), new Set([3]))]).toEqual([3]);
  });
});

describe('topKIndices', () => {
  it('selects the same best page as a full sort, ties by lower id', async () => {
    const { topKIndices } = await import('../src/search/orama-search-service.js');
    let seed = 3;
    const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let round = 0; round < 50; round++) {
      const n = 1 + Math.floor(rand() * 300);
      const scores = Array.from({ length: n }, () => Math.floor(rand() * 20) / 4);
      const docs = Array.from({ length: n }, (_, i) => (i * 7919) % 1009);
      const full = docs.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || docs[a] - docs[b]);
      const k = Math.floor(rand() * (n + 2));
      expect(topKIndices(scores, docs, k)).toEqual(full.slice(0, k));
    }
  });
});
