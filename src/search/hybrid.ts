/**
 * Hybrid ranking: two independent retrievers (BM25F and vector search), each list normalized to
 * [0, 1], fused, then multiplied by bounded domain multipliers (fusion.ts). The settings were chosen
 * by measurement on the dev sets (docs/search.md, `npm run eval:hybrid`): one setting for all sets.
 */
import {
  byMax,
  byUpperBound,
  combineMultipliers,
  cosineToUnit,
  fuseLinear,
  fuseRrf,
  idMultiplier,
  minMax,
  recencyMultiplier,
  titleMultiplier,
  typeMultiplier,
  type Scored,
} from './fusion.js';

export interface HybridSettings {
  /** `linear`: weighted sum of normalized scores; `rrf`: reciprocal-rank fusion. */
  fusion: 'linear' | 'rrf';
  /** Linear fusion: the lexical share (the vector score gets the rest). */
  lexicalWeight: number;
  /** How BM25 scores are normalized: over the list's best, min-max over the list, or over the query's upper bound. */
  lexicalNorm: 'max' | 'minmax' | 'upper';
  /**
   * A cosine at or below this is no match: such hits are dropped before normalizing (small sentence
   * encoders rarely go below it for any text, so it only removes noise).
   */
  vectorFloor: number;
  /**
   * A document only the vector list has (no word of the query matched it) needs at least this cosine to
   * be a result at all: below it, "nearest in meaning" is noise, and a query of made-up words would come
   * back with a full page. Calibrated on the dev sets (docs/search.md; the sweep's script is retired: docs/ablation.md).
   */
  semanticOnlyFloor: number;
  /** How cosines are normalized: from [floor, 1] to [0, 1], or min-max over the hits above the floor. */
  vectorNorm: 'floor' | 'minmax';
  /** Candidates taken from each retriever before fusion. */
  candidates: number;
  /** Multipliers: title coverage / exact title (off by default), exact id, epic type, recency (off by default). */
  multipliers: { title: boolean; id: boolean; type: boolean; recency: boolean };
  /**
   * How much the vectors may move a result, per query (`lexicalWeightFor`): `fixed`, `lexicalWeight` for
   * every query; `coverage`, the vector share shrinks as the best word match covers more of the query;
   * `short`, no vector share for queries of one or two terms that some word matched (a query no word
   * matched keeps the full share: meaning is all there is); `agreement`, the vector share scaled by how
   * many of the lexical top 10 the vector top 10 also has; `coverage-short`, both `coverage` and `short`.
   */
  adaptive?: 'fixed' | 'coverage' | 'short' | 'agreement' | 'coverage-short';
  /**
   * `coverage` and `coverage-short`: the most the vectors may get, the share of a query whose best word
   * match covers none of it: `coverageShare × (1 − best / upper bound)` (default 1 − lexicalWeight).
   */
  coverageShare?: number;
}

export const DEFAULT_HYBRID_SETTINGS: HybridSettings = {
  fusion: 'linear',
  // Chosen on docs/fusion.md: keeps every set at or above lexical, on a plateau (0.8-0.9). Dividing BM25 by
  // the query's upper bound shrinks long queries' scores (SciFact's claims) until the vector half dominates;
  // min-max drops a short list's weakest real match to 0, below documents only the vector list has.
  lexicalWeight: 0.85,
  lexicalNorm: 'max',
  vectorFloor: 0.2,
  // Keeps every relevant document the dev sets' vector lists alone found, while most off-topic English
  // finds nothing; made-up words are stopped before (embeddings/gibberish.ts). docs/search.md and
  // docs/ablation.md (bench/semantic-floor.ts, retired).
  semanticOnlyFloor: 0.3,
  vectorNorm: 'minmax',
  candidates: 100,
  // Title off: BM25F's title coverage (SearchSettings.titleCoverage) is already in the lexical score, and
  // applying it twice cost SciFact hybrid 0.7120 -> 0.7071, below bm25's 0.7073 (docs/search.md).
  multipliers: { title: false, id: true, type: true, recency: false },
  // Issue #24: fixed fusion lost navigation, tail and resource queries on the dev set; the words decide a
  // query of one or two terms or one whose best word match covers it (docs/search.md, "How much the
  // vectors may move a result"; the sweep in docs/ablation.md).
  adaptive: 'coverage-short',
  // The smallest most-share at which every class of the dev set is at or above bm25 with aboutness up by
  // at least 0.03 (0.15, 0.2 were short of it; 0.3 and 0.4 score higher there but were not taken);
  // XQuAD-en and SciFact train were not used to choose it (docs/search.md).
  coverageShare: 0.25,
};

/** The lexical share of the fused score for this query (HybridSettings.adaptive). */
export function lexicalWeightFor(input: HybridInput, settings: HybridSettings): number {
  const base = settings.lexicalWeight;
  const lexical = input.lexical.slice(0, settings.candidates);
  switch (settings.adaptive) {
    case 'coverage-short':
      if (lexical.length > 0 && input.queryTerms.length <= 2) return 1;
    // falls through
    case 'coverage': {
      const best = Math.max(0, ...lexical.map((h) => h.score));
      const upper = Math.max(input.lexicalUpperBound, best);
      const covered = upper > 0 ? best / upper : 0;
      return 1 - (settings.coverageShare ?? 1 - base) * (1 - covered);
    }
    case 'short':
      return lexical.length > 0 && input.queryTerms.length <= 2 ? 1 : base;
    case 'agreement': {
      const top = new Set(lexical.slice(0, 10).map((h) => h.id));
      if (top.size === 0) return base;
      const shared = input.vector.slice(0, 10).filter((h) => top.has(h.id)).length;
      return base + (1 - base) * (1 - shared / Math.min(10, top.size));
    }
    default:
      return base;
  }
}

/** What the multipliers need to know about a document. */
export interface DocFacts {
  titleTerms: string[];
  idKey: string;
  type?: string;
  updatedMs?: number;
  /** Archived (Backlog.md's archive/): the score is times `HybridInput.archivedWeight`. */
  archived?: boolean;
}

export interface HybridInput {
  lexical: Scored[];
  vector: Scored[];
  /** Σ idf(t) · (k1 + 1) over the query terms: the best BM25F score possible for this query. */
  lexicalUpperBound: number;
  queryTerms: string[];
  queryIdKey?: string;
  facts: (id: string) => DocFacts;
  nowMs?: number;
  /** The lexical side's SearchSettings.archivedWeight, so both modes rank archived work alike (default 1). */
  archivedWeight?: number;
}

export interface HybridHit {
  id: string;
  score: number;
  lexical: number | null;
  vector: number | null;
}

/** Fuses the two lists; the result is sorted best first (ties by id, so the order is stable). */
export function hybridRank(
  input: HybridInput,
  settings: HybridSettings = DEFAULT_HYBRID_SETTINGS,
): HybridHit[] {
  const lexical = input.lexical.slice(0, settings.candidates);
  const lexScores = new Map(lexical.map((h) => [h.id, h.score]));
  const vector = input.vector
    .slice(0, settings.candidates)
    .filter((h) => lexScores.has(h.id) || h.score >= settings.semanticOnlyFloor);
  // Expansions (partial words, typos) add scores the bound does not count: the best match caps it.
  const upper = Math.max(input.lexicalUpperBound, ...lexical.map((h) => h.score));
  const vecScores = new Map(vector.map((h) => [h.id, h.score]));
  const fused =
    settings.fusion === 'rrf'
      ? fuseRrf([lexical, vector])
      : fuseLinear(
          settings.lexicalNorm === 'upper'
            ? byUpperBound(lexical, upper)
            : settings.lexicalNorm === 'max'
              ? byMax(lexical)
              : minMax(lexical),
          settings.vectorNorm === 'minmax'
            ? minMax(vector.filter((h) => h.score > settings.vectorFloor))
            : cosineToUnit(vector, settings.vectorFloor),
          { lexical: lexicalWeightFor(input, settings) },
        );
  const now = input.nowMs ?? Date.now();
  const m = settings.multipliers;
  const out: HybridHit[] = [];
  for (const [id, base] of fused) {
    // A document only the vector list has, scoring 0 there (at or below the floor), is no match at all.
    if (base <= 0 && !lexScores.has(id)) continue;
    const f = input.facts(id);
    const factor = combineMultipliers([
      m.title ? titleMultiplier(input.queryTerms, f.titleTerms) : 1,
      m.id ? idMultiplier(input.queryIdKey, f.idKey) : 1,
      m.type ? typeMultiplier(f.type) : 1,
      m.recency ? recencyMultiplier(f.updatedMs ?? 0, now) : 1,
    ]);
    const archived = f.archived ? (input.archivedWeight ?? 1) : 1;
    out.push({
      id,
      score: base * factor * archived,
      lexical: lexScores.get(id) ?? null,
      vector: vecScores.get(id) ?? null,
    });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
