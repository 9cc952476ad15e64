/**
 * Hybrid scoring, normalize-then-multiply: the lexical (BM25F) and vector retrievers each give a
 * ranked list; each list is normalized to [0, 1], the two are fused, and the fused score is
 * multiplied by bounded domain multipliers. All pure functions; docs/search.md has their measured
 * effect.
 */

import type { Scored } from './types.js';

export type { Scored };

/** Min-max over the list: the best gets 1, the worst 0 (a list of one gets 1). */
export function minMax(list: Scored[]): Map<string, number> {
  const out = new Map<string, number>();
  if (list.length === 0) return out;
  let lo = Infinity;
  let hi = -Infinity;
  for (const { score } of list) {
    lo = Math.min(lo, score);
    hi = Math.max(hi, score);
  }
  for (const { id, score } of list) out.set(id, hi > lo ? (score - lo) / (hi - lo) : 1);
  return out;
}

/**
 * Each score over the list's best: the best gets 1 and a weak match stays above 0, where min-max would
 * drop the list's last match to 0 (below every document the other list adds) however good it is.
 */
export function byMax(list: Scored[]): Map<string, number> {
  const out = new Map<string, number>();
  let hi = 0;
  for (const { score } of list) hi = Math.max(hi, score);
  for (const { id, score } of list) out.set(id, hi > 0 ? Math.max(0, score) / hi : 0);
  return out;
}

/**
 * BM25 scores over the best score a document could reach for this query (every term saturated:
 * Σ idf · (k1 + 1)), so a weak best match stays weak instead of being stretched to 1 as max- or
 * min-max normalization would.
 */
export function byUpperBound(list: Scored[], upperBound: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const { id, score } of list) out.set(id, upperBound > 0 ? Math.min(1, score / upperBound) : 0);
  return out;
}

/** Cosine similarities from [floor, 1] to [0, 1]; anything below the floor is 0. */
export function cosineToUnit(list: Scored[], floor: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const { id, score } of list) out.set(id, Math.max(0, (score - floor) / (1 - floor)));
  return out;
}

export interface FusionWeights {
  /** Weight of the lexical score; the vector score gets 1 - lexical. */
  lexical: number;
}

/** Linear fusion of two normalized score maps; a document missing from one list scores 0 there. */
export function fuseLinear(
  lexical: Map<string, number>,
  vector: Map<string, number>,
  w: FusionWeights,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of new Set([...lexical.keys(), ...vector.keys()])) {
    out.set(id, w.lexical * (lexical.get(id) ?? 0) + (1 - w.lexical) * (vector.get(id) ?? 0));
  }
  return out;
}

/** Reciprocal-rank fusion (Cormack et al. 2009): Σ 1 / (k + rank), ranks from 1. */
export function fuseRrf(lists: Scored[][], k = 60): Map<string, number> {
  const out = new Map<string, number>();
  for (const list of lists) list.forEach(({ id }, i) => out.set(id, (out.get(id) ?? 0) + 1 / (k + i + 1)));
  return out;
}

// ---- Domain multipliers: each returns a factor >= 1, bounded; their product is capped too.

/** Share of the query's terms found in the title: up to +15%; the whole title equal to the query: +25%. */
export function titleMultiplier(queryTerms: string[], titleTerms: string[]): number {
  if (queryTerms.length === 0 || titleTerms.length === 0) return 1;
  const title = new Set(titleTerms);
  const covered = queryTerms.filter((t) => title.has(t)).length / queryTerms.length;
  const exact = covered === 1 && new Set(queryTerms).size === title.size;
  return exact ? 1.25 : 1 + 0.15 * covered;
}

/** The query names this item's id: +50% (id routing puts it first anyway; this keeps scores honest). */
export function idMultiplier(queryIdKey: string | undefined, itemIdKey: string): number {
  return queryIdKey !== undefined && queryIdKey === itemIdKey ? 1.5 : 1;
}

/** Epics summarize their tasks; a small lift keeps an epic above its own tasks on a tie: +5%. */
export function typeMultiplier(type: string | undefined): number {
  return type === 'epic' ? 1.05 : 1;
}

/** Optional: recently updated items up to +10%, halving every `halfLifeDays`. */
export function recencyMultiplier(updatedMs: number, nowMs: number, halfLifeDays = 30): number {
  if (!updatedMs || updatedMs > nowMs) return updatedMs > nowMs ? 1.1 : 1;
  const ageDays = (nowMs - updatedMs) / 86_400_000;
  return 1 + 0.1 * Math.pow(0.5, ageDays / halfLifeDays);
}

/** The product of the multipliers, never above `cap`. */
export function combineMultipliers(factors: number[], cap = 1.6): number {
  return Math.min(
    cap,
    factors.reduce((a, b) => a * b, 1),
  );
}
