/**
 * How far any fusion of two ranked lists could go, for judging a fusion target before tuning for it.
 *
 * A fusion that is monotone in both scores (linear with any weights, reciprocal-rank, min-max or z-score
 * normalized, even with weights picked per query in hindsight) must rank a document below every document
 * that beats it in both lists. So a relevant document's best possible rank is 1 + the number of
 * non-relevant documents that dominate it (at least as good in both lists and better in one; a document
 * missing from a list counts as below everything in it). The nDCG@k of those best ranks bounds the
 * nDCG@k of every such fusion.
 */
import type { Scored } from '../search/fusion.js';

/** Best nDCG@k reachable by a monotone fusion of `a` and `b` for one query (`rels`: id -> gain). */
export function monotoneFusionBound(a: Scored[], b: Scored[], rels: Map<string, number>, k: number): number {
  const sa = new Map(a.map((h) => [h.id, h.score]));
  const sb = new Map(b.map((h) => [h.id, h.score]));
  const ids = new Set([...sa.keys(), ...sb.keys()]);
  const of = (m: Map<string, number>, id: string) => m.get(id) ?? -Infinity;
  const relevant = [...rels].filter(([, g]) => g > 0);
  const earliest = relevant
    .map(([id, gain]) => {
      const [x, y] = [of(sa, id), of(sb, id)];
      if (x === -Infinity && y === -Infinity) return { gain, rank: Infinity };
      let rank = 1;
      for (const other of ids) {
        if ((rels.get(other) ?? 0) > 0) continue;
        const [p, q] = [of(sa, other), of(sb, other)];
        if (p >= x && q >= y && (p > x || q > y)) rank++;
      }
      return { gain, rank };
    })
    .sort((u, v) => u.rank - v.rank || v.gain - u.gain);
  // Relevant documents cannot share a rank: each takes the first free one at or after its earliest.
  let dcg = 0;
  let next = 1;
  for (const { gain, rank } of earliest) {
    const at = Math.max(rank, next);
    if (at > k) break;
    dcg += gain / Math.log2(at + 1);
    next = at + 1;
  }
  const ideal = relevant
    .map(([, g]) => g)
    .sort((u, v) => v - u)
    .slice(0, k)
    .reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}
