/**
 * A lock every process respects: a lock file that names its owner. Two servers on one folder (the
 * viewer's `serve` and an agent's `mcp` over stdio) take the same lock before they read, change and
 * write a file, so neither overwrites the other's change.
 *
 * - The lock is a file created atomically with its owner inside (`{pid, host, start, nonce}`): it is
 *   written to a temporary file and hard-linked into place, so nobody ever reads a half-written owner.
 * - A lock is stale when its owner is gone: on this host, the process `pid` is not running or is another
 *   process than the one that took it (its start time in /proc differs, so a reused pid is not trusted);
 *   from another host (a network folder), when the file was not refreshed for `staleMs` (holders
 *   touch it every `staleMs / 3`). A stale lock is broken at once: no waiting out a timeout after a crash.
 * - Breakers are serialized by a second lock file (`<lock>.break`, held for a few system calls) and move
 *   the stale lock away before deleting it only if it is still the one judged stale, so two processes
 *   that find the same dead owner never delete each other's fresh lock.
 *
 * proper-lockfile judges staleness by modification time only (at least 2 s, 10 s by default): after a
 * kill every write to that file would wait that long, and a start-up sweep could not tell a dead writer's
 * lock from a live one. Hence this small module.
 */
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

export interface LockOwner {
  pid: number;
  host: string;
  /** The owner process's start time (Linux: /proc/<pid>/stat), null where it cannot be read. */
  start: string | null;
  /** Unique per lock taken: tells this holder's lock from a later one at the same path. */
  nonce: string;
  /** When it was taken (ms since epoch), for messages. */
  at: number;
}

export interface LockOptions {
  /** How long to wait for a lock held by a live process before giving up (default 20 s). */
  timeoutMs?: number;
  /** A lock from another host that was not refreshed for this long is stale (default 30 s). */
  staleMs?: number;
}

export class LockTimeoutError extends Error {
  constructor(
    readonly path: string,
    readonly owner: LockOwner | null,
  ) {
    super(`${path} is locked by ${owner ? `process ${owner.pid} on ${owner.host}` : 'another process'}`);
  }
}

const HOST = hostname();
/** A `.break` file older than this belongs to a breaker that died between two system calls. */
const BREAK_STALE_MS = 2_000;

function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces and parentheses); start time is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const SELF_START = startTimeOf(process.pid);
/** Nonces of the locks this process holds now. */
const held = new Set<string>();

/** Whether a process with this pid runs (one of another user's too: EPERM). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `owner` no longer holds its lock (see the module comment). */
export function ownerIsGone(owner: LockOwner, mtimeMs: number, staleMs = 30_000): boolean {
  if (owner.host !== HOST) return Date.now() - mtimeMs > staleMs;
  if (owner.pid === process.pid) return owner.start === SELF_START && !held.has(owner.nonce);
  if (!isRunning(owner.pid)) return true;
  if (owner.start === null) return false;
  const start = startTimeOf(owner.pid);
  return start !== null && start !== owner.start;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const o = JSON.parse(text) as LockOwner;
    return typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.nonce === 'string' ? o : null;
  } catch {
    return null;
  }
}

/** The lock's owner and modification time; null when there is no lock file. */
export async function readLock(path: string): Promise<{ owner: LockOwner | null; mtimeMs: number } | null> {
  try {
    const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    return { owner: parseOwner(text), mtimeMs: st.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Whether the lock file at `path` is stale (an unreadable owner counts as stale once 2 s old). */
function isStale(lock: { owner: LockOwner | null; mtimeMs: number }, staleMs: number): boolean {
  if (!lock.owner) return Date.now() - lock.mtimeMs > BREAK_STALE_MS;
  return ownerIsGone(lock.owner, lock.mtimeMs, staleMs);
}

/** Creates `path` holding `text`, atomically; false when it exists. */
async function createWith(path: string, text: string): Promise<boolean> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text, { flag: 'wx' });
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Removes the lock at `path` if it is still the stale one judged (same nonce, or still unreadable).
 * Breakers are serialized by `<path>.break`; the lock is renamed away first and put back if it turns
 * out to be someone's fresh lock.
 */
async function breakLock(path: string, judged: LockOwner | null): Promise<void> {
  const guard = `${path}.break`;
  if (!(await createWith(guard, String(process.pid)))) {
    const st = await stat(guard).catch(() => null);
    if (st && Date.now() - st.mtimeMs > BREAK_STALE_MS) await unlink(guard).catch(() => undefined);
    return;
  }
  try {
    const moved = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.broken`;
    try {
      await rename(path, moved);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const owner = parseOwner(await readFile(moved, 'utf8').catch(() => ''));
    const same = judged === null ? owner === null : owner?.nonce === judged.nonce;
    if (!same) await link(moved, path).catch(() => undefined);
    await unlink(moved).catch(() => undefined);
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

/** Takes the lock at `path` if it is free (or stale: then it is broken first); null when a live process holds it. */
export async function tryLock(
  path: string,
  options: LockOptions = {},
): Promise<(() => Promise<void>) | null> {
  const staleMs = options.staleMs ?? 30_000;
  await mkdir(dirname(path), { recursive: true });
  const owner: LockOwner = {
    pid: process.pid,
    host: HOST,
    start: SELF_START,
    nonce: randomBytes(8).toString('hex'),
    at: Date.now(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    held.add(owner.nonce);
    if (await createWith(path, JSON.stringify(owner))) return releaser(path, owner, staleMs);
    held.delete(owner.nonce);
    const current = await readLock(path);
    if (current === null) continue;
    if (!isStale(current, staleMs)) return null;
    await breakLock(path, current.owner);
  }
  return null;
}

function releaser(path: string, owner: LockOwner, staleMs: number): () => Promise<void> {
  const refresh = setInterval(() => {
    const now = new Date();
    void utimes(path, now, now).catch(() => undefined);
  }, staleMs / 3);
  refresh.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(refresh);
    try {
      const current = await readLock(path);
      if (current?.owner?.nonce === owner.nonce) await unlink(path).catch(() => undefined);
    } finally {
      held.delete(owner.nonce);
    }
  };
}

/** Takes the lock at `path`, waiting (polling, with back-off) while a live process holds it. */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (let delay = 1; ; delay = Math.min(delay * 2, 25)) {
    const release = await tryLock(path, options);
    if (release) return release;
    if (Date.now() > deadline) throw new LockTimeoutError(path, (await readLock(path))?.owner ?? null);
    await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
  }
}

/** Runs `fn` holding the lock at `path`. */
export async function withLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const release = await acquireLock(path, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** Removes the lock file at `path` if its owner is gone; true when it was removed. */
export async function removeLockIfStale(path: string, staleMs = 30_000): Promise<boolean> {
  const current = await readLock(path);
  if (current === null || !isStale(current, staleMs)) return false;
  await breakLock(path, current.owner);
  return (await readLock(path)) === null;
}

/** Reads /proc for a process's start time: exposed for tests that fake a dead owner. */
export const processStartTime = startTimeOf;
