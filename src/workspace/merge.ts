/**
 * One search over several backlogs: each backlog answers with its own filters and its own index (its
 * corpus statistics rank its own documents), then the answers are merged here. How scores compare across
 * backlogs (docs/workspace.md measures both on the judged dev set):
 *  - `bound` (default): a bm25 score over its backlog's upper bound for the query (the best score any of
 *    its documents could reach: every query term saturated), so a document that matches the query weakly
 *    stays weak whichever backlog it is in; hybrid scores are already on that scale (hybrid.ts).
 *    A query word the backlog does not have counts in its bound at the idf of a word no document has:
 *    LexicalIndex.upperBound leaves such words out, which would let a small backlog's match of the
 *    query's common words alone score as if it matched the whole query.
 *  - `rrf`: reciprocal-rank fusion of the per-backlog lists (as backlog-mcp fuses its homes).
 *  - `shared`: each backlog's index scores with the corpus statistics of every backlog in scope (N and each
 *    term's document frequency summed; each field's average length stays its own), so a word weighs the
 *    same in every backlog and a copy of a document scores about as its original; then as `bound`, whose
 *    bound is then the same for every backlog. Scoped to one backlog, its own statistics: as alone.
 */
import { idf } from '../search/bm25.js';
import type { OramaSearchService } from '../search/orama-search-service.js';
import type { OutsideStats } from '../search/score.js';
import type { SearchResult } from '../search/types.js';

export const WORKSPACE_FUSIONS = ['bound', 'shared', 'rrf'] as const;
/** `once` (default): collapseVersions; `apart`: each project's copy of a document is a result. */
export const WORKSPACE_VERSIONS = ['once', 'apart'] as const;
export type WorkspaceVersions = (typeof WORKSPACE_VERSIONS)[number];
export type WorkspaceFusion = (typeof WORKSPACE_FUSIONS)[number];

/** RRF's k (Cormack et al. 2009). */
const RRF_K = 60;

/** A result of one backlog, with what the merge orders it by. */
export interface Ranked<T = SearchResult> {
  project: number;
  rank: number;
  key: number;
  result: T;
}

/**
 * The merge key of each result of one backlog's list: `upperBound` is that backlog's bound for the query
 * (bm25 only; 0 when the mode was not bm25), `routed` the id the query names in that backlog (first).
 */
export function rankList<T extends { id: string; score?: number }>(
  project: number,
  results: T[],
  fusion: WorkspaceFusion,
  opts: { upperBound: number; routed?: string; recentMs?: (id: string) => number },
): Ranked<T>[] {
  return results.map((result, rank) => {
    let key: number;
    if (opts.recentMs) key = opts.recentMs(result.id);
    else {
      const score = result.score ?? 0;
      key = fusion === 'rrf' ? 1 / (RRF_K + rank + 1) : opts.upperBound > 0 ? score / opts.upperBound : score;
      // The item the query names by id leads its own list; it leads the merged one too.
      if (rank === 0 && opts.routed !== undefined && result.id === opts.routed) key += 1_000;
    }
    return { project, rank, key, result };
  });
}

/** A place in the merged order, with the versions of the same document in other projects it stands for. */
export type Collapsed<T> = Ranked<T> & { also?: Ranked<T>[] };

/**
 * One document in several projects (a file copied between repositories, whole or cut short, or an older
 * copy that the other grew from) takes one place in the merged order: the better-ranked copy's place,
 * shown as the fuller version. `key` groups the candidates (type and title); `fuller` says which of two
 * results of different projects is the fuller version of one document ('a' or 'b'), or null for two
 * documents. Copies within one project stay apart (they are that backlog's own files).
 */
export function collapseVersions<T>(
  merged: Ranked<T>[],
  key: (x: Ranked<T>) => string,
  fuller: (a: Ranked<T>, b: Ranked<T>) => 'a' | 'b' | null,
): Collapsed<T>[] {
  const slots = new Map<string, number[]>();
  const out: Collapsed<T>[] = [];
  for (const x of merged) {
    const k = key(x);
    const same = slots.get(k) ?? [];
    const at = same.find((i) => {
      const kept = out[i];
      if (kept.project === x.project || kept.also?.some((a) => a.project === x.project)) return false;
      return fuller(kept, x) !== null;
    });
    if (at === undefined) {
      slots.set(k, [...same, out.length]);
      out.push(x);
      continue;
    }
    const { also = [], ...shown } = out[at];
    out[at] = fuller(shown, x) === 'a' ? { ...shown, also: [...also, x] } : { ...x, also: [...also, shown] };
  }
  return out;
}

/** All lists in one order: key, then rank in its own list, then the project's order. */
export function mergeRanked<T>(lists: Ranked<T>[][]): Ranked<T>[] {
  return lists.flat().sort((a, b) => b.key - a.key || a.rank - b.rank || a.project - b.project);
}

/**
 * The best bm25 score a document of this backlog could reach for the whole query: each distinct word's
 * own bound, or, for a word no document has, (k1 + 1) times the idf of a word in no document.
 */
export function workspaceBound(index: OramaSearchService, text: string, outside?: OutsideStats): number {
  if (outside) {
    // Shared statistics: every word at its idf over all the backlogs in scope (the same for each of them).
    const n = index.size + outside.docCount;
    let sum = 0;
    for (const word of index.analyzer.queryWords(text)) {
      // Its best alternative (the rarest one a document has); a word no backlog has, at idf(n, 0).
      const dfs = word.alternatives
        .map((t) => index.docFreq(t, undefined) + outside.docFreq(t, undefined))
        .filter((df) => df > 0);
      sum += idf(n, dfs.length ? Math.min(...dfs) : 0);
    }
    return sum * (index.settings.k1 + 1);
  }
  const absent = idf(index.size, 0) * (index.settings.k1 + 1);
  const seen = new Set<string>();
  let sum = 0;
  for (const run of index.analyzer.runs(text)) {
    const word = text.slice(run.start, run.end);
    const key = index.analyzer.queryTerms(word).join('\u0000');
    if (!key || seen.has(key)) continue; // a stop-word, or a word counted already
    seen.add(key);
    sum += index.upperBound(word) || absent;
  }
  return sum;
}

/** The statistics of the other backlogs in scope, for one backlog's idf (`shared`); memoized for one search. */
export function outsideStats(others: OramaSearchService[]): OutsideStats {
  const memo = new Map<string, number>();
  return {
    docCount: others.reduce((n, x) => n + x.size, 0),
    docFreq(term, fields) {
      const key = `${fields ?? -1}\u0000${term}`;
      let df = memo.get(key);
      if (df === undefined) {
        df = others.reduce((n, x) => n + x.docFreq(term, fields), 0);
        memo.set(key, df);
      }
      return df;
    },
  };
}
