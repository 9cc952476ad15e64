/**
 * The viewer's static files (built by Vite into dist/viewer): `/` is its index.html, `/assets/*` its
 * hashed scripts and styles (cached for a year), gzipped in memory when the client accepts it.
 */
import type { Context } from 'hono';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { httpError, type HttpEnv } from './respond.js';

/** Where the built viewer is looked for: next to the compiled server (dist/viewer), or dist/viewer when run from src. */
export const VIEWER_DIR_CANDIDATES = [
  fileURLToPath(new URL('../viewer', import.meta.url)),
  fileURLToPath(new URL('../../dist/viewer', import.meta.url)),
];

/** The first candidate folder holding an index.html, or undefined when the viewer was not built. */
export function findViewerDir(candidates = VIEWER_DIR_CANDIDATES): string | undefined {
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set([
  '.html',
  '.js',
  '.mjs',
  '.css',
  '.svg',
  '.json',
  '.map',
  '.txt',
  '.webmanifest',
]);

/**
 * Scripts only from this server, no inline script, no plugins or frames; markdown images may come
 * from anywhere over https. A second line of defence behind escaping and DOMPurify.
 */
export const VIEWER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface CachedFile {
  mtimeMs: number;
  body: Buffer;
  gzip?: Buffer;
}

/**
 * A handler for the viewer's files in `dir` (default: the first of VIEWER_DIR_CANDIDATES with an
 * index.html, looked up per request so a build made after start is picked up). It answers GET and
 * HEAD for paths no route matched (it runs from the app's not-found handler, so routes added to the
 * app later still win) and resolves to undefined for anything that is not a file of the viewer.
 */
export function viewerHandler(dir?: string): (c: Context<HttpEnv>) => Promise<Response | undefined> {
  const cache = new Map<string, CachedFile>();

  const serveFile = async (c: Context<HttpEnv>, root: string, rel: string) => {
    const abs = resolve(root, rel);
    if (abs !== root && !abs.startsWith(root + sep)) return undefined;
    const st = await stat(abs).catch(() => null);
    if (!st?.isFile()) return undefined;
    let entry = cache.get(abs);
    if (!entry || entry.mtimeMs !== st.mtimeMs) {
      entry = { mtimeMs: st.mtimeMs, body: await readFile(abs) };
      cache.set(abs, entry);
    }
    const ext = extname(abs).toLowerCase();
    const headers: Record<string, string> = {
      'Content-Type': TYPES[ext] ?? 'application/octet-stream',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
    if (ext === '.html') {
      headers['Content-Security-Policy'] = VIEWER_CSP;
      headers['Referrer-Policy'] = 'no-referrer';
    }
    let body = entry.body;
    if (
      COMPRESSIBLE.has(ext) &&
      /\bgzip\b/.test(c.req.header('accept-encoding') ?? '') &&
      body.length > 1024
    ) {
      entry.gzip ??= gzipSync(body);
      body = entry.gzip;
      headers['Content-Encoding'] = 'gzip';
      headers['Vary'] = 'Accept-Encoding';
    }
    headers['Content-Length'] = String(body.length);
    return c.body(new Uint8Array(body), 200, headers);
  };

  return async (c) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return undefined;
    const root = dir ? resolve(dir) : findViewerDir();
    const path = c.req.path;
    if (!root || !existsSync(join(root, 'index.html'))) {
      if (path === '/' || path === '/index.html')
        return httpError(
          c,
          404,
          'NOT_FOUND',
          'The viewer is not built',
          'Run `npm run build` (or `npm run build:viewer`); the API (/search, /tasks, /events) works without it.',
        );
      return undefined;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(path).replace(/^\/+/, '');
    } catch {
      return undefined;
    }
    if (rel === '') rel = 'index.html';
    if (rel.split(/[/\\]/).some((part) => part.startsWith('.'))) return undefined;
    return serveFile(c, root, rel);
  };
}
