/**
 * Ranking metrics as BEIR computes them with pytrec_eval (trec_eval): `ranked` is the system's ranking (best
 * first; an id repeated later in the list is ignored), `rels` the query's qrels (corpus id -> score; score > 0
 * means relevant). All return 0 when the query has no relevant document.
 */

/** Ids from `ranked` in order, each once, at most `k`. */
function topK(ranked: string[], k: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of ranked) {
    if (out.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

/**
 * nDCG@k with graded gain = qrel score (not 2^score - 1) and discount log2(rank + 1), normalized by the DCG of
 * the ideal ranking of all judged documents (scores > 0, highest first, cut at k). Same as trec_eval's
 * `ndcg_cut.k`, which BEIR reports as NDCG@k.
 */
export function ndcgAtK(ranked: string[], rels: Map<string, number>, k: number): number {
  let dcg = 0;
  topK(ranked, k).forEach((id, i) => {
    const rel = rels.get(id) ?? 0;
    if (rel > 0) dcg += rel / Math.log2(i + 2);
  });
  const ideal = [...rels.values()]
    .filter((r) => r > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  let idcg = 0;
  ideal.forEach((rel, i) => (idcg += rel / Math.log2(i + 2)));
  return idcg > 0 ? dcg / idcg : 0;
}

/** Recall@k: relevant documents in the top k divided by all relevant documents of the query. */
export function recallAtK(ranked: string[], rels: Map<string, number>, k: number): number {
  let relevant = 0;
  for (const r of rels.values()) if (r > 0) relevant++;
  if (relevant === 0) return 0;
  const found = topK(ranked, k).filter((id) => (rels.get(id) ?? 0) > 0).length;
  return found / relevant;
}

/** MRR@k (reciprocal rank): 1 / rank of the first relevant document in the top k, 0 if none. */
export function mrrAtK(ranked: string[], rels: Map<string, number>, k: number): number {
  const top = topK(ranked, k);
  const i = top.findIndex((id) => (rels.get(id) ?? 0) > 0);
  return i < 0 ? 0 : 1 / (i + 1);
}

/**
 * The p-th percentile (0-100) by the **nearest-rank** method: the smallest value such that at least p% of the
 * values are <= it, i.e. sorted[ceil(p/100 * n) - 1] (p = 0 gives the minimum). Always one of the values.
 * The input need not be sorted and is not modified. Returns NaN for an empty list.
 */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((Math.min(100, Math.max(0, p)) * sorted.length) / 100));
  return sorted[rank - 1];
}
