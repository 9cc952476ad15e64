/**
 * How far any fusion of two ranked lists could go, for judging a fusion target before tuning for it.
 *
 * A fusion that is monotone in both lists (linear with any weights, reciprocal-rank, min-max or z-score
 * normalized, even with weights picked per query in hindsight) must rank a document below every document
 * that beats it in both lists. So a relevant document's best possible rank is 1 + the number of
 * non-relevant documents that dominate it. The nDCG@k of those best ranks bounds the nDCG@k of every such
 * fusion.
 *
 * "Beats" has to hold for score fusions and rank fusions alike: at least as good in score and no later in
 * position in each list, and better in one. Rank fusions break a score tie by position, so two documents
 * tied on score in a list do not order each other there. A document missing from a list is below
 * everything in it.
 */
import type { Scored } from '../search/fusion.js';

interface Placed {
  score: number;
  position: number;
}

const MISSING: Placed = { score: -Infinity, position: Infinity };

function placements(list: Scored[]): Map<string, Placed> {
  return new Map(list.map((h, position) => [h.id, { score: h.score, position }]));
}

/** `u` is at least as good as `v` in this list by score and by position. */
function notWorse(u: Placed, v: Placed): boolean {
  return u.score >= v.score && u.position <= v.position;
}

/** `u` is better than `v` in this list by score and by position. */
function better(u: Placed, v: Placed): boolean {
  return u.score > v.score && u.position < v.position;
}

/** `u` dominates `v`: not worse in either list, better in one. */
function dominates(ua: Placed, ub: Placed, va: Placed, vb: Placed): boolean {
  return notWorse(ua, va) && notWorse(ub, vb) && (better(ua, va) || better(ub, vb));
}

/** Best nDCG@k reachable by a monotone fusion of `a` and `b` for one query (`rels`: id -> gain). */
export function monotoneFusionBound(a: Scored[], b: Scored[], rels: Map<string, number>, k: number): number {
  const pa = placements(a);
  const pb = placements(b);
  const ids = new Set([...pa.keys(), ...pb.keys()]);
  const at = (m: Map<string, Placed>, id: string) => m.get(id) ?? MISSING;
  const relevant = [...rels].filter(([, g]) => g > 0);
  const earliest = relevant
    .map(([id, gain]) => {
      const [x, y] = [at(pa, id), at(pb, id)];
      if (x === MISSING && y === MISSING) return { gain, rank: Infinity };
      let rank = 1;
      for (const other of ids) {
        if ((rels.get(other) ?? 0) > 0) continue;
        if (dominates(at(pa, other), at(pb, other), x, y)) rank++;
      }
      return { gain, rank };
    })
    .sort((u, v) => u.rank - v.rank || v.gain - u.gain);
  // Relevant documents cannot share a rank: each takes the first free one at or after its earliest.
  let dcg = 0;
  let next = 1;
  for (const { gain, rank } of earliest) {
    const place = Math.max(rank, next);
    if (place > k) break;
    dcg += gain / Math.log2(place + 1);
    next = place + 1;
  }
  const ideal = relevant
    .map(([, g]) => g)
    .sort((u, v) => v - u)
    .slice(0, k)
    .reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}
