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
  trees: radix.RadixTree[],
): Vocabulary & SuggestVocabulary {
  const inFields = (mask: number | undefined) =>
    TEXT_FIELDS.map((_, i) => i).filter((i) => mask === undefined || (mask & (1 << i)) !== 0);
  const withinEdits = (term: string, maxEdits: number) => {
    const words = new Set<string>();
    for (const tree of trees) {
      for (const w of Object.keys(tree.find({ term, exact: false, tolerance: maxEdits }))) {
        // Orama's fuzzy find also returns every word the term is a prefix of; keep true edits only.
        if (
          w !== term &&
          Math.abs(w.length - term.length) <= maxEdits &&
          boundedLevenshtein(term, w, maxEdits).isBounded
        )
          words.add(w);
      }
    }
    return [...words];
  };
  return {
    has: (term) => fields.some((f) => f.hasTerm(term)),
    docFreq: (term) => Math.max(0, ...fields.map((f) => f.docFreq(term))),
    startingWith: (prefix, mask) => {
      const words = new Set<string>();
      for (const i of inFields(mask))
        for (const w of Object.keys(trees[i].find({ term: prefix, exact: false }))) words.add(w);
      return [...words];
    },
    withinOneEdit: (term) => withinEdits(term, 1),
    withinEdits,
  };
}
