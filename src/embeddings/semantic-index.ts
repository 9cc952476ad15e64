import { hashText, type EmbeddingCache } from './cache.js';
import { chunkOptionsFor, chunkText, type ChunkOptions } from './chunk.js';
import {
  chunkerFingerprint,
  chunkPlansPath,
  documentKey,
  readChunkPlans,
  writeChunkPlans,
} from './chunk-plans.js';
import { GIBBERISH_GATE, gibberishScore, keptGibberishCentroid } from './gibberish.js';
import type { EmbedAllOptions } from './pool.js';
import type { Embedder } from './types.js';
import { VectorIndex, type VectorHit, type VectorSearchOptions } from './vector-index.js';

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

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

/** A call aborted by `signal` indexes nothing; the batches embedded before the abort are in the cache. */
export interface SemanticUpsertOptions extends Pick<
  EmbedAllOptions,
  'onProgress' | 'signal' | 'maxBatchChars'
> {
  /**
   * Embed at most this many new chunks per document in this call (default: all). Chunks that already have
   * a vector (in the cache, or in the index) are indexed whatever this says. A document left incomplete is
   * indexed with what it has plus its title as a chunk of its own, embedded first (a few tokens): every
   * document is findable from the first call on, and its title row goes once its chunks are all in.
   */
  embed?: number;
}

export interface SemanticUpsertResult {
  /** Documents whose chunks changed (or were new) and were indexed. */
  documents: number;
  /** Documents skipped because their chunk texts had not changed. */
  unchanged: number;
  /** Chunks indexed for those documents (vectors embedded now, cached, or kept from the index). */
  chunks: number;
  embedded: number;
  reused: number;
  /** Chunks of those documents left for a later call (only with `embed`). */
  waiting: number;
}

/** A document's chunk texts and their hashes, and its title's (the stand-in while it is indexed in part). */
interface Plan {
  title: string;
  body: string;
  /** documentKey(title, body). */
  key: string;
  /** Chunked when first read for a plan from the chunk plans file (chunk-plans.ts). */
  readonly texts: string[];
  hashes: string[];
  /** The title as a chunk of its own; null when empty or the same as a chunk (a document with no body). */
  titleText: string | null;
  titleHash: string | null;
}

/** Unfiltered vector answers kept for repeated queries (SemanticIndex.search). */
const MAX_ANSWERS = 256;

/** `VectorHit.chunk` of a document's title row (a document indexed in part). */
export const TITLE_CHUNK = -1;

/**
 * Chunks, embeds (through the cache) and indexes documents for vector search: the embedding half of hybrid
 * search. A document's score is its best chunk's cosine with the query. A document can be indexed in part
 * (`upsert` with `embed`): its title and first chunks now, the rest later.
 */
export class SemanticIndex {
  readonly index: VectorIndex;
  readonly chunkOptions: ChunkOptions;
  private readonly embedder: IndexEmbedder;
  private readonly cache: EmbeddingCache | undefined;
  /** Hashes of the chunks indexed per document, in the order of its vectors in `index`. */
  private readonly hashesOf = new Map<string, string[]>();
  /** Documents indexed in part: their chunks still waiting, and their plan (dropped once complete). */
  private readonly waitingOf = new Map<string, number>();
  private readonly plans = new Map<string, Plan>();
  private waitingTotal = 0;
  /** Documents indexed with their title row. */
  private readonly titled = new Set<string>();
  /** The key (documentKey) of each document indexed. */
  private readonly keyOf = new Map<string, string>();
  /** Chunk hashes by document key, read from the chunk plans file (useChunkPlans). */
  private known = new Map<string, string[]>();
  /** `changes` when the chunk plans file was last written or read. */
  private plansAt = -1;
  private gibberish: Promise<Float32Array> | undefined;
  /**
   * The answers of recent unfiltered searches (query and k), least recently used first; emptied by every
   * change to the index. A repeated query (agents and viewers ask the same ones again) then costs neither
   * its embedding (the pool's query cache) nor the scan of every chunk (about 0.6 ms on 5,692 chunks).
   */
  private readonly answers = new Map<string, VectorHit[]>();
  private changes = 0;

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

  /** The index changed: answers kept for repeated queries are stale. */
  private changed(): void {
    this.changes++;
    this.answers.clear();
  }

  /** Chunks indexed (title rows not counted). */
  get chunks(): number {
    return this.index.chunkCount - this.titled.size;
  }

  /** Chunks of documents indexed in part, not embedded yet. */
  get waiting(): number {
    return this.waitingTotal;
  }

  /** Ids of the documents indexed in part. */
  incomplete(): string[] {
    return [...this.waitingOf.keys()];
  }

  /** Chunks of this document not indexed yet (0 when complete or unknown). */
  waitingFor(id: string): number {
    return this.waitingOf.get(id) ?? 0;
  }

  /** The chunk hashes of a document, once indexed in full. Kept while it is indexed in part (chunked once). */
  hashes(doc: SemanticDocument): string[] {
    return this.plan(doc).hashes;
  }

  private plan(doc: SemanticDocument): Plan {
    const planned = this.plans.get(doc.id);
    if (planned && planned.title === doc.title && planned.body === doc.body) return planned;
    const key = documentKey(doc.title, doc.body);
    const chunk = () => chunkText(doc.title, doc.body, this.chunkOptions).map((c) => c.text);
    const known = this.known.get(key);
    let texts = known ? undefined : chunk();
    const hashes = known ?? texts!.map(hashText);
    const title = doc.title.trim();
    // A chunk that is the title alone has the title's hash (the same text).
    const titleText = title.length > 0 && !hashes.includes(hashText(title)) ? title : null;
    const plan: Plan = {
      title: doc.title,
      body: doc.body,
      key,
      get texts() {
        if (texts) return texts;
        texts = chunk();
        if (texts.map(hashText).join() !== hashes.join())
          throw new Error('the chunk plans file does not match the chunker (chunk-plans.ts)');
        return texts;
      },
      hashes,
      titleText,
      titleHash: titleText === null ? null : hashText(titleText),
    };
    this.plans.set(doc.id, plan);
    return plan;
  }

  private plansFile(): { path: string; fingerprint: string } | undefined {
    if (!this.cache) return undefined;
    return {
      path: chunkPlansPath(this.cache.path),
      fingerprint: chunkerFingerprint(this.embedder.id, this.chunkOptions),
    };
  }

  /**
   * Reads the chunk plans file beside the cache (chunk-plans.ts): documents upserted from now on whose key
   * is there are not chunked again. For processes that only read cached vectors.
   */
  async useChunkPlans(): Promise<void> {
    const file = this.plansFile();
    if (file) this.known = await readChunkPlans(file.path, file.fingerprint);
  }

  /** Writes the chunk plans file beside the cache: every document indexed in full. Not again until the index changes. */
  async saveChunkPlans(): Promise<void> {
    const file = this.plansFile();
    if (!file || this.plansAt === this.changes) return;
    const changes = this.changes;
    const plans: [string, string[]][] = [];
    for (const [id, hashes] of this.hashesOf) {
      const key = this.keyOf.get(id);
      if (key !== undefined && this.waitingFor(id) === 0 && !this.titled.has(id)) plans.push([key, hashes]);
    }
    await writeChunkPlans(file.path, file.fingerprint, plans);
    this.plansAt = changes;
  }

  private setWaiting(id: string, n: number): void {
    this.waitingTotal += n - (this.waitingOf.get(id) ?? 0);
    if (n > 0) this.waitingOf.set(id, n);
    else {
      this.waitingOf.delete(id);
      this.plans.delete(id);
    }
  }

  /** Adds or replaces documents, in full or (with `embed`) in part. Progress counts chunks (cached ones count at once). */
  async upsert(docs: SemanticDocument[], options: SemanticUpsertOptions = {}): Promise<SemanticUpsertResult> {
    const budgetPerDoc = options.embed ?? Infinity;
    const latest = new Map<string, SemanticDocument>();
    for (const doc of docs) latest.set(doc.id, doc); // the last version of a document given twice wins
    const work: {
      id: string;
      hashes: string[];
      chunks: number[];
      kept: Map<string, Float32Array>;
      waiting: number;
      key: string;
    }[] = [];
    const toEmbed: string[] = [];
    const embedSlot = new Map<string, number>();
    let unchanged = 0;
    let waiting = 0;
    for (const doc of latest.values()) {
      const plan = this.plan(doc);
      const before = this.hashesOf.get(doc.id);
      if (before && this.waitingFor(doc.id) === 0 && sameList(before, plan.hashes)) {
        this.keyOf.set(doc.id, plan.key); // the same chunks from another text (spacing, say)
        this.plans.delete(doc.id);
        unchanged++;
        continue;
      }
      // Vectors the index already holds for this document are kept, not embedded again.
      const kept = new Map<string, Float32Array>();
      if (before) {
        const old = this.index.vectors(doc.id);
        before.forEach((h, i) => kept.set(h, old[i]));
      }
      const has = (h: string) => kept.has(h) || embedSlot.has(h) || this.cache?.has(h) === true;
      const embed = (h: string, text: string) => {
        if (!has(h)) {
          embedSlot.set(h, toEmbed.length);
          toEmbed.push(text);
        }
      };
      const missing = plan.hashes.flatMap((h, i) => (has(h) ? [] : [i]));
      const missed = new Set(missing);
      let budget = budgetPerDoc;
      const chunks: number[] = [];
      if (missing.length > budget && plan.titleHash !== null && plan.titleText !== null) {
        // Incomplete after this call: its title stands in, first in line.
        if (has(plan.titleHash) || budget-- > 0) {
          embed(plan.titleHash, plan.titleText);
          chunks.push(TITLE_CHUNK);
        }
      }
      const now = new Set(missing.slice(0, Math.max(0, budget)));
      plan.hashes.forEach((h, i) => {
        if (now.has(i)) embed(h, plan.texts[i]);
        if (now.has(i) || !missed.has(i)) chunks.push(i);
      });
      const hashes = chunks.map((i) => (i === TITLE_CHUNK ? (plan.titleHash as string) : plan.hashes[i]));
      if (before && sameList(before, hashes)) {
        unchanged++; // in part as before: nothing new to embed or to index
        continue;
      }
      waiting += missing.length - now.size;
      work.push({ id: doc.id, hashes, chunks, kept, waiting: missing.length - now.size, key: plan.key });
    }
    const chunks = work.reduce((n, w) => n + w.hashes.length, 0);
    const reused = chunks - toEmbed.length;
    options.onProgress?.(reused, chunks);
    const slots = [...embedSlot.keys()];
    const fresh =
      toEmbed.length === 0
        ? []
        : this.embedder.embedAll
          ? await this.embedder.embedAll(toEmbed, {
              kind: 'passage',
              signal: options.signal,
              maxBatchChars: options.maxBatchChars,
              onProgress: (done) => options.onProgress?.(reused + done, chunks),
              // Each batch reaches the cache as it lands: a call stopped half-way (the process closing)
              // keeps what was embedded, and pruneCache keeps it too (the document's plan holds it).
              onBatch: (indices, vectors) =>
                this.cache?.put(
                  indices.map((i) => slots[i]),
                  vectors,
                ),
            })
          : await this.embedder.embed(toEmbed, 'passage');
    if (toEmbed.length > 0 && !this.embedder.embedAll) options.onProgress?.(chunks, chunks);
    this.cache?.put(slots, fresh);
    // A document whose every vector is in an i8 cache (a process reading the cached vectors) has them
    // dequantized straight into the index; the others get theirs from one pass over the cache.
    const fromCache = (w: (typeof work)[number], h: string) => !w.kept.has(h) && !embedSlot.has(h);
    const direct = new Set<(typeof work)[number]>();
    if (this.cache?.encoding === 'i8')
      for (const w of work) if (w.hashes.every((h) => fromCache(w, h))) direct.add(w);
    const cachedSet = new Set<string>();
    for (const w of work) if (!direct.has(w)) for (const h of w.hashes) if (fromCache(w, h)) cachedSet.add(h);
    const cachedList = [...cachedSet];
    const cached = this.cache ? this.cache.get(cachedList).vectors : [];
    const cachedOf = new Map(cachedList.map((h, i) => [h, cached[i]]));
    for (const w of work) {
      this.changed();
      const rows = direct.has(w) ? this.cache?.quantized(w.hashes) : undefined;
      if (rows) {
        const found = rows.rows.filter((r): r is number => r !== undefined);
        if (found.length !== w.hashes.length) throw new Error(`no vector for a chunk of ${w.id}`);
        this.index.upsertQuantized(w.id, rows.q, rows.scales, found, w.chunks);
      } else {
        const vectors = w.hashes.map((h) => {
          const slot = embedSlot.get(h);
          const v = w.kept.get(h) ?? (slot !== undefined ? fresh[slot] : cachedOf.get(h));
          if (!v) throw new Error(`no vector for a chunk of ${w.id}`);
          return v;
        });
        this.index.upsert(w.id, vectors, w.chunks);
      }
      this.hashesOf.set(w.id, w.hashes);
      this.keyOf.set(w.id, w.key);
      this.setWaiting(w.id, w.waiting);
      if (w.chunks.includes(TITLE_CHUNK)) this.titled.add(w.id);
      else this.titled.delete(w.id);
    }
    return { documents: work.length, unchanged, chunks, embedded: toEmbed.length, reused, waiting };
  }

  remove(id: string): boolean {
    this.changed();
    this.hashesOf.delete(id);
    this.keyOf.delete(id);
    this.setWaiting(id, 0);
    this.titled.delete(id);
    return this.index.remove(id);
  }

  /**
   * Embeds the query (through the pool's query cache when there is one) and returns the k closest
   * documents; none for a query the model cannot read (made-up words: gibberish.ts).
   */
  async search(query: string, k: number, options: VectorSearchOptions = {}): Promise<VectorHit[]> {
    const key = options.filter || options.minScore !== undefined ? undefined : `${k}\u0000${query}`;
    const known = key === undefined ? undefined : this.answers.get(key);
    if (known) {
      this.answers.delete(key!);
      this.answers.set(key!, known);
      return known.map((h) => ({ ...h }));
    }
    const changes = this.changes;
    const hits = await this.searchNow(query, k, options);
    // Not kept when the index changed while the query was embedded.
    if (key !== undefined && changes === this.changes) {
      this.answers.set(
        key,
        hits.map((h) => ({ ...h })),
      );
      if (this.answers.size > MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value as string);
    }
    return hits;
  }

  private async searchNow(query: string, k: number, options: VectorSearchOptions): Promise<VectorHit[]> {
    const [vector, centroid] = await Promise.all([
      this.embedder.embedQuery
        ? this.embedder.embedQuery(query)
        : this.embedder.embed([query], 'query').then((v) => v[0]),
      this.gibberishCentroid(),
    ]);
    if (gibberishScore(vector, centroid) >= GIBBERISH_GATE) return [];
    return this.index.search(vector, k, options);
  }

  /** The model's pseudo-word centroid: kept from an earlier process, else embedded (about 40 short queries). */
  gibberishCentroid(): Promise<Float32Array> {
    this.gibberish ??= keptGibberishCentroid(this.embedder.id, this.embedder.dims, (texts) =>
      this.embedder.embed(texts, 'query'),
    );
    return this.gibberish;
  }

  /**
   * Drops cached vectors of chunks no longer indexed nor waiting to be (a document indexed in part, or
   * not yet); returns how many. Call before `cache.save()`.
   */
  pruneCache(): number {
    if (!this.cache) return 0;
    const live: string[] = [];
    for (const hashes of this.hashesOf.values()) live.push(...hashes);
    for (const plan of this.plans.values())
      live.push(...plan.hashes, ...(plan.titleHash ? [plan.titleHash] : []));
    return this.cache.retain(live);
  }
}
