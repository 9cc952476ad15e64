import { hashText, type EmbeddingCache } from './cache.js';
import { chunkOptionsFor, chunkText, type ChunkOptions } from './chunk.js';
import { GIBBERISH_GATE, gibberishCentroid, gibberishScore } from './gibberish.js';
import type { EmbedAllOptions } from './pool.js';
import type { Embedder } from './types.js';
import { VectorIndex, type VectorHit, type VectorSearchOptions } from './vector-index.js';

/** An embedder, optionally with the pool's batch API (progress) and cached query path. */
export type IndexEmbedder = Embedder & {
  embedAll?(texts: string[], options?: EmbedAllOptions): Promise<Float32Array[]>;
  embedQuery?(text: string): Promise<Float32Array>;
};

export interface EmbedCachedResult {
  vectors: Float32Array[];
  /** Texts sent to the embedder (distinct, not cached). */
  embedded: number;
  /** Texts served from the cache (or repeated within the call). */
  reused: number;
}

/**
 * Embeds passages through the cache: only texts whose hash is not cached are embedded (each distinct text
 * once), and the new vectors are added to the cache (call `cache.save()` to persist).
 */
export async function embedWithCache(
  embedder: IndexEmbedder,
  cache: EmbeddingCache | undefined,
  texts: string[],
  options: Pick<EmbedAllOptions, 'onProgress' | 'signal'> = {},
): Promise<EmbedCachedResult> {
  const hashes = texts.map(hashText);
  const found = cache
    ? cache.get(hashes)
    : { vectors: texts.map(() => undefined), missing: texts.map((_, i) => i) };
  const firstOf = new Map<string, number>();
  const todo: number[] = [];
  for (const i of found.missing) {
    if (!firstOf.has(hashes[i])) {
      firstOf.set(hashes[i], todo.length);
      todo.push(i);
    }
  }
  const total = texts.length;
  const reusedCount = total - todo.length;
  options.onProgress?.(reusedCount, total);
  const batch = todo.map((i) => texts[i]);
  const fresh =
    batch.length === 0
      ? []
      : embedder.embedAll
        ? await embedder.embedAll(batch, {
            kind: 'passage',
            signal: options.signal,
            onProgress: (done) => options.onProgress?.(reusedCount + done, total),
          })
        : await embedder.embed(batch, 'passage');
  if (batch.length > 0 && !embedder.embedAll) options.onProgress?.(total, total);
  cache?.put(
    todo.map((i) => hashes[i]),
    fresh,
  );
  const vectors = found.vectors.map((v, i) => v ?? fresh[firstOf.get(hashes[i]) as number]);
  return { vectors, embedded: todo.length, reused: reusedCount };
}

export interface SemanticDocument {
  id: string;
  title: string;
  body: string;
}

export interface SemanticIndexOptions {
  embedder: IndexEmbedder;
  /** Persisted vectors: a restart embeds only chunks whose text changed. */
  cache?: EmbeddingCache;
  /** Default: sized for the embedder's `maxTokens` (chunkOptionsFor). */
  chunk?: ChunkOptions;
}

export interface SemanticUpsertResult {
  /** Documents whose chunks changed (or were new) and were indexed. */
  documents: number;
  /** Documents skipped because their chunk texts had not changed. */
  unchanged: number;
  chunks: number;
  embedded: number;
  reused: number;
}

/**
 * Chunks, embeds (through the cache) and indexes documents for vector search: the embedding half of hybrid
 * search. A document's score is its best chunk's cosine with the query.
 */
export class SemanticIndex {
  readonly index: VectorIndex;
  readonly chunkOptions: ChunkOptions;
  private readonly embedder: IndexEmbedder;
  private readonly cache: EmbeddingCache | undefined;
  /** Chunk hashes per document: an unchanged document is not re-embedded nor re-indexed. */
  private readonly hashesOf = new Map<string, string[]>();
  private gibberish: Promise<Float32Array> | undefined;

  constructor(options: SemanticIndexOptions) {
    this.embedder = options.embedder;
    this.cache = options.cache;
    if (this.cache && this.cache.dims !== this.embedder.dims)
      throw new Error(`cache holds ${this.cache.dims} dims, embedder gives ${this.embedder.dims}`);
    this.chunkOptions = options.chunk ?? chunkOptionsFor(this.embedder);
    this.index = new VectorIndex(this.embedder.dims);
  }

  get size(): number {
    return this.index.size;
  }

  has(id: string): boolean {
    return this.hashesOf.has(id);
  }

  /** Adds or replaces documents. Progress counts chunks (cached ones count at once). */
  async upsert(
    docs: SemanticDocument[],
    options: Pick<EmbedAllOptions, 'onProgress' | 'signal'> = {},
  ): Promise<SemanticUpsertResult> {
    const work: { id: string; hashes: string[]; from: number; count: number }[] = [];
    const texts: string[] = [];
    let unchanged = 0;
    const latest = new Map<string, SemanticDocument>();
    for (const doc of docs) latest.set(doc.id, doc); // the last version of a document given twice wins
    for (const doc of latest.values()) {
      const chunks = chunkText(doc.title, doc.body, this.chunkOptions).map((c) => c.text);
      const hashes = chunks.map(hashText);
      const before = this.hashesOf.get(doc.id);
      if (before && before.length === hashes.length && before.every((h, i) => h === hashes[i])) {
        unchanged++;
        continue;
      }
      work.push({ id: doc.id, hashes, from: texts.length, count: chunks.length });
      texts.push(...chunks);
    }
    const { vectors, embedded, reused } = await embedWithCache(this.embedder, this.cache, texts, options);
    for (const w of work) {
      this.index.upsert(w.id, vectors.slice(w.from, w.from + w.count));
      this.hashesOf.set(w.id, w.hashes);
    }
    return { documents: work.length, unchanged, chunks: texts.length, embedded, reused };
  }

  remove(id: string): boolean {
    this.hashesOf.delete(id);
    return this.index.remove(id);
  }

  /**
   * Embeds the query (through the pool's query cache when there is one) and returns the k closest
   * documents; none for a query the model cannot read (made-up words: gibberish.ts).
   */
  async search(query: string, k: number, options: VectorSearchOptions = {}): Promise<VectorHit[]> {
    const [vector, centroid] = await Promise.all([
      this.embedder.embedQuery
        ? this.embedder.embedQuery(query)
        : this.embedder.embed([query], 'query').then((v) => v[0]),
      this.gibberishCentroid(),
    ]);
    if (gibberishScore(vector, centroid) >= GIBBERISH_GATE) return [];
    return this.index.search(vector, k, options);
  }

  /** The model's pseudo-word centroid, embedded once (about 40 short queries). */
  gibberishCentroid(): Promise<Float32Array> {
    this.gibberish ??= gibberishCentroid((texts) => this.embedder.embed(texts, 'query'));
    return this.gibberish;
  }

  /** Drops cached vectors of chunks no longer indexed; returns how many. Call before `cache.save()`. */
  pruneCache(): number {
    if (!this.cache) return 0;
    const live: string[] = [];
    for (const hashes of this.hashesOf.values()) live.push(...hashes);
    return this.cache.retain(live);
  }
}
