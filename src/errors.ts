/** Every failure the library reports carries one of these codes (also used by the MCP and HTTP surfaces). */
export type ErrorCode =
  | 'INVALID_QUERY'
  | 'INVALID_FILTER'
  | 'INVALID_INPUT'
  | 'QUERY_SYNTAX'
  | 'INPUT_TOO_LARGE'
  | 'FORBIDDEN_PATH'
  | 'NOT_FOUND'
  | 'AMBIGUOUS_ID'
  | 'PROJECT_REQUIRED'
  | 'NOT_A_BACKLOG'
  | 'CONFLICT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'SESSION_LIMIT'
  | 'INTERNAL';

/** Every code, in the order docs/mcp.md lists them. */
export const ERROR_CODES = [
  'INVALID_QUERY',
  'INVALID_FILTER',
  'INVALID_INPUT',
  'QUERY_SYNTAX',
  'INPUT_TOO_LARGE',
  'FORBIDDEN_PATH',
  'NOT_FOUND',
  'AMBIGUOUS_ID',
  'PROJECT_REQUIRED',
  'NOT_A_BACKLOG',
  'CONFLICT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'SESSION_LIMIT',
  'INTERNAL',
] as const satisfies readonly ErrorCode[];

/** The one error class the library throws: a machine-readable `code`, a `message` and a `hint`. */
export class BacklogError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  /** Extra machine-readable detail, e.g. `{ field: 'status' }` or `{ id: 'TASK-9' }`. */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, hint: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'BacklogError';
    this.code = code;
    this.hint = hint;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; hint: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hint, ...this.details };
  }
}

export const errors = {
  invalidQuery: (message: string, hint = 'Pass a non-empty query string.') =>
    new BacklogError('INVALID_QUERY', message, hint),
  invalidFilter: (field: string, message: string, hint: string) =>
    new BacklogError('INVALID_FILTER', `${field}: ${message}`, hint, { field }),
  /** `examples`: ids of this backlog (BacklogService.vocabulary), for the hint. */
  notFound: (id: string, examples: string[] = ['TASK-0001', 'EPIC-0001']) =>
    new BacklogError(
      'NOT_FOUND',
      `No item with id "${id}"`,
      `Use an id from search results (${[...examples, 'mcp://backlog/<path>'].join(', ')}) or a path relative to the backlog root.`,
      { id },
    ),
  /** A request that asks for more than a budget allows (docs/security.md lists the budgets). */
  inputTooLarge: (what: string, message: string, hint: string, details: Record<string, unknown> = {}) =>
    new BacklogError('INPUT_TOO_LARGE', `${what}: ${message}`, hint, { field: what, ...details }),
  /** A path that leaves the backlog root, or passes through a symbolic link. */
  forbiddenPath: (path: string, why: string, reason: 'outside' | 'link' | 'not_a_file' = 'outside') =>
    new BacklogError(
      'FORBIDDEN_PATH',
      `path "${path}" ${why}`,
      'Use a path relative to the backlog root, e.g. resources/notes/meeting.md: no "..", no absolute path, no symbolic link on the way.',
      { field: 'path', path, reason },
    ),
  /** Input that cannot be read at all (a malformed %-escape, a value of the wrong kind). */
  invalidInput: (field: string, message: string, hint: string) =>
    new BacklogError('INVALID_INPUT', `${field}: ${message}`, hint, { field }),
  /** A request to the HTTP server without the bearer token it was started with (HTTP 401). */
  unauthorized: (message: string) =>
    new BacklogError(
      'UNAUTHORIZED',
      message,
      'Send the header `Authorization: Bearer <token>` with the token the server was started with (--token or BACKLOG_TOKEN); in the viewer, open the URL the server printed (it ends in #token=...).',
    ),
  /** A workspace (several backlogs): a bare id that several projects have. */
  ambiguousId: (id: string, candidates: string[]) =>
    new BacklogError(
      'AMBIGUOUS_ID',
      `"${id}" is an id in ${candidates.length} projects: ${candidates.join(', ')}`,
      `Pass one of the qualified ids (${candidates.join(', ')}), or set project.`,
      { id, candidates },
    ),
  /** A workspace: a write with more than one project in scope. */
  projectRequired: (projects: string[]) =>
    new BacklogError(
      'PROJECT_REQUIRED',
      `this write could go to ${projects.length} projects: ${projects.join(', ')}`,
      `Pass project, one of: ${projects.join(', ')}.`,
      { field: 'project', projects },
    ),
  internal: (message: string) =>
    new BacklogError('INTERNAL', message, 'This is a bug; run `backlog-search diagnostics` and report it.'),
};

/**
 * A one-shot's persisted index turned out malformed while a command read it (a bug or a version skew: the
 * file is signed); the cache was deleted, so the command run again reads the files (the CLI does).
 */
export function cacheDropped(why: string): BacklogError {
  return new BacklogError(
    'INTERNAL',
    `${why}; it was deleted: run the command again (the files are read then)`,
    'The persisted index (.cache/) was written wrong, a bug: the next command rebuilds it from the files.',
    { cache_rebuilt: why },
  );
}

/** The reason when `err` is cacheDropped's, else undefined. */
export function droppedCacheReason(err: unknown): string | undefined {
  return isBacklogError(err) && typeof err.details.cache_rebuilt === 'string'
    ? err.details.cache_rebuilt
    : undefined;
}

export function isBacklogError(value: unknown): value is BacklogError {
  return value instanceof BacklogError;
}
