import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { VectorIndex, type VectorHit } from '../src/embeddings/vector-index.js';
import { dot, l2normalize } from '../src/embeddings/vector.js';

/** Seeded pseudo-random numbers in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomUnit(dims: number, next: () => number): Float32Array {
  return l2normalize(Float32Array.from({ length: dims }, () => next() - 0.5));
}

/** The reference: every document's best chunk by full sort. */
function bruteForce(
  docs: Map<string, Float32Array[]>,
  q: Float32Array,
  k: number,
  filter?: (id: string) => boolean,
) {
  const all: VectorHit[] = [];
  for (const [docId, vectors] of docs) {
    if (filter && !filter(docId)) continue;
    let best = -Infinity;
    let chunk = -1;
    vectors.forEach((v, i) => {
      const s = dot(v, q);
      if (s > best) {
        best = s;
        chunk = i;
      }
    });
    all.push({ docId, score: best, chunk });
  }
  all.sort((a, b) => b.score - a.score || (a.docId < b.docId ? -1 : 1));
  return all.slice(0, k);
}

function expectSameHits(got: VectorHit[], want: VectorHit[]) {
  expect(got.map((h) => [h.docId, h.chunk])).toEqual(want.map((h) => [h.docId, h.chunk]));
  got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i].score, 5));
}

describe('VectorIndex', () => {
  test.each([
    [24, false],
    [32, true],
  ])('top-k equals a full sort of every document by its best chunk (dims %i, SIMD %s)', (dims, simd) => {
    const next = rng(7);
    const index = new VectorIndex(dims, 4); // small start: growth by doubling is exercised
    expect(index.simd).toBe(simd);
    const docs = new Map<string, Float32Array[]>();
    for (let d = 0; d < 300; d++) {
      const vectors = Array.from({ length: 1 + (d % 4) }, () => randomUnit(dims, next));
      docs.set(`doc-${d}`, vectors);
      index.upsert(`doc-${d}`, vectors);
    }
    expect(index.size).toBe(300);
    expect(index.chunkCount).toBe(300 * 2.5);
    for (let i = 0; i < 10; i++) {
      const q = randomUnit(dims, next);
      for (const k of [1, 5, 50, 1000]) expectSameHits(index.search(q, k), bruteForce(docs, q, k));
    }
  });

  test.each([24, 32])(
    'compact gives back the unused room; search and later upserts unchanged (dims %i)',
    (dims) => {
      const next = rng(11);
      const index = new VectorIndex(dims, 4);
      const docs = new Map<string, Float32Array[]>();
      const add = (d: number) => {
        const vectors = Array.from({ length: 1 + (d % 3) }, () => randomUnit(dims, next));
        docs.set(`doc-${d}`, vectors);
        index.upsert(`doc-${d}`, vectors);
      };
      for (let d = 0; d < 150; d++) add(d); // 300 rows in room for 512
      const grown = index.memoryBytes;
      index.compact(10);
      expect(index.memoryBytes).toBeLessThan(grown * 0.75);
      const q = randomUnit(dims, next);
      expectSameHits(index.search(q, 20), bruteForce(docs, q, 20));
      for (let d = 150; d < 200; d++) add(d); // past the spare room: grows again
      index.remove('doc-3');
      docs.delete('doc-3');
      expectSameHits(index.search(q, 50), bruteForce(docs, q, 50));
    },
  );

  test('removals and replacements keep every other document scored right', () => {
    const next = rng(11);
    const dims = 16;
    const index = new VectorIndex(dims, 8);
    const docs = new Map<string, Float32Array[]>();
    for (let step = 0; step < 600; step++) {
      const id = `d${Math.floor(next() * 80)}`;
      if (next() < 0.3) {
        expect(index.remove(id)).toBe(docs.delete(id));
      } else {
        const vectors = Array.from({ length: 1 + Math.floor(next() * 3) }, () => randomUnit(dims, next));
        docs.set(id, vectors);
        index.upsert(id, vectors);
      }
      if (step % 50 === 0) {
        const q = randomUnit(dims, next);
        expectSameHits(index.search(q, 10), bruteForce(docs, q, 10));
      }
    }
    expect(index.size).toBe(docs.size);
    expect(index.chunkCount).toBe([...docs.values()].reduce((n, v) => n + v.length, 0));
    const q = randomUnit(dims, next);
    expectSameHits(index.search(q, 200), bruteForce(docs, q, 200));
  });

  test('a removed document is never returned; upsert with no vectors removes', () => {
    const index = new VectorIndex(2);
    index.upsert('a', [l2normalize(Float32Array.of(1, 0))]);
    index.upsert('b', [l2normalize(Float32Array.of(0.9, 0.1))]);
    expect(index.search(Float32Array.of(1, 0), 5).map((h) => h.docId)).toEqual(['a', 'b']);
    index.remove('a');
    expect(index.search(Float32Array.of(1, 0), 5).map((h) => h.docId)).toEqual(['b']);
    index.upsert('b', []);
    expect(index.has('b')).toBe(false);
    expect(index.search(Float32Array.of(1, 0), 5)).toEqual([]);
    expect(index.remove('nope')).toBe(false);
  });

  test('filter, minScore, ties by id, chunk of the best match', () => {
    const index = new VectorIndex(2);
    const x = Float32Array.of(1, 0);
    const y = Float32Array.of(0, 1);
    index.upsert('c', [y, x]);
    index.upsert('a', [x]);
    index.upsert('b', [y]);
    expect(index.search(x, 3)).toEqual([
      { docId: 'a', score: 1, chunk: 0 },
      { docId: 'c', score: 1, chunk: 1 },
      { docId: 'b', score: 0, chunk: 0 },
    ]);
    expect(index.search(x, 3, { filter: (id) => id !== 'a' }).map((h) => h.docId)).toEqual(['c', 'b']);
    expect(index.search(x, 3, { minScore: 0.5 }).map((h) => h.docId)).toEqual(['a', 'c']);
    expect(index.search(x, 0)).toEqual([]);
  });

  test('vectors of the wrong size are refused', () => {
    const index = new VectorIndex(4);
    expect(() => index.upsert('a', [new Float32Array(3)])).toThrow(/dims/);
    expect(() => index.search(new Float32Array(3), 1)).toThrow(/dims/);
    expect(() => new VectorIndex(0)).toThrow();
  });

  test.each([512, 24])(
    "upsertQuantized (dims %i): the same bits as the cache's vectors given to upsert, replacing and removing alike",
    async (dims) => {
      const dir = await mkdtemp(join(tmpdir(), 'bs-vi-q-'));
      try {
        const next = rng(dims);
        const texts = Array.from({ length: 90 }, (_, i) => `chunk ${i}`);
        const cache = await EmbeddingCache.open(dir, 'test:model', dims, { encoding: 'i8' });
        cache.put(
          texts.map(hashText),
          texts.map(() => randomUnit(dims, next)),
        );
        const plain = new VectorIndex(dims, 4);
        const direct = new VectorIndex(dims, 4);
        expect(direct.simd).toBe(dims % 16 === 0);
        const docs = Array.from({ length: 30 }, (_, d) =>
          texts.slice(d * 3, d * 3 + 1 + (d % 3)).map(hashText),
        );
        const load = (doc: string[], id: string) => {
          plain.upsert(id, cache.get(doc).vectors as Float32Array[], [7, 8, 9].slice(0, doc.length));
          const q = cache.quantized(doc)!;
          direct.upsertQuantized(id, q.q, q.scales, q.rows as number[], [7, 8, 9].slice(0, doc.length));
        };
        docs.forEach((doc, d) => load(doc, `d${d}`));
        load(docs[5], 'd1'); // replaced
        plain.remove('d2');
        direct.remove('d2');
        const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length));
        for (const id of plain.docIds())
          expect(direct.vectors(id).map(bits)).toEqual(plain.vectors(id).map(bits));
        const query = randomUnit(dims, next);
        expect(direct.search(query, 40)).toEqual(plain.search(query, 40));
        expect(() => direct.upsertQuantized('x', new Int8Array(dims), new Float32Array(1), [1])).toThrow(
          /row/,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
