/**
 * Query-term expansion: which other indexed words count for a query word, and how much. Whole words
 * always count 1; expansions count less, so a whole-word match ranks above a partial or a typo.
 */
import type { QueryTermGroup, TermAlternative } from './score.js';
import type { QueryWord } from './tokenizer.js';

export interface Vocabulary {
  /** The term is indexed in at least one field. */
  has(term: string): boolean;
  /** Documents containing the term (largest over the fields): picks the most useful expansions. */
  docFreq(term: string): number;
  /** Indexed words starting with `prefix`, in the fields of the mask (all when absent). */
  startingWith(prefix: string, fields?: number): string[];
  /** Indexed words at edit distance exactly 1 from `term`. */
  withinOneEdit(term: string): string[];
}

export const EXPANSION = {
  /** A query word that begins a tag or an author's name ("auto" -> automation, "ali" -> Alice). */
  partialWeight: 0.5,
  minPartialLength: 2,
  /** A word not in the index completed to indexed words ("authen" -> authentication). */
  completionWeight: 0.5,
  minCompletionLength: 3,
  /** Chinese and Japanese words are one to four characters: two already say something ("北京" -> 北京大学). */
  minCompletionLengthCjk: 2,
  /** A word typed without marks matching the folded twin of a spelling with marks (`ban` -> bán, bàn). */
  foldedWeight: 0.5,
  /** A word not in the index matched at edit distance 1 ("sesion" -> session); 5+ characters, no digits. */
  typoWeight: 0.4,
  minTypoLength: 5,
  /** Most expansions kept per query word (the most frequent win). */
  maxAlternatives: 30,
};

/** Numbers and ids (anything with a digit) are never expanded: "596" must not match "56" or "5961". */
// Made on first use, as the other Unicode property escapes (search/tokenizer.ts: compiled when first evaluated).
let hasDigit: RegExp | undefined;
/**
 * Scripts whose words are never matched at one edit: a Chinese or Japanese word is one to four
 * characters and one changed character is another word; a Hangul syllable or a Thai word is the same.
 */
const NO_TYPOS = new Set(['han', 'kana', 'hangul', 'thai']);
const CJK = new Set(['han', 'kana']);

function capByFrequency(alts: TermAlternative[], vocab: Vocabulary): TermAlternative[] {
  if (alts.length <= EXPANSION.maxAlternatives) return alts;
  return alts
    .map((a) => ({ a, df: vocab.docFreq(a.term) }))
    .sort((x, y) => y.df - x.df || (x.a.term < y.a.term ? -1 : 1))
    .slice(0, EXPANSION.maxAlternatives)
    .map((x) => x.a);
}

/**
 * The group for one query word (QueryWord: its terms in each language of the index, already
 * normalized, e.g. stemmed). `surface` is the word as typed, lower-cased and folded but not stemmed,
 * when the term came from a single word; completions use it because the index holds stems
 * (`implementa` is completed through the stem `implement`).
 */
export function termGroup(
  word: Pick<QueryWord, 'term'> & Partial<QueryWord>,
  fields: number | undefined,
  partialFields: number,
  vocab: Vocabulary,
  /** A word another index searched with this one has is no typo (SearchRequest.knownElsewhere). */
  knownElsewhere?: (term: string) => boolean,
): QueryTermGroup {
  const { term, surface } = word;
  const alternatives: TermAlternative[] = (word.alternatives ?? [term]).map((t) => ({
    term: t,
    weight: 1,
    fields,
  }));
  if ((hasDigit ??= /\p{N}/u).test(term)) return { alternatives };
  const seen = new Set(alternatives.map((a) => a.term));
  const add = (words: string[], weight: number, mask: number | undefined) => {
    const fresh: TermAlternative[] = [];
    for (const w of words) {
      if (seen.has(w)) continue;
      seen.add(w);
      fresh.push({ term: w, weight, fields: mask });
    }
    alternatives.push(...capByFrequency(fresh, vocab));
  };

  if (word.folded) add(word.folded.filter(vocab.has), EXPANSION.foldedWeight, fields);

  const partialMask = fields === undefined ? partialFields : fields & partialFields;
  if (partialMask && term.length >= EXPANSION.minPartialLength)
    add(vocab.startingWith(term, partialMask), EXPANSION.partialWeight, partialMask);

  if (!alternatives.some((a) => vocab.has(a.term) || knownElsewhere?.(a.term))) {
    const prefix = surface ?? term;
    const cjk = word.script !== undefined && CJK.has(word.script);
    if (prefix.length >= (cjk ? EXPANSION.minCompletionLengthCjk : EXPANSION.minCompletionLength)) {
      const words = vocab.startingWith(prefix, fields);
      // Stems the typed word starts with: `implementa` -> `implement`.
      for (let k = prefix.length - 1; k >= Math.max(4, prefix.length - 3); k--)
        if (vocab.has(prefix.slice(0, k))) words.push(prefix.slice(0, k));
      add(words, EXPANSION.completionWeight, fields);
    }
    const typos = word.script === undefined || !NO_TYPOS.has(word.script);
    if (typos && term.length >= EXPANSION.minTypoLength)
      add(vocab.withinOneEdit(term), EXPANSION.typoWeight, fields);
  }
  return { alternatives };
}

/** The group for an explicit `prefix*`: every indexed word starting with it, all counting fully. */
export function prefixGroup(
  prefix: string,
  fields: number | undefined,
  vocab: Vocabulary,
): QueryTermGroup | null {
  if (!prefix) return null;
  const words = vocab.startingWith(prefix, fields);
  // A prefix typed without marks also completes words written with them (their folded twins: `cafe*`, café).
  if (/^[\p{ASCII}]+$/u.test(prefix)) words.push(...vocab.startingWith(`~${prefix}`, fields));
  if (words.length === 0) return null;
  return {
    alternatives: capByFrequency(
      words.map((term) => ({ term, weight: 1, fields })),
      { ...vocab, docFreq: vocab.docFreq },
    ),
  };
}
