import { boundedLevenshtein } from '@orama/orama/internals';
import type { radix } from '@orama/orama/trees';
import type { Vocabulary } from './expand.js';
import type { FieldIndex } from './field-index.js';
import type { SuggestVocabulary } from './suggest.js';
import { TEXT_FIELDS } from './types.js';

/** Tree walks remembered per vocabulary (a few hundred queries' words). */
const MEMO_SIZE = 512;

/**
 * The words the index holds, as query expansion and "did you mean" ask for them: from each text field's
 * postings (frequencies) and its radix tree (prefixes and fuzzy neighbours; the trees hold words only).
 * The tree walks (prefixes, typos) are remembered until `version` changes (every insert or removal bumps
 * it): a word absent from a backlog is walked for in every text field of every backlog of a workspace
 * search, and again at each keystroke of the viewer's spotlight.
 */
export function indexVocabulary(
  fields: FieldIndex[],
  /** The radix tree of the text field at TEXT_FIELDS[i] (decoded when first asked for). */
  tree: (i: number) => radix.RadixTree,
  /** Changes whenever a field's words change (Bm25fState.version); without it, nothing is remembered. */
  version?: () => number,
): Vocabulary & SuggestVocabulary {
  const memo = new Map<string, string[]>();
  let memoVersion = version?.();
  // A copy each time: callers add to the lists they are given.
  const remembered = (key: string, walk: () => string[]): string[] => {
    if (!version) return walk();
    const v = version();
    if (v !== memoVersion) {
      memo.clear();
      memoVersion = v;
    }
    let words = memo.get(key);
    if (!words) {
      words = walk();
      if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
      memo.set(key, words);
    }
    return [...words];
  };
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
      for (let i = 0; i < TEXT_FIELDS.length; i++)
        for (const w of nearWords(tree(i), t, edits)) if (w !== term) words.add(w);
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
    startingWith: (prefix, mask) =>
      remembered(`p\u0000${mask ?? -1}\u0000${prefix}`, () => {
        const words = new Set<string>();
        for (const i of inFields(mask))
          for (const w of Object.keys(tree(i).find({ term: prefix, exact: false }))) words.add(w);
        return [...words];
      }),
    withinOneEdit: (term) => remembered(`e\u00001\u0000${term}`, () => withinEdits(term, 1)),
    withinEdits: (term, maxEdits) =>
      remembered(`e\u0000${maxEdits}\u0000${term}`, () => withinEdits(term, maxEdits)),
  };
}

/**
 * The words Orama's fuzzy `find({ term, tolerance: edits })` returns that are within `edits` of `term` (and
 * at most `edits` longer or shorter): the same walk over the radix tree, so the same words, without what
 * cannot add one. Orama's walk reaches one state (node, position in the term, edits left) by many paths
 * and walks on from each, walks below nodes whose word is already too long, and collects every word the
 * term begins. A query word absent from the index is looked up so in every text field of every backlog:
 * Orama's walk was most of the slowest workspace searches' time (docs/workspace.md, Cost).
 */
export function nearWords(tree: radix.RadixNode, term: string, edits: number): string[] {
  const longest = term.length + edits;
  const near = (w: string) =>
    Math.abs(w.length - term.length) <= edits && boundedLevenshtein(term, w, edits).isBounded;
  const out = new Set<string>();
  // Orama's rule first: a node whose word begins with the term gives every word below it (at most once).
  const collected = new Set<radix.RadixNode>();
  const begins = (node: radix.RadixNode): boolean => {
    if (node.w.length < term.length || !node.w.startsWith(term)) return false;
    if (collected.has(node)) return true;
    collected.add(node);
    const below = [node];
    while (below.length > 0) {
      const n = below.pop()!;
      if (n.w.length > longest) continue;
      if (n.e && near(n.w)) out.add(n.w);
      for (const c of n.c.values()) below.push(c);
    }
    return true;
  };
  // The states walked (node, position in the term, edits left), each once.
  const packed = (term.length + 1) * (edits + 1) <= 31;
  const bitsOf = new Map<radix.RadixNode, number>();
  const keys = new Set<string>();
  const first = (node: radix.RadixNode, index: number, left: number): boolean => {
    if (!packed) {
      const key = `${index}\u0000${left}\u0000${node.w}`;
      return !keys.has(key) && !!keys.add(key);
    }
    const bit = 1 << (index * (edits + 1) + left);
    const bits = bitsOf.get(node) ?? 0;
    if (bits & bit) return false;
    bitsOf.set(node, bits | bit);
    return true;
  };
  const stack: radix.RadixNode[] = [tree];
  const at: number[] = [0];
  const lefts: number[] = [edits];
  const push = (node: radix.RadixNode, index: number, left: number) => {
    // Too long for any word at or below it to be near, or (one edit) too far whatever follows.
    if (node.w.length > longest || (edits === 1 && !beginsNear(node.w, term))) return;
    stack.push(node);
    at.push(index);
    lefts.push(left);
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    const index = at.pop()!;
    const left = lefts.pop()!;
    if (begins(node) || !first(node, index, left)) continue;
    if (node.e && node.w && near(node.w)) out.add(node.w);
    if (index >= term.length) continue;
    // Orama's moves: a match, a deletion, then each child's insertion and substitution.
    const char = term[index];
    const next = node.c.get(char);
    if (next) push(next, index + 1, left);
    if (left > 0) {
      push(node, index + 1, left - 1);
      for (const [c, child] of node.c) {
        push(child, index, left - 1);
        if (c !== char) push(child, index + 1, left - 1);
      }
    } else if (node.w.length < term.length && term.startsWith(node.w)) {
      // Out of edits, the other moves only give what Orama's rule gives, which the node does not meet
      // and of its children only the one that goes on with the term can.
      const child = node.c.get(term[node.w.length]);
      if (child && child.w.length <= longest) begins(child);
    }
  }
  return [...out];
}

/** Whether some word beginning with `w` is within one edit of `term` (w is a prefix of the term, but for one edit). */
function beginsNear(w: string, term: string): boolean {
  let p = 0;
  while (p < w.length && w[p] === term[p]) p++;
  if (p === w.length) return true;
  const rest = w.slice(p + 1);
  // w[p] replaced, w[p] one too many, or term[p] missing from w.
  return term.startsWith(rest, p + 1) || term.startsWith(rest, p) || term.startsWith(w.slice(p), p + 1);
}
