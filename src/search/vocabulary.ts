import { boundedLevenshtein } from '@orama/orama/internals';
import type { radix } from '@orama/orama/trees';
import type { Vocabulary } from './expand.js';
import type { FieldIndex } from './field-index.js';
import type { SuggestVocabulary } from './suggest.js';
import { TEXT_FIELDS } from './types.js';

/**
 * The words the index holds, as query expansion and "did you mean" ask for them: from each text field's
 * postings (frequencies) and its radix tree (prefixes and fuzzy neighbours; the trees hold words only).
 */
export function indexVocabulary(
  fields: FieldIndex[],
  /** The radix tree of the text field at TEXT_FIELDS[i] (decoded when first asked for). */
  tree: (i: number) => radix.RadixTree,
): Vocabulary & SuggestVocabulary {
  const inFields = (mask: number | undefined) =>
    TEXT_FIELDS.map((_, i) => i).filter((i) => mask === undefined || (mask & (1 << i)) !== 0);
  const has = (term: string) => fields.some((f) => f.hasTerm(term));
  const withinEdits = (term: string, maxEdits: number) => {
    const words = new Set<string>();
    const near = (t: string, edits: number) => {
      if (edits === 0) {
        if (t !== term && has(t)) words.add(t);
        return;
      }
      for (let i = 0; i < TEXT_FIELDS.length; i++) {
        for (const w of Object.keys(tree(i).find({ term: t, exact: false, tolerance: edits }))) {
          // Orama's fuzzy find also returns every word the term is a prefix of; keep true edits only.
          if (
            w !== term &&
            Math.abs(w.length - t.length) <= edits &&
            boundedLevenshtein(t, w, edits).isBounded
          )
            words.add(w);
        }
      }
    };
    // Orama counts a swap of two adjacent letters as two edits (`lgoin` -> `login`); we count it as one:
    // each spelling with one swap undone is looked up with one edit fewer (two swaps: twice).
    const withSwaps = (t: string, edits: number) => {
      near(t, edits);
      if (edits === 0) return;
      for (let i = 0; i + 1 < t.length; i++)
        if (t[i] !== t[i + 1]) withSwaps(t.slice(0, i) + t[i + 1] + t[i] + t.slice(i + 2), edits - 1);
    };
    withSwaps(term, maxEdits);
    return [...words];
  };
  return {
    has,
    docFreq: (term) => Math.max(0, ...fields.map((f) => f.docFreq(term))),
    startingWith: (prefix, mask) => {
      const words = new Set<string>();
      for (const i of inFields(mask))
        for (const w of Object.keys(tree(i).find({ term: prefix, exact: false }))) words.add(w);
      return [...words];
    },
    withinOneEdit: (term) => withinEdits(term, 1),
    withinEdits,
  };
}
