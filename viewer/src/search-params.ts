/**
 * The options the spotlight sends to GET /search for a query. Kept free of DOM code so the parity
 * test can import it and ask searchUnified the very same question.
 */
export const SPOTLIGHT_LIMIT = 20;
export const SEARCH_DEBOUNCE_MS = 120;

/**
 * The type chips: the backlog's kinds (`resource`: the server reads it as every file that is not a
 * task, so it is a chip only where the backlog has no documents, decisions or milestones of their own).
 */
export type SpotlightType = 'task' | 'epic' | 'document' | 'decision' | 'milestone' | 'resource';

/** `project`: the project chosen when the server serves several backlogs ('' or absent: all of them). */
export function spotlightParams(
  query: string,
  types: SpotlightType[],
  sort: 'relevant' | 'recent',
  project = '',
) {
  return {
    query,
    types: types.length ? types : undefined,
    sort,
    limit: SPOTLIGHT_LIMIT,
    ...(project ? { project } : {}),
  };
}
