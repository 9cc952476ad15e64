/** Every failure the library reports carries one of these codes (also used by the MCP and HTTP surfaces). */
export type ErrorCode =
  'INVALID_QUERY' | 'INVALID_FILTER' | 'QUERY_SYNTAX' | 'NOT_FOUND' | 'CONFLICT' | 'INTERNAL';

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
  notFound: (id: string) =>
    new BacklogError(
      'NOT_FOUND',
      `No item with id "${id}"`,
      'Use an id from search results (TASK-0001, EPIC-0001, mcp://backlog/<path>) or a path relative to the backlog root.',
      { id },
    ),
  internal: (message: string) =>
    new BacklogError('INTERNAL', message, 'This is a bug; run `backlog-search diagnostics` and report it.'),
};

export function isBacklogError(value: unknown): value is BacklogError {
  return value instanceof BacklogError;
}
