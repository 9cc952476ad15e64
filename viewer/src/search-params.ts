/**
 * The options the spotlight sends to GET /search for a query. Kept free of DOM code so the parity
 * test can import it and ask searchUnified the very same question.
 */
export const SPOTLIGHT_LIMIT = 20;
export const SEARCH_DEBOUNCE_MS = 120;

/** The type chips: tasks, epics, and every kind of document (`resource`). */
export type SpotlightType = 'task' | 'epic' | 'resource';

/** Kinds of document a backlog may have: files (`resource`) and Backlog.md's documents, decisions, milestones. */
export const DOCUMENT_TYPES = ['resource', 'document', 'decision', 'milestone'] as const;

/** The API's `types` for the chips that are on (the Docs chip stands for every kind of document). */
export function apiTypes(chips: readonly SpotlightType[]): string[] | undefined {
  if (!chips.length) return undefined;
  return chips.flatMap((t) => (t === 'resource' ? [...DOCUMENT_TYPES] : [t]));
}

export function spotlightParams(query: string, types: SpotlightType[], sort: 'relevant' | 'recent') {
  return { query, types: apiTypes(types), sort, limit: SPOTLIGHT_LIMIT };
}
