import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idf, lengthNormInverse, saturate } from '../src/search/bm25.js';
import { decode, encode } from '@msgpack/msgpack';
import { FieldIndex, type SavedFieldIndex } from '../src/search/field-index.js';
import { adjacentPairs, phraseDocs, rewardProximity } from '../src/search/phrase.js';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { LengthNorms, ScoreScratch, scoreBm25f, type ScoredDocs } from '../src/search/score.js';

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
    return new Map(Array.from(out.docs, (d, i) => [d, { score: out.scores[i], mask: out.fieldMasks[i] }]));
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
  it('removes documents and reports emptied terms; round-trips through its saved form', () => {
    const f = new FieldIndex();
    expect(f.add(1, ['a', 'b', 'a'], [0, 1, 2])).toEqual(['a', 'b']);
    expect(f.add(2, ['a'], [0])).toEqual([]);
    expect(f.posting('a')).toEqual({ docs: [1, 2], tfs: [2, 1] });
    expect(f.positions(1, 'a')).toEqual([0, 2]);
    expect(f.averageLength).toBe(2);
    expect(f.remove(1)).toEqual(['b']);
    expect(f.posting('a')).toEqual({ docs: [2], tfs: [1] });
    expect(f.posting('b')).toBeUndefined();
    expect(f.averageLength).toBe(1);
    const copy = FieldIndex.load(f.save());
    expect(copy.posting('a')).toEqual(f.posting('a'));
    expect(copy.averageLength).toBe(1);
    expect(copy.has(2)).toBe(true);
    expect(copy.has(1)).toBe(false);
    expect(copy.remove(2)).toEqual(['a']);
  });

  it('keeps postings sorted by document and positions through removal and re-adding', () => {
    const f = new FieldIndex();
    for (let d = 0; d < 50; d++) f.add(d, ['common', `only${d}`, 'common'], [0, 1, 2]);
    for (let d = 0; d < 50; d += 3) f.remove(d);
    // Re-added under lower ids than the last one: inserted in order, not appended.
    f.add(0, ['common', 'fresh'], [5, 6]);
    f.add(3, ['fresh', 'common'], [0, 1]);
    const docs = f.posting('common')!.docs;
    expect(docs).toEqual([...docs].sort((a, b) => a - b));
    expect(docs).toHaveLength(50 - 17 + 2);
    expect(f.posting('fresh')).toEqual({ docs: [0, 3], tfs: [1, 1] });
    expect(f.positions(0, 'fresh')).toEqual([1]); // positions are relative: the gap before 5 is dropped
    expect(f.posting('only3')).toBeUndefined();
    expect(f.posting('only4')).toEqual({ docs: [4], tfs: [1] });
    const copy = FieldIndex.load(f.save());
    for (const t of f.vocabulary()) expect(copy.posting(t)).toEqual(f.posting(t));
    expect(copy.termCount).toBe(f.termCount);
  });

  it('round-trips through msgpack, its arrays at any byte offset of a Node Buffer', () => {
    const analyzer = new TextAnalyzer();
    const f = new FieldIndex();
    const texts = ['The FeatureStore caches flags', '', 'rate-limit the TASK-0042 sync queue', 'sync flags'];
    texts.forEach((t, d) => {
      const { terms, positions } = analyzer.indexTermsWithPositions(t);
      if (d !== 1) f.add(d, terms, positions);
    });
    f.add(5, [], []);
    // Bins land at odd offsets after a 1-byte field; decoding a Buffer gives Buffer views into it.
    const decoded = decode(Buffer.from(encode({ a: 1, f: f.save() }))) as { f: SavedFieldIndex };
    expect(decoded.f.seq.byteOffset % 4).not.toBe(0);
    const copy = FieldIndex.load(decoded.f);
    expect([...copy.vocabulary()].sort()).toEqual([...f.vocabulary()].sort());
    for (const t of f.vocabulary()) {
      expect(copy.posting(t)).toEqual(f.posting(t));
      for (const d of [0, 2, 3]) expect(copy.positions(d, t)).toEqual(f.positions(d, t));
    }
    expect([copy.has(0), copy.has(1), copy.has(4), copy.has(5)]).toEqual([true, false, false, true]);
    expect(copy.lengths).toEqual(f.lengths);
    expect(copy.averageLength).toBe(f.averageLength);
    expect([...phraseDocs(copy, analyzer.sequence('sync queue'), [0, 2, 3])]).toEqual([2]);
  });

  it('reuses the ids of emptied terms, also after a round trip', () => {
    const f = new FieldIndex();
    f.add(0, ['x', 'y'], [0, 1]);
    f.add(1, ['z'], [0]);
    f.remove(0); // frees x and y
    const copy = FieldIndex.load(f.save());
    expect(copy.termCount).toBe(1);
    expect(copy.add(2, ['w', 'v', 'z'], [0, 1, 2])).toEqual(['w', 'v']);
    expect(copy.termId('w')).toBeLessThan(2);
    expect(copy.termId('v')).toBeLessThan(2);
    expect(copy.posting('z')).toEqual({ docs: [1, 2], tfs: [1, 1] });
    expect(copy.termCount).toBe(3);
  });

  it('rejects a saved form whose parts do not agree', () => {
    const f = new FieldIndex();
    f.add(0, ['x', 'y'], [0, 1]);
    const saved = f.save();
    expect(() => FieldIndex.load({ ...saved, terms: ['x'] })).toThrow(/do not match/);
    const wrongDf = new Uint8Array(saved.docFreqs);
    wrongDf[0] = 2; // x in two documents
    expect(() => FieldIndex.load({ ...saved, docFreqs: wrongDf })).toThrow(/do not match/);
    expect(() => FieldIndex.load({ ...saved, seq: saved.seq.subarray(0, 4) })).toThrow(/length/);
    expect(() => FieldIndex.load({ ...saved, lengths: saved.lengths.subarray(0, 3) })).toThrow(
      /multiple of 4/,
    );
  });

  it('survives many updates (slots moved and compacted) with the same postings as a fresh index', () => {
    const f = new FieldIndex(0); // compacts whenever garbage exceeds the live entries
    const words = (d: number, round: number) => [
      ...Array.from({ length: 5 + ((d * 7 + round) % 20) }, (_, i) => `w${(d * 31 + i * 17 + round) % 300}`),
      `r${round}-${d % 40}`, // emptied when the next round re-adds the document
    ];
    for (let round = 0; round < 6; round++) {
      for (let d = 0; d < 400; d++) {
        if ((d + round) % 5 === 0) f.remove(d);
        else {
          const t = words(d, round);
          f.add(
            d,
            t,
            t.map((_, i) => i),
          );
        }
      }
    }
    const fresh = new FieldIndex();
    for (let d = 0; d < 400; d++) {
      if ((d + 5) % 5 === 0) continue;
      const t = words(d, 5);
      fresh.add(
        d,
        t,
        t.map((_, i) => i),
      );
    }
    expect([...f.vocabulary()].sort()).toEqual([...fresh.vocabulary()].sort());
    for (const t of fresh.vocabulary()) expect(f.posting(t)).toEqual(fresh.posting(t));
    expect(f.averageLength).toBeCloseTo(fresh.averageLength, 10);
    for (let d = 0; d < 400; d += 7) {
      for (const t of new Set(words(d, 5))) expect(f.positions(d, t)).toEqual(fresh.positions(d, t));
      const seq = words(d, 5).slice(2, 5);
      expect(phraseDocs(f, seq, [d]).size).toBe(d % 5 === 0 ? 0 : 1);
    }
    const copy = FieldIndex.load(f.save());
    for (const t of fresh.vocabulary()) expect(copy.posting(t)).toEqual(fresh.posting(t));
  });
});

describe('phrases from the token sequences', () => {
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
    expect(phrase('store caches')).toEqual([0]);
    expect(phrase('task blocks')).toEqual([3]); // an id's parts share its position
    expect(phrase('42 blocks')).toEqual([3]);
    expect(phrase('feature feature')).toEqual([]);

    // After removal and re-adding under the same id, the new text answers; after a round trip too.
    f.remove(0);
    expect(phrase('feature store')).toEqual([]);
    f.add(
      0,
      ...(Object.values(analyzer.indexTermsWithPositions('a store of feature flags')) as [
        string[],
        number[],
      ]),
    );
    expect(phrase('feature flags')).toEqual([0, 1]);
    expect(phrase('feature store')).toEqual([]);
    const copy = FieldIndex.load(f.save());
    expect([...phraseDocs(copy, analyzer.sequence('feature flags'), all)].sort()).toEqual([0, 1]);
    expect([...phraseDocs(copy, analyzer.sequence('rate limit'), all)].sort()).toEqual([2, 3]);
  });

  it('matches phrases of any length, repeated words and gaps in the positions', () => {
    const f = new FieldIndex();
    const words = Array.from({ length: 40 }, (_, i) => `w${i % 7}`);
    f.add(
      0,
      words,
      words.map((_, i) => i),
    );
    f.add(1, ['a', 'b', 'c'], [0, 1, 3]);
    f.add(2, ['a', 'a', 'b'], [0, 1, 2]);
    const docs = (terms: string[]) => [...phraseDocs(f, terms, [0, 1, 2])].sort();
    expect(docs(words.slice(3, 38))).toEqual([0]); // longer than the bit-mask path
    expect(docs([...words.slice(3, 38), 'w0'])).toEqual([]);
    expect(docs(['a', 'b'])).toEqual([1, 2]);
    expect(docs(['b', 'c'])).toEqual([]); // position 2 is empty
    expect(docs(['a', 'a', 'b'])).toEqual([2]);
    expect(docs(['a', 'missing'])).toEqual([]);
    expect(f.positions(1, 'c')).toEqual([3]);
  });
});

describe('topKIndices', () => {
  it('selects the same best page as a full sort, ties by lower id', async () => {
    const { topKIndices } = await import('../src/search/lexical-index.js');
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

describe('scoreBm25f keep', () => {
  const vocab = ['auth', 'sync', 'queue', 'login', 'cache', 'retry', 'token', 'page'];
  const doc = fc.record({
    title: fc.array(fc.constantFrom(...vocab), { maxLength: 4 }),
    body: fc.array(fc.constantFrom(...vocab), { maxLength: 30 }),
  });
  const best = (out: ScoredDocs) =>
    Array.from(out.docs, (d, i) => ({ d, score: out.scores[i], mask: out.fieldMasks[i] })).sort(
      (a, b) => b.score - a.score || a.d - b.d,
    );

  it('returns exactly the best `keep` matches of the full scoring, and the full total', () => {
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 120 }),
        fc.array(fc.array(fc.constantFrom(...vocab), { minLength: 1, maxLength: 3 }), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.integer({ min: 1, max: 30 }),
        fc.boolean(),
        fc.boolean(),
        (docs, query, keep, conjunctive, filtered) => {
          const title = new FieldIndex();
          const body = new FieldIndex();
          docs.forEach((d, id) => {
            title.add(
              id,
              d.title,
              d.title.map((_, i) => i),
            );
            body.add(
              id,
              d.body,
              d.body.map((_, i) => i),
            );
          });
          const fields = [title, body];
          const norms = new LengthNorms().get(fields, [0.5, 0.75], docs.length, 1);
          // A word with several alternatives takes the best of them, as prefix and typo expansions do.
          const groups = query.map((alts) => ({
            alternatives: alts.map((term, i) => ({ term, weight: i === 0 ? 1 : 0.5 })),
          }));
          const filter = filtered ? new Set(docs.map((_, i) => i).filter((i) => i % 3 !== 0)) : undefined;
          const opts = {
            ...{ weights: [2, 1], b: [0.5, 0.75], k1: 1.2, docCount: docs.length, conjunctive, filter },
            ...{ titleCoverage: 0.75, titleField: 0 },
          };
          const scratch = new ScoreScratch();
          scratch.ensure(docs.length);
          const full = scoreBm25f(fields, norms, groups, opts, scratch);
          const kept = scoreBm25f(
            fields,
            norms,
            groups,
            { ...opts, keep: { best: keep, slack: 1, atMost: keep } },
            scratch,
          );
          expect(kept.total).toBe(full.total);
          expect(full.total).toBe(full.docs.length);
          expect(best(kept)).toEqual(best(full).slice(0, keep));
          // With slack: the best `keep`, and every other match within the factor of the keep-th (the
          // ones a bonus of up to it could lift), unless those are over `atMost`: then the best atMost.
          const ranked = best(full);
          const slack = 1.25;
          const atMost = keep + 5;
          const lifted = scoreBm25f(
            fields,
            norms,
            groups,
            { ...opts, keep: { best: keep, slack, atMost } },
            scratch,
          );
          const floor = ranked.length > keep ? ranked[keep - 1].score / slack : -Infinity;
          const within = ranked.filter((m, i) => i < keep || m.score >= floor);
          expect(best(lifted)).toEqual(within.length > atMost ? ranked.slice(0, atMost) : within);
          // The best `keep` first, best first; the others within reach after them, in no order.
          const head = Math.min(keep, lifted.docs.length);
          expect(Array.from(lifted.docs).slice(0, head)).toEqual(
            best(lifted)
              .slice(0, head)
              .map((m) => m.d),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('proximity', () => {
  const vocab = ['auth', 'sync', 'queue', 'login', 'cache', 'retry', 'token', 'page'];
  /** A document's words with positions that sometimes repeat (a compound's joined form) or skip (a gap). */
  const words = fc.array(fc.tuple(fc.constantFrom(...vocab), fc.constantFrom(0, 1, 1, 1, 2)), {
    maxLength: 30,
  });
  const positioned = (ws: [string, number][]) => {
    let pos = 0;
    return { terms: ws.map(([w]) => w), positions: ws.map(([, step], i) => (pos += i === 0 ? 0 : step)) };
  };

  it('the adjacency filter never says no to a pair that stands adjacent, and says yes to few others', () => {
    let absent = 0;
    let yes = 0;
    fc.assert(
      fc.property(fc.array(words, { minLength: 1, maxLength: 40 }), (docs) => {
        const f = new FieldIndex();
        docs.forEach((ws, d) => {
          const { terms, positions } = positioned(ws);
          f.add(d, terms, positions);
        });
        expect(f.fillAdjacency(Infinity)).toBeGreaterThan(0);
        docs.forEach((_, d) => {
          for (const a of vocab)
            for (const b of vocab) {
              const ia = f.termId(a);
              const ib = f.termId(b);
              if (ia < 0 || ib < 0) continue;
              const adjacent = adjacentPairs(f.sequence(d), [ia], [ib]) === 1;
              const maybe = f.mayBeAdjacent(d, ia, ib);
              if (adjacent) expect(maybe).toBe(true);
              else {
                absent++;
                if (maybe) yes++;
              }
            }
        });
      }),
      { numRuns: 100 },
    );
    expect(absent).toBeGreaterThan(10_000);
    expect(yes / absent).toBeLessThan(0.05); // sized for about 1%
  });

  it('says maybe for a document not yet in the filter; fills in slices; takes documents added later', () => {
    const f = new FieldIndex();
    const id = (t: string) => f.termId(t);
    for (let d = 0; d < 100; d++) f.add(d, ['queue', 'retry', 'auth'], [0, 1, 2]);
    expect(f.mayBeAdjacent(7, id('auth'), id('queue'))).toBe(true); // not in yet: it has both words
    expect(f.adjacencyReady).toBe(false);
    expect(f.fillAdjacency(40)).toBe(0); // ten documents of four tokens: more to do
    expect(f.mayBeAdjacent(7, id('auth'), id('queue'))).toBe(false);
    expect(f.mayBeAdjacent(50, id('auth'), id('queue'))).toBe(true); // not in yet
    expect(f.mayBeAdjacent(50, id('auth'), id('sync'))).toBe(false); // no such word: no
    while (f.fillAdjacency(40) === 0);
    expect(f.adjacencyReady).toBe(true);
    expect(f.mayBeAdjacent(50, id('auth'), id('queue'))).toBe(false);
    expect(f.mayBeAdjacent(50, id('queue'), id('retry'))).toBe(true);
    // A changed document's new pairs go in as it is added; its old ones may stay (a maybe, never a no).
    f.add(50, ['auth', 'queue'], [0, 1]);
    expect(f.mayBeAdjacent(50, id('auth'), id('queue'))).toBe(true);
    // Past the pairs it was sized for, it is made anew on the next fill, and answers the same.
    for (let d = 100; d < 3000; d++) f.add(d, ['sync', 'token'], [0, 1]);
    expect(f.adjacencyReady).toBe(false);
    while (f.fillAdjacency(1000) === 0);
    expect(f.adjacencyReady).toBe(true);
    expect(f.mayBeAdjacent(2999, id('sync'), id('token'))).toBe(true);
    expect(f.mayBeAdjacent(2999, id('token'), id('sync'))).toBe(false);
    expect(f.mayBeAdjacent(7, id('queue'), id('retry'))).toBe(true);
    // Not saved with the index: a loaded one says maybe until filled.
    const loaded = FieldIndex.load(f.save());
    expect(loaded.mayBeAdjacent(2999, id('token'), id('sync'))).toBe(true);
    loaded.fillAdjacency(Infinity);
    expect(loaded.mayBeAdjacent(2999, id('token'), id('sync'))).toBe(false);
  });

  it('counts every pair of a query longer than one bit mask (30 pairs)', () => {
    const words = Array.from({ length: 70 }, (_, i) => `w${i}`);
    const title = new FieldIndex();
    const body = new FieldIndex();
    const add = (d: number, ws: string[]) =>
      body.add(
        d,
        ws,
        ws.map((_, i) => i),
      );
    add(0, words); // every pair adjacent
    add(1, [...words].reverse()); // none
    add(2, [...words.slice(0, 35), 'gap', ...words.slice(35)]); // all but one
    const scores = [1, 1, 1];
    rewardProximity([title, body], words, [0, 1, 2], scores, { weight: 0.25, candidates: 100, shown: 3 });
    expect(scores).toEqual([1.25, 1, 1 + (0.25 * 68) / 69]);
  });

  it('gives the shown page the same documents and scores as checking every candidate', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ title: words, body: words }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.constantFrom(...vocab), { minLength: 2, maxLength: 5 }),
        fc.integer({ min: 1, max: 25 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2000 }),
        (docs, query, shown, sorted, filled) => {
          const title = new FieldIndex();
          const body = new FieldIndex();
          docs.forEach((doc, d) => {
            title.add(d, ...(Object.values(positioned(doc.title)) as [string[], number[]]));
            body.add(d, ...(Object.values(positioned(doc.body)) as [string[], number[]]));
          });
          // Some, all or none of the documents in the adjacency filters.
          title.fillAdjacency(filled);
          body.fillAdjacency(filled);
          // Scores closer together than the bonus, some tied, in either order.
          const ids = docs.map((_, d) => d);
          const base = ids.map((d) => 1 + ((d * 37) % 31) / 100);
          // Sorted as the scorer's `keep` gives them: the best `shown` first, best first, the rest in no order.
          if (sorted) {
            ids.sort((a, b) => base[b] - base[a] || a - b);
            ids.splice(shown, Infinity, ...ids.slice(shown).reverse());
          }
          const run = (opts: { shown: number; sorted: boolean }) => {
            const scores = ids.map((d) => base[d]);
            rewardProximity([title, body], query, [...ids], scores, {
              weight: 0.25,
              candidates: 40,
              ...opts,
            });
            return ids
              .map((d, i) => ({ d, score: scores[i] }))
              .sort((a, b) => b.score - a.score || a.d - b.d)
              .slice(0, shown);
          };
          expect(run({ shown, sorted })).toEqual(run({ shown: Infinity, sorted: false }));
          // Checking every candidate is the definition: each pair of adjacent query words that stands
          // at consecutive positions in the title or the body counts its share of the bonus.
          const pairs = query.slice(1).flatMap((b, i) => (b === query[i] ? [] : [[query[i], b]]));
          const at = (ws: [string, number][], word: string) => {
            const { terms, positions } = positioned(ws);
            return new Set(positions.filter((_, i) => terms[i] === word));
          };
          const adjacent = (ws: [string, number][], [a, b]: string[]) =>
            [...at(ws, a)].some((p) => at(ws, b).has(p + 1));
          const ranked = docs.map((_, d) => d).sort((a, b) => base[b] - base[a] || a - b);
          const want = ranked.map((d, rank) => {
            const n = pairs.filter((p) => adjacent(docs[d].title, p) || adjacent(docs[d].body, p)).length;
            return { d, score: rank < 40 && n ? base[d] * (1 + (0.25 * n) / pairs.length) : base[d] };
          });
          want.sort((a, b) => b.score - a.score || a.d - b.d);
          expect(run({ shown, sorted })).toEqual(want.slice(0, shown));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('proximity through the real index: the same answers before, during and after the adjacency filters fill', () => {
  it('after a build, a restore and live changes', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { OramaSearchService } = await import('../src/search/orama-search-service.js');
    const { BACKLOG_MD_FIXTURE } = await import('./helpers.js');
    const files = (readdirSync(BACKLOG_MD_FIXTURE, { recursive: true }) as string[]).filter((f) =>
      f.endsWith('.md'),
    );
    const docs = files.map((f) => {
      const text = readFileSync(join(BACKLOG_MD_FIXTURE, f), 'utf8');
      return { id: f, title: text.match(/^title: (.*)$/m)?.[1] ?? f, body: text, path: f };
    });
    // Two to four words in a row from the bodies: pairs that stand adjacent somewhere, and some not.
    const words = docs.flatMap((d) => d.body.split(/\s+/).filter((w) => /^\p{L}{3,}$/u.test(w)));
    const queries = Array.from({ length: 60 }, (_, i) => {
      const at = (i * 7919) % (words.length - 4);
      return words.slice(at, at + 2 + (i % 3)).join(' ');
    });
    const answer = (engine: InstanceType<typeof OramaSearchService>) =>
      queries.map((q) => engine.search({ query: q, limit: 5 }));
    const engine = new OramaSearchService();
    await engine.build(docs);
    const before = answer(engine); // nothing filled yet: the postings decide
    await engine.warmedUp();
    expect(answer(engine)).toEqual(before);
    expect(before.some((r) => r.hits.length > 0)).toBe(true);

    const again = new OramaSearchService();
    again.restore(await engine.serialize(), docs);
    expect(answer(again)).toEqual(before);
    await again.warmedUp();
    expect(answer(again)).toEqual(before);

    // A changed document's new pairs count at once; its old ones no longer do.
    const changed = { ...docs[0], body: `${docs[0].body}\n\nzebra quokka` };
    engine.upsert(changed);
    again.upsert(changed);
    const fresh = new OramaSearchService();
    await fresh.build([changed, ...docs.slice(1)]);
    for (const e of [engine, again, fresh]) {
      expect(e.search({ query: 'zebra quokka', limit: 1 }).hits[0]?.id).toBe(docs[0].id);
      expect(answer(e)).toEqual(answer(fresh));
    }
  });
});
