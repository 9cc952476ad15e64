/**
 * Words next to each other, read from a field's forward index: a document's tokens as term ids, each
 * shifted left by one, bit 0 set when the token stands at the same word position as the one before (a
 * compound's joined form, an id's parts). Phrases for the query language and adjacent pairs for the
 * proximity bonus; no text is re-read.
 */
import type { FieldIndex } from './field-index.js';
import { TopK, topKIndices } from './top-k.js';

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
 *
 * Only what can change the shown page is checked. The candidates go best first, and the best `shown`
 * final scores so far are kept: once even the full bonus cannot lift a candidate above the lowest of
 * them, neither it nor any after it can reach the page, and they keep their scores unchecked. A
 * sequence is scanned only for the pairs the field's adjacency filter says it may hold, and only when
 * they could lift its candidate that far.
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
  const n = Math.min(docs.length, opts.candidates);
  if (pairs.length === 0 || n === 0 || opts.shown <= 0) return;
  const order = opts.sorted ? undefined : topKIndices(scores, docs, n);
  // Per field, each pair's term ids (-1 when the field lacks a word of it).
  const ids = fields.map((field) => pairs.map(([a, b]) => [field.termId(a), field.termId(b)] as const));
  const best = new TopK<number>(Math.min(opts.shown, n), (a, b) => a < b);
  const found = new Uint8Array(pairs.length);
  const margin = 1 - 1e-12;
  for (let j = 0; j < n; j++) {
    const at = order ? order[j] : j;
    const d = docs[at];
    const score = scores[at];
    const lowest = best.full ? best.worst! : -1;
    if (score * (1 + opts.weight) < lowest * margin) break;
    // Per field, the pairs that may stand adjacent there in this document (the adjacency filters).
    found.fill(0);
    const maybe = fields.map((field, f) => {
      const out: number[] = [];
      if (!field.has(d)) return out;
      for (let i = 0; i < pairs.length; i++) {
        const [a, b] = ids[f][i];
        if (a >= 0 && b >= 0 && field.mayBeAdjacent(d, a, b)) {
          out.push(i);
          found[i] = 1;
        }
      }
      return out;
    });
    let possible = 0;
    for (let i = 0; i < pairs.length; i++) possible += found[i];
    // Not a pair here, or not enough to lift it into the page: its score stays as it is.
    if (score * (1 + (opts.weight * possible) / pairs.length) < lowest * margin) {
      best.offer(score);
      continue;
    }
    found.fill(0);
    let count = 0;
    for (let f = 0; f < fields.length; f++) {
      const open = maybe[f].filter((i) => found[i] === 0);
      if (open.length === 0) continue;
      const seq = fields[f].sequence(d);
      for (let from = 0; from < open.length; from += 30) {
        const chunk = open.slice(from, from + 30);
        const hits = adjacentPairs(
          seq,
          chunk.map((i) => ids[f][i][0]),
          chunk.map((i) => ids[f][i][1]),
        );
        chunk.forEach((i, k) => {
          if (hits & (1 << k)) {
            found[i] = 1;
            count++;
          }
        });
      }
    }
    if (count) scores[at] = score * (1 + (opts.weight * count) / pairs.length);
    best.offer(scores[at]);
  }
}
