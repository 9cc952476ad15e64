/**
 * Words next to each other, read from a field's forward index: a document's tokens as term ids, each
 * shifted left by one, bit 0 set when the token stands at the same word position as the one before (a
 * compound's joined form, an id's parts). Phrases for the query language and adjacent pairs for the
 * proximity bonus; no text is re-read.
 */
import type { FieldIndex } from './field-index.js';
import { topKIndices } from './top-k.js';

/**
 * Whether the term ids occur at consecutive positions in the sequence: one pass, tracking which
 * prefixes of the phrase end at the current position (a bit per phrase word).
 */
export function hasPhrase(seq: Uint32Array, phrase: readonly number[]): boolean {
  const m = phrase.length;
  if (m === 0) return false;
  if (m > 30) return hasLongPhrase(seq, phrase);
  const full = 1 << (m - 1);
  const first = phrase[0];
  let before = 0; // prefixes ending at the previous position
  let here = 0; // prefixes ending at this position
  for (let k = 0; k < seq.length; k++) {
    const tok = seq[k];
    const id = tok >>> 1;
    // Nothing under way: only the phrase's first word changes anything.
    if ((before | here) === 0 && id !== first) continue;
    if ((tok & 1) === 0) {
      before = here;
      here = 0;
    }
    if (id === first) here |= 1;
    if (before !== 0) {
      for (let j = 1; j < m; j++) if (phrase[j] === id && (before & (1 << (j - 1))) !== 0) here |= 1 << j;
    }
    if ((here & full) !== 0) return true;
  }
  return false;
}

/** hasPhrase for more words than bits: positions of each word, then every start checked. */
function hasLongPhrase(seq: Uint32Array, phrase: readonly number[]): boolean {
  const at = new Map<number, Set<number>>();
  for (const id of phrase) at.set(id, new Set());
  let pos = -1;
  for (let k = 0; k < seq.length; k++) {
    const tok = seq[k];
    if ((tok & 1) === 0) pos++;
    at.get(tok >>> 1)?.add(pos);
  }
  const sets = phrase.map((id) => at.get(id)!);
  for (const p of sets[0]) if (sets.every((s, j) => s.has(p + j))) return true;
  return false;
}

/**
 * Which of the word pairs (term ids `firsts[i]` then `seconds[i]`, at most 30) stand at consecutive
 * positions in the sequence, as a bit mask: one pass for every pair, stopping once all are found.
 */
export function adjacentPairs(
  seq: Uint32Array,
  firsts: readonly number[],
  seconds: readonly number[],
): number {
  const m = firsts.length;
  const all = m >= 31 ? -1 : (1 << m) - 1;
  let found = 0;
  let before = 0; // pairs whose first word stands at the previous position
  let here = 0; // ... at this position
  for (let k = 0; k < seq.length; k++) {
    const tok = seq[k];
    const id = tok >>> 1;
    if ((before | here) === 0) {
      // Nothing under way: only a pair's first word changes anything.
      let i = 0;
      while (i < m && firsts[i] !== id) i++;
      if (i === m) continue;
    }
    if ((tok & 1) === 0) {
      before = here;
      here = 0;
    }
    for (let i = 0; i < m; i++) {
      if (firsts[i] === id) here |= 1 << i;
      if (seconds[i] === id && (before & (1 << i)) !== 0) found |= 1 << i;
    }
    if ((found & all) === all) break;
  }
  return found;
}

/** Documents among `candidates` in which `terms` occur at consecutive positions (a phrase) in the field. */
export function phraseDocs(
  field: FieldIndex,
  terms: readonly string[],
  candidates: Iterable<number>,
): Set<number> {
  const found = new Set<number>();
  const ids = terms.map((t) => field.termId(t));
  if (ids.length === 0 || ids.some((id) => id < 0)) return found;
  const distinct = [...new Set(ids)];
  for (const d of candidates) {
    // A candidate may have the words in different fields: binary searches in this field's postings
    // rule those out before its sequence is scanned.
    if (field.has(d) && distinct.every((id) => field.hasTermIn(d, id)) && hasPhrase(field.sequence(d), ids))
      found.add(d);
  }
  return found;
}

export interface ProximityOptions {
  /** Up to this share more for a match in which every adjacent pair of the query stands adjacent. */
  weight: number;
  /** The best matches re-ranked (the rest keep their order below them). */
  candidates: number;
  /** How many of the best the caller shows (offset + limit); Infinity when it shows more (groups). */
  shown: number;
  /** `docs` are already best first. */
  sorted?: boolean;
}

/**
 * The proximity bonus, in place: each of the best `candidates` matches gets its score multiplied by
 * 1 + weight × (the query's adjacent word pairs that stand next to each other in one of `fields` / its
 * adjacent pairs). `sequence` is the query's terms in order.
 */
export function rewardProximity(
  /** Where adjacency counts, shortest first (title, then body): a pair found in one is not sought in the next. */
  fields: FieldIndex[],
  sequence: readonly string[],
  docs: number[],
  scores: number[],
  opts: ProximityOptions,
): void {
  const pairs: [string, string][] = [];
  for (let i = 1; i < sequence.length; i++)
    if (sequence[i] !== sequence[i - 1]) pairs.push([sequence[i - 1], sequence[i]]);
  if (pairs.length === 0) return;
  const n = Math.min(docs.length, opts.candidates);
  const candidates = opts.sorted ? Array.from({ length: n }, (_, i) => i) : topKIndices(scores, docs, n);
  // A candidate that cannot reach the shown page even with the full bonus keeps its score unchecked:
  // the answer is the same, and most queries scan a third of the bodies.
  const floor =
    opts.shown < candidates.length
      ? (scores[candidates[opts.shown - 1]] / (1 + opts.weight)) * (1 - 1e-12)
      : -1;
  const top = candidates.filter((at) => scores[at] >= floor);
  // Per candidate, the pairs found adjacent (a bit per pair, 30 pairs at a time).
  const adjacent = new Array<number>(top.length * pairs.length).fill(0);
  for (const field of fields) {
    const ids = pairs
      .map(([a, b], i) => ({ i, a: field.termId(a), b: field.termId(b) }))
      .filter((p) => p.a >= 0 && p.b >= 0);
    for (let from = 0; from < ids.length; from += 30) {
      const chunk = ids.slice(from, from + 30);
      const firsts = chunk.map((p) => p.a);
      const seconds = chunk.map((p) => p.b);
      top.forEach((at, j) => {
        const d = docs[at];
        const row = j * pairs.length;
        // Scanned only when a pair not found in an earlier field (the title) has both its words here
        // (binary searches in the postings).
        if (
          !field.has(d) ||
          !chunk.some((p) => adjacent[row + p.i] === 0 && field.hasTermIn(d, p.a) && field.hasTermIn(d, p.b))
        )
          return;
        const found = adjacentPairs(field.sequence(d), firsts, seconds);
        chunk.forEach((p, k) => {
          if (found & (1 << k)) adjacent[row + p.i] = 1;
        });
      });
    }
  }
  top.forEach((at, j) => {
    let n = 0;
    for (let i = 0; i < pairs.length; i++) n += adjacent[j * pairs.length + i];
    if (n) scores[at] *= 1 + (opts.weight * n) / pairs.length;
  });
}
