/**
 * Running servers, found by the folders they serve (issue #23, item 4): `serve` leaves an entry per
 * backlog folder while it runs, and a one-shot `search` on one of those folders asks it over HTTP
 * instead of reading the index itself (the server's answer is the same `searchUnified`, hybrid when its
 * embeddings are ready, with no model to load). Any failure falls back to the command's own answer.
 *
 * The entries live outside every backlog, beside the cache-signing key (`~/.config/backlog-search/
 * servers/`, folder 0700, files 0600): a backlog arrives with `git pull`, so an entry inside it could
 * send this user's queries (and token) wherever its author liked. An entry names a loopback port only.
 * Only node built-ins here: a one-shot command loads this before anything else.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userConfigDir } from '../storage/user-config.js';

export interface ServerEntry {
  /** The serving process (an entry whose process is gone is stale). */
  pid: number;
  /** Always a loopback address: `http://127.0.0.1:<port>` (or `[::1]`). */
  url: string;
  /** The bearer token the server wants, if any. */
  token?: string;
  /** The server's version: another version may answer differently, so it is not asked. */
  version: string;
  /** The embedding provider the server was started with (`auto` unless chosen): asked only by a search that chose the same. */
  embeddings: string;
  /** The backlog's real path, and its project name when the server serves several. */
  dir: string;
  project?: string;
}

/** Where entries are kept (the same base folder as the cache-signing key). */
export function serversDir(): string {
  return join(userConfigDir(), 'servers');
}

function entryPath(realDir: string): string {
  return join(serversDir(), `${createHash('sha256').update(realDir).digest('hex').slice(0, 32)}.json`);
}

function realDir(dir: string): string | undefined {
  try {
    return realpathSync(dir);
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone; EPERM: another user's process now holds the pid. Either way not the server.
    return false;
  }
}

/**
 * Leaves an entry for each folder this process serves; returns the function that removes them (safe to
 * call more than once). An entry that cannot be written is skipped: asking a server is an optimisation.
 */
export function registerServer(
  backlogs: { dir: string; project?: string }[],
  server: { port: number; host: string; token?: string; version: string; embeddings: string },
): () => void {
  const host = server.host === '::1' || server.host === '[::1]' ? '[::1]' : '127.0.0.1';
  const written: string[] = [];
  try {
    mkdirSync(serversDir(), { recursive: true, mode: 0o700 });
  } catch {
    return () => undefined;
  }
  for (const { dir, project } of backlogs) {
    const real = realDir(dir);
    if (!real) continue;
    const entry: ServerEntry = {
      pid: process.pid,
      url: `http://${host}:${server.port}`,
      ...(server.token ? { token: server.token } : {}),
      version: server.version,
      embeddings: server.embeddings,
      dir: real,
      ...(project ? { project } : {}),
    };
    const path = entryPath(real);
    try {
      // Atomic: a reader sees the old entry or the new one, never half of one.
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
      renameSync(tmp, path);
      written.push(path);
    } catch {
      // Unwritable config folder: this server is simply not found.
    }
  }
  return () => {
    for (const path of written.splice(0)) {
      // Another server for the same folder may have replaced it since: leave theirs.
      if (readEntry(path)?.pid === process.pid) rmSync(path, { force: true });
    }
  };
}

function readEntry(path: string): ServerEntry | undefined {
  try {
    const e = JSON.parse(readFileSync(path, 'utf8')) as Partial<ServerEntry>;
    const loopback = typeof e.url === 'string' && /^http:\/\/(127\.0\.0\.1|\[::1\]):\d{1,5}$/.test(e.url);
    if (
      !loopback ||
      !Number.isSafeInteger(e.pid) ||
      typeof e.version !== 'string' ||
      typeof e.embeddings !== 'string' ||
      typeof e.dir !== 'string'
    )
      return undefined;
    if (e.token !== undefined && typeof e.token !== 'string') return undefined;
    if (e.project !== undefined && typeof e.project !== 'string') return undefined;
    return e as ServerEntry;
  } catch {
    return undefined;
  }
}

/**
 * The running server of `version` that serves `dir` (with the `embeddings` provider, when given), if
 * there is one (a stale entry is removed).
 */
export function findServer(dir: string, version: string, embeddings?: string): ServerEntry | undefined {
  const real = realDir(dir);
  if (!real) return undefined;
  const path = entryPath(real);
  const entry = readEntry(path);
  if (!entry || entry.dir !== real) return undefined;
  if (!alive(entry.pid)) {
    rmSync(path, { force: true });
    return undefined;
  }
  return entry.version === version && (embeddings === undefined || entry.embeddings === embeddings)
    ? entry
    : undefined;
}

/**
 * GET `url` (a server's, loopback) as JSON: the body when the status is 200, else undefined (as on any
 * failure or after `timeoutMs`). node:http, not fetch: fetch loads undici, 70 ms of a one-shot start.
 */
export async function getJson(
  url: string,
  token: string | undefined,
  timeoutMs: number,
): Promise<Record<string, unknown> | undefined> {
  // Loaded here, not with the module: a command that finds no server never needs it (~12 ms of a start).
  const { request } = await import('node:http');
  return new Promise((done) => {
    const req = request(
      url,
      { headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => done(undefined));
        res.on('end', () => {
          if (res.statusCode !== 200) return done(undefined);
          try {
            done(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
          } catch {
            done(undefined);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(undefined));
    req.end();
  });
}
