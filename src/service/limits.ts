/**
 * Budgets: what one file, one query or one response may cost at most, so that no small input costs
 * unbounded memory or time (docs/security.md has each one's measured effect). Each is a setting
 * (`openBacklog({ limits })`); going over one is INPUT_TOO_LARGE, or for a file a diagnostic.
 */
/** Characters of one query (not a setting: no real query comes near it). */
export const MAX_QUERY_CHARS = 2000;

export interface Limits {
  /**
   * Words of one file that are indexed and embedded (default 50,000, about 300 KB of prose). The rest
   * stays readable with `get` but is not searchable, and the file gets a `terms_over_budget`
   * diagnostic. A word costs up to about 1 KB of index when every word is new.
   */
  maxWordsPerFile: number;
  /** Ids in one `get` (library, CLI, `backlog_get`), repeats included (default 100). */
  maxIdsPerGet: number;
  /** Distinct terms in one query, after stop-words (default 64). */
  maxQueryTerms: number;
  /** Characters of one answer: a `get` of many items, a page of results with their content (default 1,000,000). */
  maxResponseChars: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxWordsPerFile: 50_000,
  maxIdsPerGet: 100,
  maxQueryTerms: 64,
  maxResponseChars: 1_000_000,
};

/** The limits with `overrides` applied; a value that is not a positive integer is an error naming it. */
export function resolveLimits(overrides: Partial<Limits> = {}): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(overrides) as [keyof Limits, number | undefined][]) {
    if (value === undefined) continue;
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new TypeError(`limits: unknown limit "${key}"`);
    if (!Number.isInteger(value) || value < 1)
      throw new TypeError(`limits.${key}: ${value} is not a positive integer`);
    limits[key] = value;
  }
  return limits;
}
