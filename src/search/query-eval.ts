/**
 * Evaluates a raw-query AST (query-parser.ts) against the index: each leaf is scored with BM25F,
 * then leaves combine as sets. Scores add up (a document matching more of the query ranks higher);
 * NOT and field filters (`status:`, `type:`) only include or exclude.
 */
import type { QueryField, QueryNode } from './query-parser.js';
import type { QueryTermGroup, ScoredDocs } from './score.js';
import type { QueryWord } from './tokenizer.js';

/** Matching documents (internal ids) with their score and matched-field mask. */
export type Matches = Map<number, { score: number; mask: number }>;

/** What evaluation needs from the index. */
export interface QueryContext {
  /** The words of a piece of text, each with its terms in the index's languages. */
  words(text: string): readonly QueryWord[];
  /** Query terms of a piece of text, in order, repeats kept (for phrases): one sequence per language. */
  sequences(text: string): readonly (readonly string[])[];
  /** Bit mask of the text fields a query field searches; undefined = all text fields. */
  fieldMask(field: QueryField | undefined): number | undefined;
  /** The group for one query word: its terms plus partial and typo expansions. */
  termGroup(word: QueryWord, fields: number | undefined): QueryTermGroup;
  /** The group for `prefix*`: every indexed word starting with it (null when there is none). */
  prefixGroup(prefix: string, fields: number | undefined): QueryTermGroup | null;
  score(groups: QueryTermGroup[], conjunctive: boolean): ScoredDocs;
  /** The candidates in which `terms` occur in this order, next to each other, in an allowed field. */
  phraseFilter(
    candidates: ArrayLike<number> & Iterable<number>,
    terms: readonly string[],
    fields: number | undefined,
  ): Set<number>;
  /** Documents whose `status` / `type` equals the value (case-insensitive). */
  docsWithValue(field: 'status' | 'type', value: string): Set<number>;
  /** Every document that passes the request's filters. */
  universe(): number[];
}

function fromScored(s: ScoredDocs, keep?: Set<number>): Matches {
  const m: Matches = new Map();
  s.docs.forEach((d, i) => {
    if (!keep || keep.has(d)) m.set(d, { score: s.scores[i], mask: s.fieldMasks[i] });
  });
  return m;
}

function fromSet(docs: Iterable<number>): Matches {
  const m: Matches = new Map();
  for (const d of docs) m.set(d, { score: 0, mask: 0 });
  return m;
}

function union(parts: Matches[]): Matches {
  const out: Matches = new Map();
  for (const p of parts) {
    for (const [d, v] of p) {
      const cur = out.get(d);
      out.set(d, cur ? { score: cur.score + v.score, mask: cur.mask | v.mask } : { ...v });
    }
  }
  return out;
}

function intersect(parts: Matches[]): Matches {
  if (parts.length === 0) return new Map();
  const [first, ...rest] = [...parts].sort((a, b) => a.size - b.size);
  const out: Matches = new Map();
  for (const [d, v] of first) {
    let score = v.score;
    let mask = v.mask;
    let all = true;
    for (const p of rest) {
      const o = p.get(d);
      if (!o) {
        all = false;
        break;
      }
      score += o.score;
      mask |= o.mask;
    }
    if (all) out.set(d, { score, mask });
  }
  return out;
}

/** Every document of any part, with its best score there. */
function best(parts: Matches[]): Matches {
  const out: Matches = new Map();
  for (const p of parts)
    for (const [d, v] of p) {
      const cur = out.get(d);
      if (!cur || v.score > cur.score) out.set(d, cur ? { score: v.score, mask: cur.mask | v.mask } : v);
    }
  return out;
}

function exclude(base: Matches, excluded: Matches[]): Matches {
  if (excluded.length === 0) return base;
  const out: Matches = new Map();
  for (const [d, v] of base) if (!excluded.some((e) => e.has(d))) out.set(d, v);
  return out;
}

/** Leaves that only include or exclude: `-x`, `NOT x`, `status:done`, `type:epic`. */
function isConstraint(node: QueryNode): boolean {
  return (
    node.kind === 'not' ||
    ((node.kind === 'term' || node.kind === 'phrase') && (node.field === 'status' || node.field === 'type'))
  );
}

/**
 * Evaluates `node`. Returns null for a neutral node (a leaf of stop-words only), which its parent
 * ignores. `conjunctive` turns adjacency into AND. A leaf written more than once (`a* OR a* OR ...`) is
 * scored once: `memo` holds each leaf's matches for the whole query.
 */
export function evaluateQuery(
  node: QueryNode,
  ctx: QueryContext,
  conjunctive: boolean,
  memo: Map<string, Matches | null> = new Map(),
): Matches | null {
  if (node.kind === 'term' || node.kind === 'phrase' || node.kind === 'prefix') {
    const key = `${node.kind}\u0000${node.field ?? ''}\u0000${node.text}`;
    if (!memo.has(key)) memo.set(key, evaluateLeaf(node, ctx));
    return memo.get(key)!;
  }
  const evaluate = (n: QueryNode) => evaluateQuery(n, ctx, conjunctive, memo);
  switch (node.kind) {
    case 'not': {
      const inner = evaluate(node.child);
      return inner ? exclude(fromSet(ctx.universe()), [inner]) : null;
    }
    case 'or': {
      const parts = node.children.map(evaluate).filter((m): m is Matches => m !== null);
      return parts.length ? union(parts) : null;
    }
    case 'and':
    case 'implicit': {
      const constraints = node.children.filter(isConstraint);
      const scoring = node.children.filter((c) => !isConstraint(c));
      const positive = scoring.map(evaluate).filter((m): m is Matches => m !== null);
      const excluded: Matches[] = [];
      const required: Matches[] = [];
      for (const c of constraints) {
        if (c.kind === 'not') {
          const inner = evaluate(c.child);
          if (inner) excluded.push(inner);
        } else {
          const m = evaluate(c);
          if (m) required.push(m);
        }
      }
      if (positive.length === 0 && required.length === 0 && excluded.length === 0) return null;
      const combined =
        positive.length === 0
          ? null
          : node.kind === 'and' || conjunctive
            ? intersect(positive)
            : union(positive);
      const base = combined
        ? required.length
          ? intersect([combined, ...required])
          : combined
        : required.length
          ? intersect(required)
          : fromSet(ctx.universe());
      return exclude(base, excluded);
    }
  }
}

function evaluateLeaf(
  node: Extract<QueryNode, { kind: 'term' | 'phrase' | 'prefix' }>,
  ctx: QueryContext,
): Matches | null {
  switch (node.kind) {
    case 'term':
    case 'phrase': {
      if (node.field === 'status' || node.field === 'type')
        return fromSet(ctx.docsWithValue(node.field, node.text.trim()));
      const fields = ctx.fieldMask(node.field);
      const words = ctx.words(node.text);
      if (words.length === 0) return null;
      if (words.length === 1 && node.kind === 'term')
        return fromScored(ctx.score([ctx.termGroup(words[0], fields)], false));
      // A phrase, or one written word that analyzes to several terms (`rate-limit`, `同期処理`): all
      // terms, in order, in any one of the index's languages.
      const found: Matches[] = [];
      for (const terms of ctx.sequences(node.text)) {
        if (terms.length === 0) continue;
        const groups = [...new Set(terms)].map((t) => ({ alternatives: [{ term: t, weight: 1, fields }] }));
        const candidates = ctx.score(groups, true);
        found.push(fromScored(candidates, ctx.phraseFilter(candidates.docs, terms, fields)));
      }
      return found.length === 1 ? found[0] : best(found);
    }
    case 'prefix': {
      const group = ctx.prefixGroup(node.text, ctx.fieldMask(node.field));
      return group ? fromScored(ctx.score([group], false)) : new Map();
    }
  }
}
