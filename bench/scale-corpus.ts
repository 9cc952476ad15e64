/**
 * The synthetic scale corpora of `npm run bench` (bench/perf.ts, bench/scale.ts): documents made by
 * recombining SciFact and XQuAD paragraphs, queries of 2-4 words taken from them, and deterministic
 * synthetic embeddings for the vector and hybrid measurements. Everything is seeded, so every process
 * and every run builds the same corpus, queries and vectors.
 */
import { join } from 'node:path';
import { loadBeir, type BeirDoc } from '../src/eval/beir.js';
import { percentile } from '../src/eval/metrics.js';
import { chunkText, type ChunkOptions } from '../src/embeddings/index.js';
import type { EmbedKind, Embedder } from '../src/embeddings/types.js';
import { rng } from './common.js';

export { rng }; // bench/warmup.ts imports it from here

/** SciFact train and XQuAD-en dev paragraphs: what the synthetic documents are made of. */
export async function loadPool(evalDir: string): Promise<BeirDoc[]> {
  return [
    ...(await loadBeir(join(evalDir, 'scifact'), 'train')).docs,
    ...(await loadBeir(join(evalDir, 'xquad-en'), 'dev')).docs,
  ];
}

/** Synthetic documents: a SciFact or XQuAD title with 1-3 paragraphs drawn from the pool. */
export function synthesize(pool: BeirDoc[], n: number): BeirDoc[] {
  const rand = rng(42);
  const pick = () => pool[Math.floor(rand() * pool.length)];
  return Array.from({ length: n }, (_, i) => {
    const parts = 1 + Math.floor(rand() * 3);
    return {
      id: `doc-${i}`,
      title: pick().title,
      text: Array.from({ length: parts }, () => pick().text).join('\n\n'),
    };
  });
}

/** Queries as people type them: 2-4 consecutive words (with 2+ letters) of a random title, seeded. */
export function titleQueries(titles: string[], n: number, seed = 11): string[] {
  const rand = rng(seed);
  const queries: string[] = [];
  while (queries.length < n) {
    const words = titles[Math.floor(rand() * titles.length)].split(/\s+/).filter((w) => /\p{L}{2}/u.test(w));
    if (words.length < 2) continue;
    const len = Math.min(words.length, 2 + Math.floor(rand() * 3));
    const at = Math.floor(rand() * (words.length - len + 1));
    queries.push(words.slice(at, at + len).join(' '));
  }
  return queries;
}

/** Queries made of 2-4 consecutive words (longer than 3 letters) of one document, and that document. */
export function wordQueriesFrom(texts: string[], n: number, seed = 7): { text: string; source: number }[] {
  const rand = rng(seed);
  const out: { text: string; source: number }[] = [];
  while (out.length < n) {
    const source = Math.floor(rand() * texts.length);
    const words = texts[source].split(/\s+/).filter((w) => w.length > 3);
    if (words.length < 4) continue;
    const len = 2 + Math.floor(rand() * 3);
    const at = Math.floor(rand() * (words.length - len));
    out.push({ text: words.slice(at, at + len).join(' '), source });
  }
  return out;
}

/** The query texts of `wordQueriesFrom`. */
export function wordQueries(texts: string[], n: number, seed = 7): string[] {
  return wordQueriesFrom(texts, n, seed).map((q) => q.text);
}

// ---- Synthetic embeddings.

/** Dimensions of the synthetic vectors: those of the bundled model. */
export const SYNTHETIC_DIMS = 512;

/**
 * One vector per document, in our index as in Orama's: the whole document as one chunk (the deployed
 * chunking, sized for the model's input, would give several; see `chunksPerDoc`).
 */
export const ONE_CHUNK: ChunkOptions = { maxWords: 1e9, overlap: 0, maxChunks: 1 };

/** FNV-1a, 32 bits. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A seeded random unit vector (Gaussian entries, so its direction is uniform on the sphere). */
export function unitVector(seed: number, dims = SYNTHETIC_DIMS): Float32Array {
  const rand = rng(seed);
  const v = new Float32Array(dims);
  let norm = 0;
  for (let i = 0; i < dims; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const a = 2 * Math.PI * rand();
    v[i] = r * Math.cos(a);
    if (i + 1 < dims) v[i + 1] = r * Math.sin(a);
  }
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i] /= norm;
  return v;
}

/** `v` moved towards a random direction: cosine with `v` about `cos` (random directions are near orthogonal). */
export function nearby(v: Float32Array, seed: number, cos = 0.9): Float32Array {
  const u = unitVector(seed, v.length);
  const t = Math.sqrt(1 / (cos * cos) - 1);
  const out = new Float32Array(v.length);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    out[i] = v[i] + t * u[i];
    norm += out[i] * out[i];
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) out[i] /= norm;
  return out;
}

/** The text our semantic index embeds for a document with `ONE_CHUNK` (title and body words). */
export function oneChunkText(doc: BeirDoc): string {
  return chunkText(doc.title, doc.text, ONE_CHUNK)[0].text;
}

/**
 * An Embedder whose vectors are synthetic: a passage gets the seeded unit vector of its text's hash; a
 * query registered with `setQuery` gets its given vector (any other query, the vector of its hash). It
 * stands in for the model so that the vector search and the fusion run on 50K documents without hours
 * of embedding; their cost does not depend on what the vectors mean. `precompute` makes `embed` a lookup,
 * so build times measure the index, not the vector generator.
 */
export class SyntheticEmbedder implements Embedder {
  readonly id = `synthetic-unit-${SYNTHETIC_DIMS}`;
  readonly dims = SYNTHETIC_DIMS;
  private readonly queries = new Map<string, Float32Array>();
  private readonly passages = new Map<string, Float32Array>();

  passageVector(text: string): Float32Array {
    return this.passages.get(text) ?? unitVector(hash32(text), this.dims);
  }

  precompute(texts: Iterable<string>): void {
    for (const t of texts) this.passages.set(t, unitVector(hash32(t), this.dims));
  }

  /** Drops the precomputed passage vectors (the index holds its own copy). */
  forgetPassages(): void {
    this.passages.clear();
  }

  setQuery(text: string, vector: Float32Array): void {
    this.queries.set(text, vector);
  }

  async embed(texts: string[], kind: EmbedKind = 'passage'): Promise<Float32Array[]> {
    return texts.map((t) =>
      kind === 'query' ? (this.queries.get(t) ?? unitVector(hash32(t), this.dims)) : this.passageVector(t),
    );
  }
}

// ---- Timing.

export interface Latency {
  p50: number;
  p95: number;
  p99: number;
}

const round = (n: number, d: number) => Number(n.toFixed(d));

/** Times each query alone after `warmup` untimed ones; nearest-rank percentiles in ms. */
export async function latencyOf<Q>(run: (q: Q) => unknown, queries: Q[], warmup = 30): Promise<Latency> {
  for (const q of queries.slice(0, warmup)) await run(q);
  const times: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await run(q);
    times.push(performance.now() - t);
  }
  return {
    p50: round(percentile(times, 50), 3),
    p95: round(percentile(times, 95), 3),
    p99: round(percentile(times, 99), 3),
  };
}
