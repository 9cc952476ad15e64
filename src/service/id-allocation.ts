/**
 * New task and epic ids, and the locks writes take. In one process, writes to one file (and allocations)
 * queue behind each other; across processes they take a lock file that names its owner
 * (storage/file-lock.ts): `.<name>.lock` next to the file for a read-modify-write, `tasks/.<ID>.lock`
 * to claim an id until its file exists. A lock left by a killed process is broken by the next writer.
 */
import { readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { BacklogError, errors } from '../errors.js';
import { LockTimeoutError, acquireLock, tryLock } from '../storage/file-lock.js';
import { resolveFolderForWrite } from '../storage/root-path.js';
import { lockPathFor } from '../storage/write-file.js';
import type { WriteTarget } from './write-inputs.js';

// ---------------------------------------------------------------------------------------------
// Locks: one in-process mutex per key, shared by every service on the same folder

class KeyedMutex {
  private tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

interface FolderState {
  locks: KeyedMutex;
  /** Highest number handed out per prefix, so in-process allocations never race for the same marker. */
  last: Map<string, number>;
}
const folders = new Map<string, FolderState>();

export function stateOf(dir: string): FolderState {
  let state = folders.get(dir);
  if (!state) folders.set(dir, (state = { locks: new KeyedMutex(), last: new Map() }));
  return state;
}

/** How long a write waits for another process's lock on the same file before it gives up (CONFLICT). */
export const WRITE_LOCK_TIMEOUT_MS = 20_000;

/**
 * Runs `fn` holding the write lock of one backlog file (`rel`, at `abs`): queued behind this process's
 * other writes to it, then the lock file every process respects. Everything that reads a file to
 * change it (the version check included) runs inside.
 */
export function withWriteLock<T>(dir: string, rel: string, abs: string, fn: () => Promise<T>): Promise<T> {
  return stateOf(dir).locks.run(`file:${rel}`, async () => {
    let release: () => Promise<void>;
    try {
      release = await acquireLock(lockPathFor(abs), { timeoutMs: WRITE_LOCK_TIMEOUT_MS });
    } catch (err) {
      if (!(err instanceof LockTimeoutError)) throw err;
      throw new BacklogError(
        'CONFLICT',
        `${rel} is being written by ${err.owner ? `process ${err.owner.pid}` : 'another process'} (waited ${WRITE_LOCK_TIMEOUT_MS / 1000} s); nothing was written`,
        'Retry in a moment; if it persists, check which process holds the lock file next to it.',
        { path: rel, locked_by: err.owner?.pid ?? null },
      );
    }
    try {
      return await fn();
    } finally {
      await release();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Ids and file names

const ID_PREFIX = /^(task|epic)-0*(\d+)(?!\d)/i;

function numberOf(id: string, prefix: string): number {
  const m = ID_PREFIX.exec(id);
  return m && m[1].toUpperCase() === prefix ? Number(m[2]) : 0;
}

function formatId(prefix: string, n: number): string {
  return `${prefix}-${String(n).padStart(4, '0')}`;
}

async function fileNamesUnder(folder: string, recursive: boolean): Promise<string[]> {
  try {
    const names = await readdir(folder, { recursive });
    return names.map((n) => n.slice(n.lastIndexOf(sep) + 1));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The next free id. In one process allocations are serialized; across processes the id is claimed with
 * a lock file `tasks/.<ID>.lock` (a dead claimer's is broken, so a crash never skips an id for good), and
 * re-checked against the files on disk once claimed. The caller releases the claim after creating the file.
 */
export async function allocateId(
  service: WriteTarget,
  prefix: 'TASK' | 'EPIC',
): Promise<{ id: string; release: () => Promise<void> }> {
  const state = stateOf(service.dir);
  const tasksDir = await resolveFolderForWrite(service.dir, 'tasks');
  return state.locks.run(`alloc:${prefix}`, async () => {
    let max = state.last.get(prefix) ?? 0;
    for (const id of service.ids()) max = Math.max(max, numberOf(id, prefix));
    for (const name of await fileNamesUnder(tasksDir, true)) max = Math.max(max, numberOf(name, prefix));
    for (let n = max + 1; n < max + 1000; n++) {
      const id = formatId(prefix, n);
      const release = await tryLock(join(tasksDir, `.${id}.lock`));
      if (!release) continue;
      const taken =
        service.resolve(id) !== undefined ||
        (await fileNamesUnder(tasksDir, false)).some((name) => numberOf(name, prefix) === n);
      if (taken) {
        await release();
        continue;
      }
      state.last.set(prefix, n);
      return { id, release };
    }
    throw errors.internal(
      `could not allocate a ${prefix} id: 1000 candidates after ${formatId(prefix, max)} are locked`,
    );
  });
}

/** `Add rate-limit to the login endpoint!` -> `add-rate-limit-to-the-login-endpoint` (letters of any script kept). */
export function slugify(title: string, max = 60): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  if (slug.length <= max) return slug;
  const cut = slug.slice(0, max);
  const dash = cut.lastIndexOf('-');
  return (dash > max / 2 ? cut.slice(0, dash) : cut).replace(/-+$/, '');
}
