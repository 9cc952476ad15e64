import type { Vocabulary } from './expand.js';
import type { QueryWord } from './tokenizer.js';

/** A vocabulary that can also list the words a few edits away. */
export interface SuggestVocabulary extends Pick<Vocabulary, 'has' | 'docFreq' | 'startingWith'> {
  /** Indexed words at most `maxEdits` edits from `term` (not the term itself). */
  withinEdits(term: string, maxEdits: number): string[];
}

/** An indexed term that stands in for a query word no field indexes. */
export interface Correction {
  /** The word as the query wrote it (folded). */
  word: string;
  /** The indexed term to use instead; null when none is near (the word is not in the backlog). */
  term: string | null;
}

export const SUGGEST = {
  /** Edits a misspelt word may be from the term that replaces it. */
  maxEdits: 2,
  /** Words shorter than this get one edit at most. */
  twoEditsFrom: 6,
  /** Shorter words have too many neighbours to guess from. */
  minLength: 3,
  /** Words of a query looked at (a long query of unknown words is not a typo, and each costs a fuzzy walk). */
  maxWords: 8,
};

/** Scripts in which a word a letter or two away is likely a typo (not the case for CJK or Thai). */
const TYPO_SCRIPTS = new Set(['latin', 'cyrillic', 'greek']);

/**
 * "Did you mean": for each query word that no field indexes, the nearest indexed term (fewest edits,
 * then the same first letter, then the most documents), else the most frequent term the word begins;
 * `term` is null when there is none. Numbers and ids are exact by nature and are left alone, as are
 * the words the index has.
 */
export function correctWords(words: readonly QueryWord[], vocab: SuggestVocabulary): Correction[] {
  const out: Correction[] = [];
  for (const w of words.slice(0, SUGGEST.maxWords)) {
    const word = w.surface ?? w.term;
    if (word.length < SUGGEST.minLength || /\p{N}/u.test(word) || !TYPO_SCRIPTS.has(w.script)) continue;
    if (w.alternatives.some((t) => vocab.has(t))) continue;
    const byDocs = (terms: string[]) =>
      terms.map((t) => ({ t, df: vocab.docFreq(t) })).sort((a, b) => b.df - a.df)[0]?.t;
    const near = vocab
      .withinEdits(w.term, editsAllowed(w.term))
      .filter((t) => closeEnough(w.term, t))
      .map((t) => ({ t, d: swapDistance(w.term, t) }));
    const fewest = Math.min(...near.map((n) => n.d));
    const term =
      byDocs(near.filter((n) => n.d === fewest).map((n) => n.t)) ?? byDocs(vocab.startingWith(w.term));
    out.push({ word, term: term ?? null });
  }
  return out;
}

/** One edit in a short word, two in a long one (as Elasticsearch's AUTO fuzziness). */
function editsAllowed(word: string): number {
  return word.length >= SUGGEST.twoEditsFrom ? SUGGEST.maxEdits : 1;
}

/**
 * `candidate` may be what `typed` meant: few enough edits for its length, and a second edit only when
 * the first letter stands (typos there are rare, and `account` is not a typo of `count`).
 */
export function closeEnough(typed: string, candidate: string): boolean {
  const d = swapDistance(typed, candidate);
  return d <= editsAllowed(typed) && (d <= 1 || typed[0] === candidate[0]);
}

/** Edit distance where swapping two adjacent letters is one edit (optimal string alignment). */
export function swapDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}
