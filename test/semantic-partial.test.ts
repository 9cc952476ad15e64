/**
 * A document indexed in part (SemanticIndex.upsert with `embed`): its title stands in first, its chunks
 * come in later calls, nothing is embedded twice, and once complete it is exactly what one full upsert
 * gives. The service's build in passes is tested with the real model in semantic-passes.test.ts.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { chunkText } from '../src/embeddings/chunk.js';
import { SemanticIndex, TITLE_CHUNK } from '../src/embeddings/semantic-index.js';
import { l2normalize } from '../src/embeddings/vector.js';
import type { Embedder } from '../src/embeddings/types.js';

const DIMS = 32;
const CHUNKS = { maxWords: 20, overlap: 0, maxChunks: 64 };

function fakeVector(text: string): Float32Array {
  const h = Buffer.from(hashText(text), 'hex');
  return l2normalize(Float32Array.from({ length: DIMS }, (_, i) => h[i % h.length] - 127.5));
}

function countingEmbedder(): Embedder & { calls: string[] } {
  const calls: string[] = [];
  return {
    id: 'fake-model',
    dims: DIMS,
    calls,
    embed: async (texts) => {
      calls.push(...texts);
      return texts.map(fakeVector);
    },
  };
}

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');
/** Three documents of 3, 1 and 5 chunks (20 words each), and one with no title. */
const docs = () => [
  { id: 'A', title: 'Archive tasks', body: words(60, 'a') },
  { id: 'B', title: 'Short note', body: words(10, 'b') },
  { id: 'C', title: 'Cache format', body: words(100, 'c') },
  { id: 'D', title: '', body: words(40, 'd') },
];
const chunksOf = (d: { title: string; body: string }) =>
  chunkText(d.title, d.body, CHUNKS).map((c) => c.text);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bs-partial-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('indexing documents in part', () => {
  test('the first call gives every document one vector: its title, or its only chunk', async () => {
    const e = countingEmbedder();
    const index = new SemanticIndex({ embedder: e, chunk: CHUNKS });
    const first = await index.upsert(docs(), { embed: 1 });
    const [a, b, c, d] = docs().map(chunksOf);
    expect(a).toHaveLength(3);
    expect(c).toHaveLength(5);
    // A title where more chunks wait; the only chunk of B (nothing would be left for a title to stand in
    // for); D has no title, so its first chunk.
    expect(e.calls).toEqual(['Archive tasks', b[0], 'Cache format', d[0]]);
    // The title took A's and C's one new chunk: all their chunks wait.
    expect(first).toMatchObject({ documents: 4, embedded: 4, waiting: 3 + 5 + 1 });
    expect(index.waiting).toBe(9);
    expect(index.chunks).toBe(2); // B's and D's chunks; title rows are not chunks
    expect(index.incomplete().sort()).toEqual(['A', 'C', 'D']);
    expect(index.index.size).toBe(4);
    const hits = await index.search('Archive tasks', 1);
    expect(hits[0]).toMatchObject({ docId: 'A', chunk: TITLE_CHUNK });
    expect(hits[0].score).toBeCloseTo(1, 5);
  });

  test('later calls add chunks in order, and a complete document drops its title row', async () => {
    const e = countingEmbedder();
    const index = new SemanticIndex({ embedder: e, chunk: CHUNKS });
    await index.upsert(docs(), { embed: 1 });
    const [a, , c] = docs().map(chunksOf);
    e.calls.length = 0;
    await index.upsert(docs(), { embed: 1 });
    expect(e.calls).toEqual([a[0], c[0], chunksOf(docs()[3])[1]]);
    expect(index.index.vectors('A')).toHaveLength(2); // title + first chunk
    expect(index.incomplete().sort()).toEqual(['A', 'C']); // D is complete now
    expect(index.index.vectors('D')).toHaveLength(2);

    e.calls.length = 0;
    const rest = await index.upsert(docs());
    expect(e.calls).toEqual([...a.slice(1), ...c.slice(1)]);
    expect(rest.waiting).toBe(0);
    expect(index.waiting).toBe(0);
    expect(index.incomplete()).toEqual([]);
    expect(index.index.vectors('A')).toHaveLength(3);
    expect(index.chunks).toBe(index.index.chunkCount);
    // The title was a stand-in: the search no longer meets a title row.
    const hits = await index.search('Archive tasks', 4);
    expect(hits.every((h) => h.chunk !== TITLE_CHUNK)).toBe(true);

    // Exactly what one full upsert of the same documents gives.
    const whole = new SemanticIndex({ embedder: countingEmbedder(), chunk: CHUNKS });
    await whole.upsert(docs());
    for (const id of ['A', 'B', 'C', 'D'])
      expect(index.index.vectors(id).map((v) => Array.from(v))).toEqual(
        whole.index.vectors(id).map((v) => Array.from(v)),
      );
    // Unchanged documents are left alone.
    expect(await index.upsert(docs())).toMatchObject({ documents: 0, unchanged: 4, embedded: 0 });
  });

  test('cached chunks are indexed whatever the budget; `embed: 0` indexes only those', async () => {
    const cache = await EmbeddingCache.open(dir, 'fake-model', DIMS);
    const [a] = docs().map(chunksOf);
    cache.put([hashText(a[1])], [fakeVector(a[1])]);
    const e = countingEmbedder();
    const index = new SemanticIndex({ embedder: e, cache, chunk: CHUNKS });
    const only = await index.upsert([docs()[0]], { embed: 0 });
    expect(e.calls).toEqual([]);
    expect(only).toMatchObject({ chunks: 1, embedded: 0, waiting: 2 });
    await index.upsert([docs()[0]], { embed: 1 });
    expect(e.calls).toEqual(['Archive tasks']);
    expect(index.index.vectors('A')).toHaveLength(2); // the cached chunk and the title
    // The cache keeps what was embedded, titles too, until `pruneCache` drops what is no longer indexed.
    await index.upsert([docs()[0]]);
    expect(cache.has(hashText('Archive tasks'))).toBe(true);
    index.pruneCache();
    expect(cache.has(hashText('Archive tasks'))).toBe(false);
    expect(a.every((t) => cache.has(hashText(t)))).toBe(true);
  });

  test('an edit while in part is planned again; removing forgets what waited', async () => {
    const e = countingEmbedder();
    const index = new SemanticIndex({ embedder: e, chunk: CHUNKS });
    await index.upsert(docs(), { embed: 1 });
    const edited = { id: 'C', title: 'Cache format v2', body: words(30, 'x') };
    e.calls.length = 0;
    await index.upsert([edited], { embed: 1 });
    expect(e.calls).toEqual(['Cache format v2']);
    expect(index.waitingFor('C')).toBe(2);
    expect(index.remove('C')).toBe(true);
    expect(index.waitingFor('C')).toBe(0);
    expect(index.waiting).toBe(3 + 1); // A and D
    expect(index.incomplete().sort()).toEqual(['A', 'D']);
  });
});
