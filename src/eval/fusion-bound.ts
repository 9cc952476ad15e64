/**
 * How far any fusion of two ranked lists could go, for judging a fusion target before tuning for it.
 *
 * Take any fusion that is strictly increasing in each list's score (linear at any weight strictly between
 * 0 and 1, on raw, max- or min-max-normalized scores, even with the weight picked per query in hindsight)
 * or strictly decreasing in each list's rank (reciprocal-rank fusion). It must rank a document below every
 * document that beats it in both lists, whatever order it gives ties. So a relevant document's best
 * possible rank is 1 + the number of non-relevant documents that beat it, and the nDCG@k of those best
 * ranks bounds the nDCG@k of every such fusion.
 *
 * "Beats" has to hold for score and rank fusions alike: at least as good in score and no later in
 * position in each list, and better in both senses in one. Rank fusions break a score tie by position, so
 * two documents tied on score do not order each other there. A document missing from a list is after
 * every position in it and scores as its last one: min-max fusion gives a missing document 0, the same as
 * the list's last. (Z-score normalization with 0 for missing is not covered: 0 is above the list's mean.)
 */
import type { Scored } from '../search/fusion.js';

interface Placed {
  score: number;
  position: number;
}

interface List {
  placed: Map<string, Placed>;
  /** Where a document missing from the list stands: after everything, scoring as the last. */
  missing: Placed;
}

function placements(list: Scored[]): List {
  const lowest = list.reduce((lo, h) => Math.min(lo, h.score), Infinity);
  return {
    placed: new Map(list.map((h, position) => [h.id, { score: h.score, position }])),
    missing: { score: lowest, position: Infinity },
  };
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
  const ids = new Set([...pa.placed.keys(), ...pb.placed.keys()]);
  const at = (l: List, id: string) => l.placed.get(id) ?? l.missing;
  const relevant = [...rels].filter(([, g]) => g > 0);
  const earliest = relevant
    .map(([id, gain]) => {
      if (!pa.placed.has(id) && !pb.placed.has(id)) return { gain, rank: Infinity };
      const [x, y] = [at(pa, id), at(pb, id)];
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
