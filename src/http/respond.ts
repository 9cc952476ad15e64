/** What every route of the HTTP surface shares: the app's type, the JSON error body, the status of each error code. */
import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';

/** `authorized`: the request carried the server's token (or the server has none); set by auth.ts. */
export type HttpEnv = { Bindings: HttpBindings; Variables: { authorized: boolean } };
export type HttpApp = Hono<HttpEnv>;

/** JSON error body of every HTTP failure (the MCP tools use the same `{status, error}` shape). */
export function httpError(
  c: Context,
  status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 500 | 503,
  code: string,
  message: string,
  hint: string,
  extra?: Record<string, unknown>,
): Response {
  return c.json({ status: 'error', error: { code, message, hint, ...extra } }, status);
}

/** The HTTP status of each error code: 400 for bad input, 401, 403, 404, 409, 413, 500, 503. */
export function statusOf(code: string): 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503 {
  switch (code) {
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
    case 'FORBIDDEN_PATH':
      return 403;
    case 'SESSION_LIMIT':
      return 503;
    case 'INPUT_TOO_LARGE':
      return 413;
    case 'NOT_FOUND':
      return 404;
    case 'CONFLICT':
      return 409;
    case 'INTERNAL':
      return 500;
    default:
      return 400;
  }
}
