/**
 * BM25F scoring as pure functions (Robertson & Zaragoza, "The Probabilistic Relevance Framework").
 * Per term, the weighted, length-normalized frequencies of all fields are summed into one
 * pseudo-frequency, and saturation is applied once: a word in the title and the body is not counted
 * as two independent matches, as per-field BM25 summed would.
 */

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalization per field, 0 (none) to 1 (full). */
  b: number;
}

/** Lucene's BM25 idf: always positive, so a term in most documents still counts a little. */
export function idf(docCount: number, docFreq: number): number {
  return Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));
}

/** 1 / ((1 - b) + b * len / avgLen): multiplies a raw term frequency in one field. */
export function lengthNormInverse(fieldLength: number, avgFieldLength: number, b: number): number {
  if (avgFieldLength <= 0) return 1;
  return 1 / (1 - b + (b * fieldLength) / avgFieldLength);
}

/** Saturated score of one term for one document, from its BM25F pseudo-frequency. */
export function saturate(pseudoFrequency: number, k1: number): number {
  return (pseudoFrequency * (k1 + 1)) / (pseudoFrequency + k1);
}
