/**
 * Words next to each other, read from a field's forward index: a document's tokens as term ids, each
 * shifted left by one, bit 0 set when the token stands at the same word position as the one before (a
 * compound's joined form, an id's parts). Phrases for the query language and adjacent pairs for the
 * proximity bonus; no text is re-read.
 */
import { popcount } from './bits.js';
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
 * Which of the word pairs `from + b`, for each bit b of `open` (at most 30 bits; the pair's term ids are
 * `firsts[from + b]` then `seconds[from + b]`), stand at consecutive positions in the sequence, as a mask
 * of those bits: one pass for all of them, stopping once all are found.
 */
export function adjacentPairs(
  seq: Uint32Array,
  firsts: readonly number[],
  seconds: readonly number[],
  open = (1 << firsts.length) - 1,
  from = 0,
): number {
  let found = 0;
  let before = 0; // pairs whose first word stands at the previous position
  let here = 0; // ... at this position
  // One pair (the usual case): its first word, compared directly.
  const only = (open & (open - 1)) === 0 ? firsts[from + 31 - Math.clz32(open)] : -1;
  for (let k = 0; k < seq.length; k++) {
    const tok = seq[k];
    const id = tok >>> 1;
    if ((before | here) === 0) {
      // Nothing under way: only a pair's first word changes anything.
      if (only >= 0) {
        if (id !== only) continue;
      } else {
        let m = open;
        while (m !== 0 && firsts[from + 31 - Math.clz32(m & -m)] !== id) m &= m - 1;
        if (m === 0) continue;
      }
    }
    if ((tok & 1) === 0) {
      before = here;
      here = 0;
    }
    for (let m = open; m !== 0; m &= m - 1) {
      const bit = m & -m;
      const i = from + 31 - Math.clz32(bit);
      if (firsts[i] === id) here |= bit;
      if (seconds[i] === id && (before & bit) !== 0) found |= bit;
    }
    if (found === open) break;
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
  /**
   * `docs` begin with the best `candidates` of them (or all), the best `shown` of those first, best
   * first (the scorer's `keep` gives them so); otherwise they are selected here.
   */
  sorted?: boolean;
}

const lower = (a: number, b: number) => a < b;

/**
 * The proximity bonus, in place: each of the best `candidates` matches gets its score multiplied by
 * 1 + weight × (the query's adjacent word pairs that stand next to each other in one of `fields` / its
 * adjacent pairs). `sequence` is the query's terms in order.
 *
 * Only what can change the shown page is checked. The best `shown` final scores so far are kept, the
 * best candidates first: a candidate that even the full bonus cannot lift above the lowest of them
 * cannot reach the page, and keeps its score unchecked. A sequence is scanned only for the pairs the
 * field's adjacency filter says it may hold, and only when they could lift its candidate that far.
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
  // Per field, each pair's term ids (-1 when the field lacks the word); pairs go 30 to a bit mask.
  const firsts = fields.map((field) => pairs.map(([a]) => field.termId(a)));
  const seconds = fields.map((field) => pairs.map(([, b]) => field.termId(b)));
  const chunks = Math.ceil(pairs.length / 30);
  const maybe = new Int32Array(fields.length * chunks); // per field and chunk: the pairs it may hold
  const found = new Int32Array(chunks);
  const best = new TopK<number>(Math.min(opts.shown, n), lower);
  const margin = 1 - 1e-12;
  for (let j = 0; j < n; j++) {
    const at = order ? order[j] : j;
    const d = docs[at];
    const score = scores[at];
    const lowest = best.full ? best.worst! : -1;
    if (score * (1 + opts.weight) < lowest * margin) continue;
    // The pairs each field may hold adjacent in this document (its adjacency filter).
    let possible = 0;
    for (let c = 0; c < chunks; c++) {
      let any = 0;
      for (let f = 0; f < fields.length; f++) {
        let mask = 0;
        if (fields[f].has(d))
          for (let i = c * 30; i < Math.min(pairs.length, c * 30 + 30); i++) {
            const a = firsts[f][i];
            const b = seconds[f][i];
            if (a >= 0 && b >= 0 && fields[f].mayBeAdjacent(d, a, b)) mask |= 1 << (i - c * 30);
          }
        maybe[f * chunks + c] = mask;
        any |= mask;
      }
      possible += popcount(any);
    }
    // No pair here, or too few to lift it into the page: its score stays as it is.
    if (score * (1 + (opts.weight * possible) / pairs.length) < lowest * margin) {
      best.offer(score);
      continue;
    }
    let count = 0;
    for (let c = 0; c < chunks; c++) {
      found[c] = 0;
      for (let f = 0; f < fields.length; f++) {
        const open = maybe[f * chunks + c] & ~found[c];
        if (open !== 0) found[c] |= adjacentPairs(fields[f].sequence(d), firsts[f], seconds[f], open, c * 30);
      }
      count += popcount(found[c]);
    }
    if (count) scores[at] = score * (1 + (opts.weight * count) / pairs.length);
    best.offer(scores[at]);
  }
}
