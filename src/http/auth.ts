/**
 * Access control for a server reachable beyond this machine: a bearer token on every route but `/health`
 * and the viewer's static files (they hold no backlog data; the viewer then sends the token with every
 * API call), and a request-body limit.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { BacklogError, errors } from '../errors.js';
import { LOOPBACK } from './guard.js';
import { httpError, type HttpEnv } from './respond.js';

/** Tokens shorter than this are refused at start (a guessable token is no protection). */
export const MIN_TOKEN_LENGTH = 16;

/** Request bodies over this many bytes get 413 (default): room for a 5 MB write, JSON-escaped. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Whether `host` (an interface to bind) is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return LOOPBACK.includes(h) || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Checks the access settings of a server before it binds: a non-loopback `host` needs a token, and a
 * token must be long enough. Throws UNAUTHORIZED / INVALID_INPUT with a hint.
 */
export function checkAccess(host: string, token: string | undefined): void {
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    throw errors.invalidInput(
      'token',
      `the token has ${token.length} characters; at least ${MIN_TOKEN_LENGTH} are needed`,
      'Use a long random token, e.g. `openssl rand -hex 24`.',
    );
  if (!isLoopbackHost(host) && !token)
    throw new BacklogError(
      'UNAUTHORIZED',
      `binding to ${host} would let any machine that reaches it read and write the backlog without a token`,
      'Pass --token <secret> (or set BACKLOG_TOKEN; at least 16 characters, e.g. `openssl rand -hex 24`), or bind to 127.0.0.1.',
      { field: 'host' },
    );
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** True when `given` is `expected`, in time that does not depend on where they differ. */
export function tokenMatches(given: string, expected: string): boolean {
  // Hashing first makes both sides the same length, so the comparison is constant-time for any input.
  return timingSafeEqual(digest(given), digest(expected));
}

/** The viewer's files: served without the token (the page then asks for it, see viewer/src/api.ts). */
function isPublic(method: string, path: string): boolean {
  if (path === '/health') return true;
  if (method !== 'GET' && method !== 'HEAD') return false;
  return path === '/' || path === '/index.html' || path === '/favicon.svg' || path.startsWith('/assets/');
}

/** An error in the shape of the route: JSON-RPC for `/mcp` (MCP clients read that), ours elsewhere. */
function refuse(
  c: Parameters<MiddlewareHandler<HttpEnv>>[0],
  status: 401 | 413,
  err: BacklogError,
  headers: Record<string, string> = {},
): Response {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  if (c.req.path === '/mcp')
    return c.json(
      {
        jsonrpc: '2.0',
        error: { code: -32001, message: err.message, data: { code: err.code, hint: err.hint } },
        id: null,
      },
      status,
    );
  return httpError(c, status, err.code, err.message, err.hint);
}

/**
 * Every request but `/health` and the viewer's files must carry `Authorization: Bearer <token>`; 401
 * otherwise. `/health` answers without it, but only `{status}` (see server.ts).
 */
export function bearerAuth(token: string | undefined): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const m = token ? /^Bearer\s+(.+)$/i.exec((c.req.header('authorization') ?? '').trim()) : null;
    const ok = !token || (m !== null && tokenMatches(m[1].trim(), token));
    c.set('authorized', ok);
    if (ok || isPublic(c.req.method, c.req.path)) return next();
    return refuse(
      c,
      401,
      errors.unauthorized(
        m ? 'the bearer token is not the one this server was started with' : 'no bearer token',
      ),
      { 'WWW-Authenticate': 'Bearer realm="backlog-search"' },
    );
  };
}

/** 413 with INPUT_TOO_LARGE for a body over `maxBytes` (a declared Content-Length or the bytes read). */
export function limitBody(maxBytes: number): MiddlewareHandler<HttpEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      refuse(
        c,
        413,
        errors.inputTooLarge(
          'body',
          `the request body is over ${maxBytes} bytes`,
          'Send less per request: split a large write over several files or calls.',
          { limit: maxBytes },
        ),
      ),
  });
}
