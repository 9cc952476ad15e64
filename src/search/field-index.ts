/**
 * Postings of one text field, in the shape the BM25F loop scans fastest: per term, two parallel
 * arrays of internal document ids and raw term frequencies. Orama's own index keeps
 * `tf / fieldLength` per (document, term) in nested objects, and deduplicated tokens make every tf 1;
 * this keeps the raw counts that BM25 needs.
 */
export interface Posting {
  docs: number[];
  tfs: number[];
  /** Word positions of the term in each document (parallel to `docs`), for phrase matching. */
  pos: number[][];
}

export interface SerializedFieldIndex {
  terms: string[];
  docs: number[][];
  tfs: number[][];
  pos: number[][][];
  lengths: number[];
}

export class FieldIndex {
  readonly postings = new Map<string, Posting>();
  /** Token count per internal document id (0 when the document has no text in this field). */
  readonly lengths: number[] = [];
  /** Distinct terms per document, to remove it without re-tokenizing. */
  private readonly docTerms: (string[] | undefined)[] = [];
  private totalLength = 0;
  private docCount = 0;

  get averageLength(): number {
    return this.docCount === 0 ? 0 : this.totalLength / this.docCount;
  }

  /**
   * Indexes a document's terms (duplicates count) with their word positions (parallel to `terms`);
   * returns the terms new to this field.
   */
  add(doc: number, terms: string[], positions: number[]): string[] {
    if (this.docTerms[doc]) this.remove(doc);
    const created: string[] = [];
    const at = new Map<string, number[]>();
    terms.forEach((t, i) => {
      const list = at.get(t);
      if (list) list.push(positions[i]);
      else at.set(t, [positions[i]]);
    });
    for (const [term, pos] of at) {
      let p = this.postings.get(term);
      if (!p) {
        p = { docs: [], tfs: [], pos: [] };
        this.postings.set(term, p);
        created.push(term);
      }
      p.docs.push(doc);
      p.tfs.push(pos.length);
      p.pos.push(pos);
    }
    this.docTerms[doc] = [...at.keys()];
    this.lengths[doc] = terms.length;
    this.totalLength += terms.length;
    this.docCount++;
    return created;
  }

  /** Removes a document; returns the terms no document has any more. */
  remove(doc: number): string[] {
    const terms = this.docTerms[doc];
    const emptied: string[] = [];
    if (!terms) return emptied;
    for (const term of terms) {
      const p = this.postings.get(term);
      if (!p) continue;
      const i = p.docs.indexOf(doc);
      if (i < 0) continue;
      // Order inside a posting does not matter: swap with the last entry and pop.
      const last = p.docs.length - 1;
      p.docs[i] = p.docs[last];
      p.tfs[i] = p.tfs[last];
      p.pos[i] = p.pos[last];
      p.docs.pop();
      p.tfs.pop();
      p.pos.pop();
      if (p.docs.length === 0) {
        this.postings.delete(term);
        emptied.push(term);
      }
    }
    this.totalLength -= this.lengths[doc] ?? 0;
    this.lengths[doc] = 0;
    this.docTerms[doc] = undefined;
    this.docCount--;
    return emptied;
  }

  has(doc: number): boolean {
    return this.docTerms[doc] !== undefined;
  }

  toJSON(): SerializedFieldIndex {
    const terms: string[] = [];
    const docs: number[][] = [];
    const tfs: number[][] = [];
    const pos: number[][][] = [];
    for (const [term, p] of this.postings) {
      terms.push(term);
      docs.push(p.docs);
      tfs.push(p.tfs);
      pos.push(p.pos);
    }
    // -1 marks an id that is not in this field (removed, or never added), 0 an empty text.
    const lengths = Array.from({ length: this.lengths.length }, (_, d) =>
      this.docTerms[d] ? this.lengths[d] : -1,
    );
    return { terms, docs, tfs, pos, lengths };
  }

  static fromJSON(raw: SerializedFieldIndex): FieldIndex {
    const index = new FieldIndex();
    const perDoc: string[][] = [];
    raw.terms.forEach((term, i) => {
      index.postings.set(term, { docs: raw.docs[i], tfs: raw.tfs[i], pos: raw.pos[i] });
      for (const d of raw.docs[i]) (perDoc[d] ??= []).push(term);
    });
    raw.lengths.forEach((len, doc) => {
      index.lengths[doc] = Math.max(0, len);
      if (len >= 0) {
        index.docTerms[doc] = perDoc[doc] ?? [];
        index.totalLength += len;
        index.docCount++;
      }
    });
    return index;
  }
}

/**
 * Documents among `candidates` in which `terms` occur at consecutive positions (a phrase), from the
 * positional postings: no text is re-read.
 */
export function phraseDocs(field: FieldIndex, terms: string[], candidates: ReadonlySet<number>): Set<number> {
  const found = new Set<number>();
  const postings = terms.map((t) => field.postings.get(t));
  if (postings.some((p) => !p)) return found;
  // Positions per candidate document for each term, starting from the rarest term's documents.
  const byDoc = postings.map((p) => {
    const m = new Map<number, number[]>();
    p!.docs.forEach((d, i) => {
      if (candidates.has(d)) m.set(d, p!.pos[i]);
    });
    return m;
  });
  for (const [doc, starts] of byDoc[0]) {
    const sets = byDoc.map((m) => m.get(doc));
    if (sets.some((s) => !s)) continue;
    const lookup = sets.map((s) => new Set(s));
    if (starts.some((p) => lookup.every((set, j) => set.has(p + j)))) found.add(doc);
  }
  return found;
}
