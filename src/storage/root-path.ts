/**
 * Every file-system access that takes a path from anywhere (a cache, an id, a URI, a watcher event,
 * a write request) goes through here: the path is checked as text (relative, no `..`, no NUL), then
 * on disk (its folder resolves inside the root after `realpath`, and it is not a symbolic link).
 * Reads open with O_NOFOLLOW and, on Linux, check the file actually opened through /proc, so a folder
 * swapped for a link between the check and the open is caught too.
 */
import { constants, lstatSync, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { errors } from '../errors.js';

/**
 * The path as the backlog writes it: relative to the root, `/`-separated, without `./`. Throws
 * FORBIDDEN_PATH for anything that could leave the root (`..`, absolute, a drive letter) and
 * INVALID_INPUT for what is not a path at all (NUL, a backslash, an empty segment).
 */
export function checkRelativePath(input: string): string {
  const path = input.replace(/^(\.\/)+/, '');
  if (path.includes('\0'))
    throw errors.invalidInput(
      'path',
      `"${input.replace(/\0/g, '\\0')}" contains a NUL character`,
      'Pass a plain relative path.',
    );
  if (isAbsolute(path) || /^[A-Za-z]:/.test(path) || path.startsWith('/') || path.startsWith('\\'))
    throw errors.forbiddenPath(input, 'is absolute');
  const parts = path.split('/');
  if (parts.includes('..') || path.split('\\').includes('..'))
    throw errors.forbiddenPath(input, 'goes outside the backlog root');
  if (path.includes('\\'))
    throw errors.invalidInput('path', `"${input}" contains a backslash`, 'Use "/" between folders.');
  if (parts.some((p) => p === '' || p === '.'))
    throw errors.invalidInput(
      'path',
      `"${input}" has an empty or "." segment`,
      'Pass a path such as resources/notes/x.md.',
    );
  return path;
}

/** Whether `path` is a relative path that stays inside the root, as text (no file-system access). */
export function isRelativeInside(path: string): boolean {
  try {
    return checkRelativePath(path) === path;
  } catch {
    return false;
  }
}

function within(realRoot: string, realPath: string): boolean {
  const rel = relative(realRoot, realPath);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** `realpath` of the root, remembered per root (the root itself may be a link: the user chose it). */
const realRoots = new Map<string, Promise<string>>();
function realRootOf(root: string): Promise<string> {
  let real = realRoots.get(root);
  if (!real) {
    real = realpath(root);
    realRoots.set(root, real);
    real.catch(() => realRoots.delete(root));
  }
  return real;
}

/** The folder of `abs` resolves inside the root: no linked folder leads out. */
async function checkFolder(root: string, rel: string, folder: string): Promise<void> {
  const [realRoot, real] = await Promise.all([realRootOf(root), realpath(folder)]);
  if (!within(realRoot, real))
    throw errors.forbiddenPath(rel, 'leads outside the backlog root through a symbolic link', 'link');
}

/**
 * Opens `rel` for reading: the file must be a regular file inside the root, reached without any
 * symbolic link. Throws FORBIDDEN_PATH (outside, or a link) or the file system's error (ENOENT, ...).
 */
export async function openInsideRoot(
  root: string,
  rel: string,
): Promise<{ handle: FileHandle; stats: Stats }> {
  const path = checkRelativePath(rel);
  const abs = join(root, path);
  await checkFolder(root, rel, dirname(abs));
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO named like a backlog file must not hang the read.
    handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw errors.forbiddenPath(rel, 'is a symbolic link', 'link');
    throw err;
  }
  try {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (opened !== null && !within(await realRootOf(root), opened))
      throw errors.forbiddenPath(rel, 'was swapped for a link outside the backlog root', 'link');
    const stats = await handle.stat();
    if (stats.isDirectory())
      throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${rel}'`), {
        code: 'EISDIR',
      });
    if (!stats.isFile()) throw errors.forbiddenPath(rel, 'is not a regular file', 'not_a_file');
    return { handle, stats };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Reads `rel` (see openInsideRoot), at most `maxBytes` of it; `size` is the file's whole size. */
export async function readInsideRoot(
  root: string,
  rel: string,
  maxBytes = Number.MAX_SAFE_INTEGER,
): Promise<{ bytes: Buffer; stats: Stats; complete: boolean }> {
  const { handle, stats } = await openInsideRoot(root, rel);
  try {
    if (stats.size <= maxBytes) return { bytes: await handle.readFile(), stats, complete: true };
    const bytes = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(bytes, 0, maxBytes, 0);
    return { bytes: bytes.subarray(0, bytesRead), stats, complete: false };
  } finally {
    await handle.close();
  }
}

/** `lstat` of `rel` inside the root (null when it does not exist); links are reported as links, never followed. */
export async function statInsideRoot(root: string, rel: string): Promise<Stats | null> {
  const path = checkRelativePath(rel);
  return lstat(join(root, path)).catch(() => null);
}

/** statInsideRoot without a round trip through the thread pool: a start stats every file, ~5 us each. */
export function statInsideRootSync(root: string, rel: string): Stats | null {
  return lstatSync(join(root, checkRelativePath(rel)), { throwIfNoEntry: false }) ?? null;
}

/**
 * The absolute path to write or delete `rel` at: the nearest folder that exists on the way resolves
 * inside the root, and the target, if it exists, is a regular file (not a link, not a folder).
 * Throws FORBIDDEN_PATH otherwise.
 */
export async function resolveForWrite(root: string, rel: string): Promise<string> {
  const abs = join(root, checkRelativePath(rel));
  const target = await lstat(abs).catch(() => null);
  if (target?.isSymbolicLink()) throw errors.forbiddenPath(rel, 'is a symbolic link', 'link');
  // A folder where a file should be is left to the write itself to fail on (EISDIR).
  if (target && !target.isFile() && !target.isDirectory())
    throw errors.forbiddenPath(rel, 'is not a regular file', 'not_a_file');
  await checkNearestFolder(root, rel, dirname(abs));
  return abs;
}

/** The absolute path of a folder inside the root to list or create files in (see resolveForWrite). */
export async function resolveFolderForWrite(root: string, rel: string): Promise<string> {
  const abs = join(root, checkRelativePath(rel));
  const st = await lstat(abs).catch(() => null);
  if (st?.isSymbolicLink()) throw errors.forbiddenPath(rel, 'is a symbolic link', 'link');
  if (st && !st.isDirectory()) throw errors.forbiddenPath(rel, 'is a file, not a folder', 'not_a_file');
  await checkNearestFolder(root, rel, abs);
  return abs;
}

/** The nearest folder of `folder` that exists is a folder (not a file) and resolves inside the root. */
async function checkNearestFolder(root: string, rel: string, folder: string): Promise<void> {
  let probe = folder;
  let st = await lstat(probe).catch(() => null);
  while (!st && probe !== dirname(probe)) {
    probe = dirname(probe);
    st = await lstat(probe).catch(() => null);
  }
  if (st && !st.isDirectory() && !st.isSymbolicLink())
    throw errors.forbiddenPath(
      rel,
      `passes through ${relative(root, probe).split(sep).join('/')}, which is a file`,
    );
  await checkFolder(root, rel, probe);
}
