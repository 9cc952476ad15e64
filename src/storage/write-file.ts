/**
 * Atomic writes and what they leave behind. A write never shows a half-written file: the data goes to
 * a hidden temporary file in the same folder (`.<name>.<pid>.<hex>.tmp`, fsync), which is then renamed
 * over the target (or hard-linked to it, for a file that must not exist yet). A writer killed half-way
 * leaves a temporary file and maybe a lock (./file-lock.ts); `removeWriteLeftovers` clears those of dead
 * processes when a backlog is opened.
 */
import { link, mkdir, open, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { isRunning, removeLockIfStale } from './file-lock.js';

/** A temporary file of this process for `path`: hidden, next to it (a rename stays on one file system). */
function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** The lock file that guards writes to `path`: `.<name>.lock` in the same folder. */
export function lockPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.lock`);
}

async function writeSynced(path: string, data: string | Uint8Array): Promise<void> {
  await writeFile(path, data, { flag: 'wx' });
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Writes `path` atomically: a temporary file in the same folder, fsync, then rename over the target. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await writeFileAtomicStat(path, data);
}

/**
 * `writeFileAtomic`, returning the written file's status as it stands after the rename (read through
 * the file's own descriptor, so a file put in its place since is not the one described): the cache
 * stamps it (service/cache-file.ts).
 */
export async function writeFileAtomicStat(path: string, data: string | Uint8Array): Promise<BigIntStats> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  const fh = await open(tmp, 'wx');
  try {
    await fh.writeFile(data);
    await fh.sync();
    await rename(tmp, path);
    return await fh.stat({ bigint: true });
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  } finally {
    await fh.close();
  }
}

/**
 * Creates `path` with `data`, failing with EEXIST when it already exists, and never showing a
 * half-written file: the temporary file is hard-linked to the target (`link` fails when the target
 * exists, like the `wx` flag). Where hard links are not supported the file is created with `wx` directly.
 */
export async function createFileExclusive(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  let linked = false;
  try {
    await writeSynced(tmp, data);
    try {
      await link(tmp, path);
      linked = true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS'].includes(code ?? '')) throw err;
    }
    if (!linked) {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** `<anything>.<pid>.<8 hex>.tmp` (hidden or, as earlier versions wrote them, not) and a breaker's `.broken`. */
const TEMP = /\.(\d+)\.[0-9a-f]{8}\.(tmp|broken)$/;
const LOCK = /^\..+\.lock$/;
const BREAK = /^\..+\.lock\.break$/;
/** A temporary file this old is litter even if its pid runs again (a reused pid). */
const TEMP_MAX_AGE_MS = 10 * 60_000;

export interface LeftoverReport {
  /** Temporary files of dead writers removed. */
  temp: number;
  /** Locks of dead writers removed. */
  locks: number;
}

/**
 * Removes what writers killed half-way left under `root`: their temporary files and their locks (a
 * lock whose owner is gone, see file-lock.ts). Live writers' files are left alone. Symbolic links are
 * not followed; `.git` and `node_modules` are not entered. Best effort: a file that cannot be removed
 * is skipped.
 */
export async function removeWriteLeftovers(root: string): Promise<LeftoverReport> {
  const report: LeftoverReport = { temp: 0, locks: 0 };
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      // Only folders and names a writer leaves (TEMP, LOCK, BREAK) go further: a path joined for every
      // file was most of this walk (a 50,000-file backlog: 0.7 s of a one-shot start under load).
      const name = entry.name;
      if (!entry.isDirectory() && name[0] !== '.' && !name.endsWith('.tmp') && !name.endsWith('.broken'))
        continue;
      const abs = join(dir, name);
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && entry.name !== 'node_modules') await walk(abs);
        continue;
      }
      if (!entry.isFile()) continue;
      const temp = TEMP.exec(entry.name);
      if (temp) {
        const pid = Number(temp[1]);
        const old =
          Date.now() - ((await stat(abs).catch(() => null))?.mtimeMs ?? Date.now()) > TEMP_MAX_AGE_MS;
        if (pid !== process.pid && (old || !isRunning(pid)))
          if (
            await unlink(abs).then(
              () => true,
              () => false,
            )
          )
            report.temp++;
      } else if (LOCK.test(entry.name)) {
        if (await removeLockIfStale(abs).catch(() => false)) report.locks++;
      } else if (BREAK.test(entry.name)) {
        const st = await stat(abs).catch(() => null);
        if (st && Date.now() - st.mtimeMs > 2_000) await unlink(abs).catch(() => undefined);
      }
    }
  };
  await walk(root);
  return report;
}
