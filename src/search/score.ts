import { idf, lengthNormInverse, saturate } from './bm25.js';
import type { FieldIndex } from './field-index.js';
import { topKWithin, type Keep } from './top-k.js';

/** An index term that counts for a query word, with how much it counts and where. */
export interface TermAlternative {
  term: string;
  /** 1 for the word itself; less for prefix, partial and typo expansions, so whole words rank first. */
  weight: number;
  /** Bit mask of the fields it may match in (bit i = field i); all fields when absent. */
  fields?: number;
}

/** One query word and the index terms that count for it; a document scores its best alternative. */
export interface QueryTermGroup {
  alternatives: TermAlternative[];
}

/**
 * Corpus statistics from outside this index, added to its own for idf (a workspace search: the other
 * backlogs in scope, so that a word weighs the same in each of them; docs/workspace.md).
 */
export interface OutsideStats {
  /** Documents outside this index. */
  docCount: number;
  /** Documents outside this index with `term` in a field of the bit mask `fields` (every field: undefined). */
  docFreq(term: string, fields: number | undefined): number;
}

export interface ScoreOptions {
  /** Weight per field, in the order of `fields`; 0 leaves a field out. */
  weights: number[];
  /** Length normalization per field, in the order of `fields`. */
  b: number[];
  k1: number;
  /** Documents in the collection (for idf). */
  docCount: number;
  /** Every group must match. */
  conjunctive: boolean;
  /** Counted in idf besides this index's own documents (docCount and each term's document frequency). */
  outside?: OutsideStats;
  /** Keep only these internal ids (Orama's where-filter result); idf still counts every document. */
  filter?: Set<number>;
  /** Score times (words matched / query words)^coordination (0: off). */
  coordination?: number;
  /** Score times 1 + titleCoverage × (words matched in the title field / query words) (0: off). */
  titleCoverage?: number;
  /** Index of the title among `fields` (-1: none). */
  titleField?: number;
  /** Score times `demotion` for the internal ids set here (archived items: SearchSettings.archivedWeight). */
  demoted?: Uint8Array;
  demotion?: number;
  /**
   * Return only these matches: the best `keep.best` first, best first (score, then lowest id), then the
   * others within its slack in no order (topKWithin); `total` still counts all.
   */
  keep?: Keep;
}

/**
 * Plain arrays up to SMALL_OUTPUT entries (a typed array costs about 2.5 µs to allocate, three of them
 * per query were a tenth of a search), typed arrays past it (a plain array grows slowly past 16,000).
 */
export interface ScoredDocs {
  docs: number[] | Int32Array;
  scores: number[] | Float64Array;
  /** Bit i set when field i matched at least one group. */
  fieldMasks: number[] | Uint32Array;
  /** Every match, also those left out by `keep`. */
  total: number;
}

/**
 * Reusable per-document buffers: a query touches few documents, so only touched entries are reset
 * and nothing is allocated per query once the buffers have grown to the collection size. The lists
 * of touched documents are typed arrays with a count: V8 (Node 20) grows a plain array past about
 * 16,000 elements at 70-180 ns an element, which made a 40,000-document match 10x slower.
 */
export class ScoreScratch {
  total = new Float64Array(0);
  groupBest = new Float64Array(0);
  pseudo = new Float64Array(0);
  matched = new Uint16Array(0);
  /** Query words matched in the title, and the last word counted there (1-based). */
  inTitle = new Uint16Array(0);
  titleGroup = new Uint16Array(0);
  mask = new Uint32Array(0);
  /** Documents touched by the query, by one term alternative, by one query word. */
  touchedAll = new Int32Array(0);
  touchedAlt = new Int32Array(0);
  touchedGroup = new Int32Array(0);
  /** The matches' final scores, before `keep` picks the best. */
  outScores = new Float64Array(0);
  outMasks = new Uint32Array(0);

  ensure(size: number): void {
    if (this.total.length >= size) return;
    const n = Math.max(size, this.total.length * 2, 1024);
    this.total = new Float64Array(n);
    this.groupBest = new Float64Array(n);
    this.pseudo = new Float64Array(n);
    this.matched = new Uint16Array(n);
    this.inTitle = new Uint16Array(n);
    this.titleGroup = new Uint16Array(n);
    this.mask = new Uint32Array(n);
    this.touchedAll = new Int32Array(n);
    this.touchedAlt = new Int32Array(n);
    this.touchedGroup = new Int32Array(n);
    this.outScores = new Float64Array(n);
    this.outMasks = new Uint32Array(n);
  }
}

const SMALL_OUTPUT = 4096;

/** Cached `lengthNormInverse` per document for each field; rebuilt when the index changed. */
export class LengthNorms {
  private norms: Float64Array[] = [];
  private version = -1;

  get(fields: FieldIndex[], b: number[], size: number, version: number): Float64Array[] {
    if (version === this.version && this.norms.length === fields.length) return this.norms;
    this.norms = fields.map((f, i) => {
      const out = new Float64Array(size);
      const avg = f.averageLength;
      for (let d = 0; d < size; d++) out[d] = lengthNormInverse(f.lengths[d] ?? 0, avg, b[i]);
      return out;
    });
    this.version = version;
    return this.norms;
  }
}

/** BM25F over the given fields; unsorted output, one entry per matching document (or those `keep` asks for). */
export function scoreBm25f(
  fields: FieldIndex[],
  norms: Float64Array[],
  groups: QueryTermGroup[],
  opts: ScoreOptions,
  scratch: ScoreScratch,
): ScoredDocs {
  const { total, groupBest, pseudo, matched, mask, touchedAll, touchedAlt, touchedGroup } = scratch;
  const { inTitle, titleGroup } = scratch;
  const titleField = opts.titleCoverage ? (opts.titleField ?? -1) : -1;
  let nAll = 0;

  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    let nGroup = 0;
    // Most words have one alternative (the word itself): its scores go straight to the totals.
    const single = group.alternatives.length === 1;
    for (const { term, weight, fields: allowed } of group.alternatives) {
      let nAlt = 0;
      for (let f = 0; f < fields.length; f++) {
        const wf = allowed === undefined || (allowed & (1 << f)) !== 0 ? opts.weights[f] : 0;
        const id = wf > 0 ? fields[f].termId(term) : -1;
        if (id < 0) continue;
        const norm = norms[f];
        const bit = 1 << f;
        // The term's (document, tf) pairs, interleaved in the field's shared postings array.
        const data = fields[f].postData;
        const start = fields[f].postStart[id];
        const end = start + 2 * fields[f].postCount[id];
        for (let i = start; i < end; i += 2) {
          const d = data[i];
          if (pseudo[d] === 0) touchedAlt[nAlt++] = d;
          pseudo[d] += wf * data[i + 1] * norm[d];
          mask[d] |= bit;
        }
        if (f === titleField)
          for (let i = start; i < end; i += 2) {
            const d = data[i];
            if (titleGroup[d] !== g + 1) {
              titleGroup[d] = g + 1;
              inTitle[d]++;
            }
          }
      }
      const w =
        (opts.outside
          ? idf(opts.docCount + opts.outside.docCount, nAlt + opts.outside.docFreq(term, allowed))
          : idf(opts.docCount, nAlt)) * weight;
      const k1 = opts.k1;
      if (single) {
        for (let i = 0; i < nAlt; i++) {
          const d = touchedAlt[i];
          const p = pseudo[d];
          pseudo[d] = 0;
          if (matched[d] === 0) touchedAll[nAll++] = d;
          total[d] += (w * (p * (k1 + 1))) / (p + k1);
          matched[d]++;
        }
        continue;
      }
      for (let i = 0; i < nAlt; i++) {
        const d = touchedAlt[i];
        const s = w * saturate(pseudo[d], k1);
        pseudo[d] = 0;
        if (groupBest[d] === 0) touchedGroup[nGroup++] = d;
        if (s > groupBest[d]) groupBest[d] = s;
      }
    }
    for (let i = 0; i < nGroup; i++) {
      const d = touchedGroup[i];
      if (matched[d] === 0) touchedAll[nAll++] = d;
      total[d] += groupBest[d];
      matched[d]++;
      groupBest[d] = 0;
    }
  }

  // The matches are compacted to the front of touchedAll, their scores and masks into outScores, outMasks.
  const { outScores: scores, outMasks: masks } = scratch;
  let n = 0;
  const required = opts.conjunctive ? groups.length : 1;
  const coordination = opts.coordination ?? 0;
  const titleCoverage = titleField >= 0 ? (opts.titleCoverage ?? 0) : 0;
  const words = groups.length;
  const { demoted, demotion = 1 } = opts;
  for (let i = 0; i < nAll; i++) {
    const d = touchedAll[i];
    if (matched[d] >= required && (!opts.filter || opts.filter.has(d))) {
      let score = total[d];
      if (coordination && matched[d] < words) score *= (matched[d] / words) ** coordination;
      if (titleCoverage) score *= 1 + (titleCoverage * inTitle[d]) / words;
      if (demoted !== undefined && demoted[d] === 1) score *= demotion;
      touchedAll[n] = d;
      scores[n] = score;
      masks[n] = mask[d];
      n++;
    }
    total[d] = 0;
    mask[d] = 0;
    matched[d] = 0;
    inTitle[d] = 0;
    titleGroup[d] = 0;
  }
  const picked = opts.keep ? topKWithin(scores, touchedAll, n, opts.keep) : undefined;
  const size = picked ? picked.length : n;
  const small = size <= SMALL_OUTPUT;
  const out: ScoredDocs = {
    docs: small ? new Array<number>(size) : new Int32Array(size),
    scores: small ? new Array<number>(size) : new Float64Array(size),
    fieldMasks: small ? new Array<number>(size) : new Uint32Array(size),
    total: n,
  };
  for (let j = 0; j < size; j++) {
    const i = picked ? picked[j] : j;
    out.docs[j] = touchedAll[i];
    out.scores[j] = scores[i];
    out.fieldMasks[j] = masks[i];
  }
  return out;
}
