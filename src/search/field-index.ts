/**
 * The lexical index of one text field, in typed arrays (no JS object per document, term or
 * (document, term) pair):
 *
 * - a term dictionary: term string <-> term id (ids of emptied terms are reused). A restored field looks
 *   terms up by binary search over the saved ids in term order (`sorted`) and makes its Map only when it
 *   changes or lists its vocabulary: a one-shot search looks up a few words;
 * - postings per term id, in the shape the BM25F loop scans fastest: (internal document id, raw term
 *   frequency) pairs, sorted by document id, interleaved in one Int32Array shared by every term (each
 *   term owns a slot of it; a full slot moves to the end with twice the room, and `compact()` gives
 *   the room back after a bulk build);
 * - a forward index per document: its token sequence as term ids in one Uint32Array shared by every
 *   document. It answers phrases (consecutive positions) and tells which postings to leave on removal.
 *   The saved form is the dictionary, this sequence, the document frequencies and the postings, each
 *   array read where it lies in the cache's bytes (typed-arrays.ts fromBytes).
 *
 * Orama's own index keeps `tf / fieldLength` per (document, term) in nested objects, and deduplicated
 * tokens make every tf 1; this keeps the raw counts that BM25 needs.
 *
 * A token is `id * 2 + same`, where `same` is 1 when the token sits at the same word position as the
 * token before it (a compound's joined form, an id's parts) and 0 when it is one position further.
 * Tokens are stored in position order. A gap in the positions is one GAP token (phrases only ask
 * whether positions are consecutive, so a gap of any length is one).
 */

import { AdjacencyFilter } from './adjacency.js';
import { fromBytes, grownInt32, grownUint8, grownUint32, toBytes } from './typed-arrays.js';
import { isUnread, readBytes, UnreadableBytes } from '../storage/unread-bytes.js';

/** Term id of the GAP token: a position without a term. Never a real id. */
const GAP_ID = 0x7fffffff;
const GAP = GAP_ID * 2;

/** The persisted form (index cache format 3): typed arrays as little-endian bytes. */
export interface SavedFieldIndex {
  /** Term by id; null for a free id. */
  terms: (string | null)[];
  /** Int32 per internal document id: field length in tokens; -1 when the document is not in this field. */
  lengths: Uint8Array;
  /** Int32 per internal document id: tokens of its sequence (0 when not in this field). */
  seqLengths: Uint8Array;
  /** Uint32 tokens of the documents' sequences, in document id order. */
  seq: Uint8Array;
  /** Int32 per term id: documents that have it (where each term's postings start in `postings`). */
  docFreqs: Uint8Array;
  /** Int32 (document, tf) pairs of every term, term by term (FIELD_INDEX_FORMAT 3): read where they lie. */
  postings: Uint8Array;
  /** Int32 ids of the terms in the order of their strings (FIELD_INDEX_FORMAT 4): looked up by binary search. */
  sorted: Uint8Array;
}

export class FieldIndex {
  // Term dictionary: `idsMap` made from `terms` when first needed, if restored (until then `sorted`).
  private idsMap: Map<string, number> | null = new Map<string, number>();
  private terms: (string | undefined)[] = [];
  /** A restored field's term ids in the order of their strings, until its Map is made. */
  private sorted: Int32Array | null = null;
  private readonly freeIds: number[] = [];

  // Postings: term id -> [postStart, postStart + 2 * postCount) of `postData`, room for postCap pairs.
  // Public for the scoring loop (score.ts), which only reads them.
  /** (document, tf) pairs of every term; read through `postStart` / `postCount`. */
  postData: Int32Array = new Int32Array(0);
  /** Where each term id's pairs begin in `postData` (an index into it). */
  postStart: Int32Array = new Int32Array(0);
  /** Documents per term id (its document frequency). */
  postCount: Int32Array = new Int32Array(0);
  private postCap: Int32Array = new Int32Array(0);
  private postUsed = 0;
  private postGarbage = 0;
  /**
   * Restored from bytes not read yet (unread-bytes.ts): 1 per term id whose postings are still to be read
   * and checked, which its first lookup does; null once every term's are.
   */
  private unreadTerms: Uint8Array | null = null;
  /** Restored from bytes not read yet: each document's sequence is read when first scanned. */
  private unreadSequences = false;

  // Forward index: document -> [seqStart, seqStart + seqLength) of `seqData`; seqLength -1 = absent.
  private seqData: Uint32Array = new Uint32Array(0);
  private seqStart: Int32Array = new Int32Array(0);
  private seqLength: Int32Array = new Int32Array(0);
  private seqUsed = 0;
  private seqGarbage = 0;
  /**
   * Which terms may stand next to each other in which document (adjacency.ts), filled in slices by
   * `fillAdjacency` (in the background after a build) and by each document added after; `adjacencyHas`
   * marks the documents whose pairs are in, up to `adjacencyNext` and any added since.
   */
  private adjacency: AdjacencyFilter | undefined;
  private adjacencyHas: Uint8Array = new Uint8Array(0);
  private adjacencyNext = 0;

  /** Token count per internal document id (0 when the document has no text in this field). */
  readonly lengths: number[] = [];
  private totalLength = 0;
  private docCount = 0;

  /** Per-term-id scratch (term frequencies while adding, marks while removing); all zero between calls. */
  private scratch: Int32Array = new Int32Array(0);
  private readonly touched: number[] = [];

  /**
   * `minGarbage`: abandoned array entries (moved or removed) tolerated before compacting, besides
   * garbage exceeding the live entries; tests set it to 0 to compact often.
   */
  constructor(private readonly minGarbage = 1 << 16) {}

  private get ids(): Map<string, number> {
    if (!this.idsMap) {
      const ids = new Map<string, number>();
      for (let id = 0; id < this.terms.length; id++)
        if (this.terms[id] !== undefined) ids.set(this.terms[id]!, id);
      this.idsMap = ids;
      this.sorted = null;
    }
    return this.idsMap;
  }

  /** The term's id or -1, without making the Map of a restored field. */
  private lookup(term: string): number {
    const id = this.find(term);
    if (id >= 0 && this.unreadTerms?.[id] === 1) this.readTerm(id);
    return id;
  }

  private find(term: string): number {
    const sorted = this.sorted;
    if (!sorted) return this.ids.get(term) ?? -1;
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const found = this.terms[sorted[mid]]!;
      if (found === term) return sorted[mid];
      if (found < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * Reads a restored term's postings from the cache file and checks them (as checkPostings); throws
   * UnreadableBytes when they are malformed (the caller falls back to building the index from the items).
   */
  private readTerm(id: number): void {
    const start = this.postStart[id];
    readBytes(this.postData, 4 * start, 4 * (start + 2 * this.postCount[id]));
    try {
      checkPostings(
        this.postData,
        this.postStart,
        this.postCount,
        this.seqLength.length,
        this.seqLength,
        id,
        id + 1,
      );
    } catch (err) {
      throw new UnreadableBytes((err as Error).message);
    }
    this.unreadTerms![id] = 0;
  }

  /** Reads whatever of a restored field is still unread: before any change, a save or a scan of every document. */
  readAll(): void {
    if (this.unreadTerms) {
      readBytes(this.postData);
      try {
        checkPostings(this.postData, this.postStart, this.postCount, this.seqLength.length, this.seqLength);
      } catch (err) {
        throw new UnreadableBytes((err as Error).message);
      }
      this.unreadTerms = null;
    }
    if (this.unreadSequences) {
      readBytes(this.seqData);
      this.unreadSequences = false;
    }
  }

  /** Reads a restored document's sequence when it is first scanned. */
  private readSequence(doc: number): void {
    if (!this.unreadSequences) return;
    const start = this.seqStart[doc];
    readBytes(this.seqData, 4 * start, 4 * (start + this.seqLength[doc]));
  }

  get averageLength(): number {
    return this.docCount === 0 ? 0 : this.totalLength / this.docCount;
  }

  /** Distinct terms in this field. */
  get termCount(): number {
    return this.sorted ? this.sorted.length : this.ids.size;
  }

  /** The term's id, or -1 when no document has it in this field. */
  termId(term: string): number {
    return this.lookup(term);
  }

  hasTerm(term: string): boolean {
    return this.find(term) >= 0;
  }

  /** Documents that have the term in this field. */
  docFreq(term: string): number {
    const id = this.find(term);
    return id < 0 ? 0 : this.postCount[id];
  }

  /** Every term in this field. */
  vocabulary(): IterableIterator<string> {
    return this.ids.keys();
  }

  /** A copy of the term's postings (sorted by document id), for inspection and tests. */
  posting(term: string): { docs: number[]; tfs: number[] } | undefined {
    const id = this.lookup(term);
    if (id < 0) return undefined;
    const docs: number[] = [];
    const tfs: number[] = [];
    const start = this.postStart[id];
    for (let k = 0; k < this.postCount[id]; k++) {
      docs.push(this.postData[start + 2 * k]);
      tfs.push(this.postData[start + 2 * k + 1]);
    }
    return { docs, tfs };
  }

  has(doc: number): boolean {
    return doc < this.seqLength.length && this.seqLength[doc] >= 0;
  }

  /**
   * Indexes a document's terms (duplicates count) with their word positions (parallel to `terms`);
   * returns the terms new to this field.
   */
  add(doc: number, terms: string[], positions: number[]): string[] {
    this.readAll();
    if (this.has(doc)) this.remove(doc);
    const n = terms.length;
    const created: string[] = [];
    const tokenIds = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const t = terms[i];
      let id = this.ids.get(t);
      if (id === undefined) {
        id = this.newTerm(t);
        created.push(t);
      }
      tokenIds[i] = id;
    }

    // Term frequencies, then one posting entry per distinct term.
    const counts = this.scratch;
    const touched = this.touched;
    for (let i = 0; i < n; i++) if (counts[tokenIds[i]]++ === 0) touched.push(tokenIds[i]);
    for (const id of touched) {
      this.insertPosting(id, doc, counts[id]);
      counts[id] = 0;
    }
    touched.length = 0;

    this.appendSequence(doc, tokenIds, positions);
    // A folded twin (`~ban` beside `bán`, tokenizer.ts foldedTwin) is a second key of a word counted already.
    let length = n;
    for (const t of terms) if (t.charCodeAt(0) === 0x7e) length--;
    while (this.lengths.length < doc) this.lengths.push(0); // packed, no holes
    this.lengths[doc] = length;
    this.totalLength += length;
    this.docCount++;
    return created;
  }

  /** Removes a document; returns the terms no document has any more. */
  remove(doc: number): string[] {
    const emptied: string[] = [];
    if (!this.has(doc)) return emptied;
    this.readAll();
    const start = this.seqStart[doc];
    const end = start + this.seqLength[doc];
    const seen = this.scratch;
    const touched = this.touched;
    for (let k = start; k < end; k++) {
      const id = this.seqData[k] >>> 1;
      if (id === GAP_ID || seen[id] !== 0) continue;
      seen[id] = 1;
      touched.push(id);
    }
    for (const id of touched) {
      seen[id] = 0;
      if (this.removePosting(id, doc)) emptied.push(this.freeTerm(id));
    }
    touched.length = 0;
    this.seqGarbage += this.seqLength[doc];
    this.seqLength[doc] = -1;
    this.totalLength -= this.lengths[doc] ?? 0;
    this.lengths[doc] = 0;
    this.docCount--;
    if (this.seqGarbage > this.minGarbage && this.seqGarbage > this.seqUsed - this.seqGarbage)
      this.compactSequences();
    return emptied;
  }

  /** Word positions of `term` in the document (derived from its sequence), for inspection and tests. */
  positions(doc: number, term: string): number[] {
    const id = this.lookup(term);
    const out: number[] = [];
    if (id < 0 || !this.has(doc)) return out;
    this.readSequence(doc);
    let pos = -1;
    const start = this.seqStart[doc];
    const end = start + this.seqLength[doc];
    for (let k = start; k < end; k++) {
      const tok = this.seqData[k];
      if ((tok & 1) === 0) pos++;
      if (tok >>> 1 === id) out.push(pos);
    }
    return out;
  }

  /**
   * False when term `second` (an id) never stands right after term `first` in the document's field;
   * true when it may (about 1% of the other pairs too): a scan of `sequence` tells for sure. Until the
   * document's pairs are in the adjacency filter, whether it has both terms (binary searches).
   */
  mayBeAdjacent(doc: number, first: number, second: number): boolean {
    return this.adjacencyHas[doc] === 1
      ? this.adjacency!.mayHave(doc, first, second)
      : this.hasTermIn(doc, first) && this.hasTermIn(doc, second);
  }

  /** Every document's pairs are in the adjacency filter, and it has room for more. */
  get adjacencyReady(): boolean {
    return (
      this.adjacency !== undefined && !this.adjacency.full && this.adjacencyNext >= this.seqLength.length
    );
  }

  /**
   * Puts documents' pairs into the adjacency filter until about `budget` tokens were read (made anew,
   * empty, when there is none or it holds more than it was sized for); returns the budget left, more
   * than 0 once every document is in.
   */
  fillAdjacency(budget: number): number {
    this.readAll();
    if (this.adjacency === undefined || this.adjacency.full) {
      // Room for the pairs there are and a quarter more, added or changed later.
      this.adjacency = new AdjacencyFilter(
        Math.max(1024, Math.ceil(1.25 * (this.seqUsed - this.seqGarbage))),
      );
      this.adjacencyHas = new Uint8Array(this.seqLength.length);
      this.adjacencyNext = 0;
    }
    for (; this.adjacencyNext < this.seqLength.length && budget > 0; this.adjacencyNext++) {
      const d = this.adjacencyNext;
      if (this.seqLength[d] < 0 || this.adjacencyHas[d] === 1) continue;
      this.addPairs(d);
      budget -= this.seqLength[d] + 1;
    }
    return this.adjacencyNext >= this.seqLength.length ? Math.max(1, budget) : 0;
  }

  private addPairs(doc: number): void {
    const start = this.seqStart[doc];
    this.adjacency!.addSequence(doc, this.seqData, start, start + this.seqLength[doc], GAP_ID);
    if (doc >= this.adjacencyHas.length) this.adjacencyHas = grownUint8(this.adjacencyHas, doc + 1);
    this.adjacencyHas[doc] = 1;
  }

  /** The document's tokens (term id << 1, bit 0 set for a token at the same position as the one before); see phrase.ts. */
  sequence(doc: number): Uint32Array {
    if (!this.has(doc)) return new Uint32Array(0);
    this.readSequence(doc);
    const start = this.seqStart[doc];
    return this.seqData.subarray(start, start + this.seqLength[doc]);
  }

  // ---- Term dictionary.

  private newTerm(term: string): number {
    const id = this.freeIds.pop() ?? this.terms.length;
    if (id >= GAP_ID) throw new Error('field index: too many terms');
    this.ids.set(term, id);
    this.terms[id] = term;
    if (id >= this.postStart.length) {
      const size = id + 1;
      this.postStart = grownInt32(this.postStart, size);
      this.postCount = grownInt32(this.postCount, size);
      this.postCap = grownInt32(this.postCap, size);
      this.scratch = grownInt32(this.scratch, size);
    }
    this.postStart[id] = 0;
    this.postCount[id] = 0;
    this.postCap[id] = 0;
    return id;
  }

  private freeTerm(id: number): string {
    const term = this.terms[id]!;
    this.ids.delete(term);
    this.terms[id] = undefined;
    this.postGarbage += 2 * this.postCap[id];
    this.postCap[id] = 0;
    this.freeIds.push(id);
    return term;
  }

  // ---- Postings.

  /** Adds (doc, tf) to the term's postings, keeping them sorted by document id. */
  private insertPosting(id: number, doc: number, tf: number): void {
    const n = this.postCount[id];
    if (n === this.postCap[id]) this.moveSlot(id, Math.max(1, 2 * n));
    const data = this.postData;
    const start = this.postStart[id];
    let at = n;
    if (n > 0 && data[start + 2 * (n - 1)] > doc) {
      // Re-added under a lower id than the last: binary search, shift the tail by one pair.
      at = this.lowerBound(id, doc);
      data.copyWithin(start + 2 * at + 2, start + 2 * at, start + 2 * n);
    }
    data[start + 2 * at] = doc;
    data[start + 2 * at + 1] = tf;
    this.postCount[id] = n + 1;
  }

  /** Index (in pairs) of the first posting of the term whose document is >= doc. */
  private lowerBound(id: number, doc: number): number {
    const data = this.postData;
    const start = this.postStart[id];
    let lo = 0;
    let hi = this.postCount[id];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (data[start + 2 * mid] < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Whether the document has the term (by id) in this field: a binary search in its postings. */
  hasTermIn(doc: number, id: number): boolean {
    if (this.unreadTerms?.[id] === 1) this.readTerm(id);
    const i = this.lowerBound(id, doc);
    return i < this.postCount[id] && this.postData[this.postStart[id] + 2 * i] === doc;
  }

  /** Removes doc from the term's postings; returns whether they are empty now. */
  private removePosting(id: number, doc: number): boolean {
    const n = this.postCount[id];
    const data = this.postData;
    const start = this.postStart[id];
    const lo = this.lowerBound(id, doc);
    if (lo < n && data[start + 2 * lo] === doc) {
      data.copyWithin(start + 2 * lo, start + 2 * lo + 2, start + 2 * n);
      this.postCount[id] = n - 1;
    }
    return this.postCount[id] === 0;
  }

  /** Gives the term a slot of `cap` pairs at the end of `postData`, compacting or growing it first. */
  private moveSlot(id: number, cap: number): void {
    const live = this.postUsed - this.postGarbage;
    if (this.postGarbage > this.minGarbage && this.postGarbage > live) this.compactPostings();
    const need = this.postUsed + 2 * cap;
    if (need > this.postData.length) {
      const out = new Int32Array(Math.max(need, Math.ceil(this.postData.length * 1.5), 1024));
      out.set(this.postData.subarray(0, this.postUsed));
      this.postData = out;
    }
    const from = this.postStart[id];
    this.postData.copyWithin(this.postUsed, from, from + 2 * this.postCount[id]);
    this.postGarbage += 2 * this.postCap[id];
    this.postStart[id] = this.postUsed;
    this.postCap[id] = cap;
    this.postUsed += 2 * cap;
  }

  /** Rewrites `postData` with every term's slot back to back (room kept), dropping moved-out slots. */
  private compactPostings(): void {
    let live = 0;
    for (let id = 0; id < this.terms.length; id++)
      if (this.terms[id] !== undefined) live += 2 * this.postCap[id];
    const out = new Int32Array(live);
    let used = 0;
    for (let id = 0; id < this.terms.length; id++) {
      if (this.terms[id] === undefined) continue;
      const from = this.postStart[id];
      out.set(this.postData.subarray(from, from + 2 * this.postCount[id]), used);
      this.postStart[id] = used;
      used += 2 * this.postCap[id];
    }
    this.postData = out;
    this.postUsed = used;
    this.postGarbage = 0;
  }

  // ---- Forward index.

  /** Stores the document's tokens in position order (stable), with same-position bits and gaps. */
  private appendSequence(doc: number, tokenIds: Int32Array, positions: number[]): void {
    const n = tokenIds.length;
    // Tokens are almost in position order (a compound's joined form comes after its parts, at the
    // position of the first part): an insertion sort of their indices is linear here.
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let j = i;
      while (j > 0 && positions[order[j - 1]] > positions[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    let gaps = 0;
    for (let k = 1; k < n; k++) if (positions[order[k]] > positions[order[k - 1]] + 1) gaps++;
    const size = n + gaps;
    if (this.seqUsed + size > this.seqData.length) {
      if (this.seqGarbage > this.seqUsed - this.seqGarbage) this.compactSequences();
      this.seqData = grownUint32(this.seqData, this.seqUsed + size);
    }
    if (doc >= this.seqLength.length) {
      this.seqStart = grownInt32(this.seqStart, doc + 1);
      this.seqLength = grownInt32(this.seqLength, doc + 1, -1);
    }
    const data = this.seqData;
    let w = this.seqUsed;
    for (let k = 0; k < n; k++) {
      const i = order[k];
      const same = k > 0 && positions[i] === positions[order[k - 1]] ? 1 : 0;
      if (k > 0 && positions[i] > positions[order[k - 1]] + 1) data[w++] = GAP;
      data[w++] = tokenIds[i] * 2 + same;
    }
    this.seqStart[doc] = this.seqUsed;
    this.seqLength[doc] = size;
    // Its pairs go into the filter now (its old ones stay: a "maybe" costs a scan, never an answer).
    if (this.adjacency && !this.adjacency.full) this.addPairs(doc);
    else if (doc < this.adjacencyHas.length) this.adjacencyHas[doc] = 0;
    this.seqUsed = w;
  }

  private compactSequences(): void {
    const out = new Uint32Array(this.seqUsed - this.seqGarbage);
    let used = 0;
    for (let d = 0; d < this.seqLength.length; d++) {
      const len = this.seqLength[d];
      if (len < 0) continue;
      out.set(this.seqData.subarray(this.seqStart[d], this.seqStart[d] + len), used);
      this.seqStart[d] = used;
      used += len;
    }
    this.seqData = out;
    this.seqUsed = used;
    this.seqGarbage = 0;
  }

  /**
   * Gives back the room kept for growth: every term's postings and every document's sequence back to
   * back in arrays of exactly their size (after a bulk build; later additions grow them again).
   */
  compact(): void {
    this.readAll();
    const live = this.postCount.subarray(0, this.terms.length);
    this.postCap.set(live);
    this.compactPostings();
    this.compactSequences();
  }

  // ---- Persistence.

  /** The field as bytes: dictionary, lengths, forward index, document frequencies and postings (compacted). */
  save(): SavedFieldIndex {
    this.readAll();
    const docs = this.lengths.length;
    const lengths = new Int32Array(docs);
    const seqLengths = new Int32Array(docs);
    let total = 0;
    for (let d = 0; d < docs; d++) {
      const present = this.has(d);
      lengths[d] = present ? this.lengths[d] : -1;
      seqLengths[d] = present ? this.seqLength[d] : 0;
      total += seqLengths[d];
    }
    const seq = new Uint32Array(total);
    let w = 0;
    for (let d = 0; d < docs; d++) {
      if (seqLengths[d] === 0) continue;
      seq.set(this.seqData.subarray(this.seqStart[d], this.seqStart[d] + seqLengths[d]), w);
      w += seqLengths[d];
    }
    const termSlots = this.terms.length;
    let pairs = 0;
    for (let id = 0; id < termSlots; id++) pairs += this.postCount[id];
    const postings = new Int32Array(2 * pairs);
    for (let id = 0, at = 0; id < termSlots; id++) {
      const start = this.postStart[id];
      const end = start + 2 * this.postCount[id];
      postings.set(this.postData.subarray(start, end), at);
      at += end - start;
    }
    return {
      terms: Array.from(this.terms, (t) => t ?? null),
      lengths: toBytes(lengths),
      seqLengths: toBytes(seqLengths),
      seq: toBytes(seq),
      docFreqs: toBytes(this.postCount.slice(0, termSlots)),
      postings: toBytes(postings),
      sorted: toBytes(this.sortedIds()),
    };
  }

  /** The live term ids in the order of their strings (as `<` orders them, the order `lookup` searches). */
  private sortedIds(): Int32Array {
    if (this.sorted) return this.sorted;
    const ids = Int32Array.from(this.ids.values());
    const terms = this.terms;
    return ids.sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
  }

  static load(saved: SavedFieldIndex): FieldIndex {
    const index = new FieldIndex();
    const lengths = fromBytes(saved.lengths, Int32Array);
    const seqLengths = fromBytes(saved.seqLengths, Int32Array);
    const seq = fromBytes(saved.seq, Uint32Array);
    if (seqLengths.length !== lengths.length) throw new Error('field index: lengths do not match');

    // The saved list of terms is the dictionary (free ids as undefined); its Map is made when needed.
    if (!Array.isArray(saved.terms)) throw new Error('field index: the terms are not a list');
    // A copy (of the references): the index changes its own list, not the one it was given.
    const terms = saved.terms.slice() as (string | null | undefined)[];
    const termSlots = terms.length;
    for (let id = 0; id < termSlots; id++) {
      if (terms[id] === null) {
        terms[id] = undefined;
        index.freeIds.push(id);
      } else if (typeof terms[id] !== 'string') throw new Error('field index: a term is not a string');
    }
    index.freeIds.reverse(); // the lowest free id is reused first, as when it was freed last
    index.terms = terms as (string | undefined)[];
    index.sorted = checkedOrder(
      fromBytes(saved.sorted, Int32Array),
      index.terms,
      termSlots - index.freeIds.length,
    );
    index.idsMap = null;

    // The forward index is the saved sequence itself.
    const docs = lengths.length;
    index.seqData = seq;
    index.seqStart = new Int32Array(docs);
    index.seqLength = new Int32Array(docs);
    let at = 0;
    for (let d = 0; d < docs; d++) {
      const len = lengths[d];
      index.lengths[d] = Math.max(0, len);
      index.seqStart[d] = at;
      index.seqLength[d] = len >= 0 ? seqLengths[d] : -1;
      if (len >= 0) {
        at += seqLengths[d];
        index.totalLength += len;
        index.docCount++;
      }
    }
    if (at !== seq.length) throw new Error('field index: sequence length does not match');
    index.seqUsed = at;

    // The saved postings, term by term, where they lie (a view of the cache's bytes, written only by
    // this index), each term's slot sized by its document frequency.
    const postCount = fromBytes(saved.docFreqs, Int32Array).slice();
    if (postCount.length !== termSlots) throw new Error('field index: document frequencies do not match');
    const postStart = new Int32Array(termSlots);
    let used = 0;
    for (let id = 0; id < termSlots; id++) {
      if (postCount[id] < 0 || (index.terms[id] === undefined) !== (postCount[id] === 0))
        throw new Error('field index: document frequencies do not match the terms');
      postStart[id] = used;
      used += 2 * postCount[id];
    }
    const postData = fromBytes(saved.postings, Int32Array);
    if (postData.length !== used)
      throw new Error('field index: postings do not match the document frequencies');
    // The sequences are not walked here (they are read where they lie, a document's when it is
    // needed): a token of no known term only fails to match (phrases) or is skipped (removal).
    // Bytes not read yet are read and checked term by term when first looked up (readTerm).
    if (isUnread(postData)) index.unreadTerms = new Uint8Array(termSlots).fill(1);
    else checkPostings(postData, postStart, postCount, docs, index.seqLength);
    index.unreadSequences = isUnread(seq);
    index.postData = postData;
    index.postStart = postStart;
    index.postCount = postCount;
    index.postCap = postCount.slice();
    index.postUsed = used;
    index.scratch = new Int32Array(termSlots);
    return index;
  }
}

/**
 * Throws unless `sorted` names every live term once, in strictly increasing order of their strings (so
 * the binary search finds each): one pass over neighbours.
 */
function checkedOrder(sorted: Int32Array, terms: (string | undefined)[], live: number): Int32Array {
  if (sorted.length !== live) throw new Error('field index: the terms and their order do not match');
  let last: string | undefined;
  for (let i = 0; i < sorted.length; i++) {
    const term = sorted[i] >= 0 && sorted[i] < terms.length ? terms[sorted[i]] : undefined;
    if (term === undefined || (last !== undefined && !(last < term)))
      throw new Error('field index: the terms are not in order');
    last = term;
  }
  return sorted;
}

/**
 * Throws unless every term's postings name documents in increasing order, each with a term frequency
 * of at least 1 (a cache is signed: this guards against bugs, and keeps a bad cache from reaching the
 * scoring loop). One sequential pass; it touches every page of the postings, which a read in place
 * otherwise would not (at 50,000 documents, about a tenth of the restore: a check per term when first
 * searched would spare it).
 */
function checkPostings(
  postData: Int32Array,
  postStart: Int32Array,
  postCount: Int32Array,
  docs: number,
  /** Each document's sequence length: -1 for a removed one, which no posting may name. */
  seqLength: Int32Array,
  from = 0,
  to = postCount.length,
): void {
  for (let id = from; id < to; id++) {
    let last = -1;
    const end = postStart[id] + 2 * postCount[id];
    for (let k = postStart[id]; k < end; k += 2) {
      const doc = postData[k];
      if (doc <= last || doc >= docs || postData[k + 1] < 1 || !(seqLength[doc] >= 0))
        throw new Error('field index: malformed postings');
      last = doc;
    }
  }
}
