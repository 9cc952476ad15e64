import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { nativeFormat, type BacklogFormat } from './formats/detect.js';
import { TEXT_EXTENSIONS, fileType, resourceUri } from './parse.js';
import { loadTaskSchema } from './schema.js';
import type { BacklogItem, Diagnostic } from './types.js';
import { idKey } from './ids.js';
import { isBacklogError } from '../errors.js';
import { readInsideRoot, statInsideRootSync } from './root-path.js';

/** Files larger than this are reported and not indexed. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

export interface LoadResult {
  items: BacklogItem[];
  diagnostics: Diagnostic[];
  /** Files looked at (text files under the root). */
  files: number;
}

/** Hidden folders (`.cache`, `.git`) and `node_modules` are never part of the backlog. */
export function isIgnoredPath(relPath: string): boolean {
  return relPath.split('/').some((part) => part.startsWith('.') || part === 'node_modules');
}

export function toRelative(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).join('/');
}

/** Every text file under `root`, as paths relative to it, sorted; symbolic links are listed apart, never followed. */
export async function listTextFiles(root: string): Promise<string[]> {
  return (await walkBacklog(root)).files;
}

/** The walk behind listTextFiles: text files, and the symbolic links it did not follow. */
export async function walkBacklog(root: string): Promise<{ files: string[]; links: string[] }> {
  const files: string[] = [];
  const links: string[] = [];
  // `rel`: the folder's path from the root, joined with `/` as it goes (path.relative per file cost a
  // start of 10,000 files 60 ms).
  async function walk(dir: string, rel: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = rel + entry.name;
      if (listEntry(entry, path, files, links)) await walk(join(dir, entry.name), `${path}/`);
    }
  }
  await walk(root, '');
  return { files: files.sort(), links: links.sort() };
}

/**
 * walkBacklog, synchronously: a start from the persisted index lists the files before it reads the cache,
 * so that a large backlog's stat thread starts at once (listed while the cache was read, they were ready
 * only after it: the thread then started half a second late at 50,000 files).
 */
export function walkBacklogSync(root: string): { files: string[]; links: string[] } {
  const files: string[] = [];
  const links: string[] = [];
  const walk = (dir: string, rel: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = rel + entry.name;
      if (listEntry(entry, path, files, links)) walk(join(dir, entry.name), `${path}/`);
    }
  };
  walk(root, '');
  return { files: files.sort(), links: links.sort() };
}

/** Puts a folder entry (at `path` from the root) among the files or links; true for a folder to walk. */
function listEntry(entry: Dirent, path: string, files: string[], links: string[]): boolean {
  if (entry.name.startsWith('.') || entry.name === 'node_modules') return false;
  if (entry.isDirectory()) return true;
  // Links to text files or (extension-less) folders are reported; links to images and the like are not backlog files anyway.
  if (entry.isSymbolicLink() && (TEXT_EXTENSIONS.has(fileType(entry.name)) || !fileType(entry.name)))
    links.push(path);
  else if (entry.isFile() && TEXT_EXTENSIONS.has(fileType(entry.name))) files.push(path);
  return false;
}

/**
 * Size and modification time of each path (relative to `root`); paths that vanished, or are links now,
 * are left out. Synchronous lstat in batches (a promise per file cost a start 30 ms for 700 files), the
 * event loop free between batches.
 */
export async function statFiles(
  root: string,
  paths: string[],
): Promise<Record<string, { size: number; mtime_ms: number }>> {
  const out: Record<string, { size: number; mtime_ms: number }> = {};
  for (let from = 0; from < paths.length; from += STAT_BATCH) {
    if (from > 0) await new Promise((next) => setImmediate(next));
    for (const p of paths.slice(from, from + STAT_BATCH)) {
      let st: Stats | null = null;
      try {
        st = statInsideRootSync(root, p);
      } catch {
        // Unreadable or outside the root: left out, as a vanished file.
      }
      if (st?.isFile()) out[p] = { size: st.size, mtime_ms: st.mtimeMs };
    }
  }
  return out;
}
const STAT_BATCH = 2000;

/** From this many files a start's stat of every file runs in a thread (statFilesAlong); below, it costs less than the thread. */
export const STAT_ASIDE_FILES = 5000;

/** Paths a thread (or the main thread, statFilesAlong's `help`) takes at a time. */
const STAT_CHUNK = 256;

/**
 * The lstat loop of statFilesAlong: chunks of `paths` taken in turn from the shared counter `counts[0]`
 * (the stat thread and the main thread, once it has nothing else to do, take them from the same), for
 * each path its size and modification time in `out`, or -1 for a path that vanished, cannot be read, or
 * is not a regular file now; `counts[1]`: paths done; `once`: one chunk, then return. Self-contained:
 * the thread runs its source (`String(statChunks)`).
 */
function statChunks(
  lstat: typeof lstatSync,
  base: string,
  paths: readonly string[],
  counts: Int32Array,
  out: Float64Array,
  chunk: number,
  once = false,
): void {
  for (;;) {
    const from = Atomics.add(counts, 0, chunk);
    if (from >= paths.length) return;
    const to = Math.min(from + chunk, paths.length);
    for (let i = from; i < to; i++) {
      try {
        const st = lstat(base + paths[i], { throwIfNoEntry: false });
        if (st && st.isFile()) {
          out[2 * i] = st.size;
          out[2 * i + 1] = st.mtimeMs;
        }
      } catch {
        // Left at -1, as a vanished file.
      }
    }
    Atomics.add(counts, 1, to - from);
    if (once) return;
  }
}

const STAT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
const { base, paths, counts, out, chunk } = workerData;
(${String(statChunks)})(lstatSync, base, paths, new Int32Array(counts), new Float64Array(out), chunk);
parentPort.postMessage('done');
`;

/**
 * statFiles for `paths` found by walkBacklog (inside the root by construction: names of folders read
 * from it, none hidden), as an array along them: size and modification time of path `i` at `2i` and
 * `2i + 1`, -1 where statFiles leaves the path out (no object per file: a start compares them with the
 * cache's columns). From STAT_ASIDE_FILES paths in a worker thread: a start at 50,000 files stats them
 * (about a second on one thread) while the main thread reads the persisted index; `help()` (the main
 * thread, once it would otherwise wait) takes chunks of what is left beside the thread. statFilesHere when
 * the thread cannot run.
 */
export function statFilesAlong(
  root: string,
  paths: string[],
): { stats: Promise<Float64Array>; help: () => void } {
  if (paths.length < STAT_ASIDE_FILES) return { stats: statFilesHere(root, paths), help: () => undefined };
  // The walk's paths are plain names joined by '/' (no '.', '..' nor empty part): joined as strings, not
  // by path.join, which normalized each (a quarter of the thread's time at 50,000 files).
  const base = joinedBase(root);
  const counts = new Int32Array(new SharedArrayBuffer(8));
  const out = new Float64Array(new SharedArrayBuffer(16 * paths.length)).fill(-1);
  let doneHere!: () => void;
  const stats = new Promise<Float64Array>((resolve) => {
    doneHere = () => resolve(out);
    const data = { base, paths, counts: counts.buffer, out: out.buffer, chunk: STAT_CHUNK };
    void statInThread(data).then((done) => resolve(done ? out : statFilesHere(root, paths)));
  });
  const help = () => {
    statChunks(lstatSync, base, paths, counts, out, STAT_CHUNK);
    // Every path done (a chunk the thread took is counted once it is written): no wait for the thread.
    if (Atomics.load(counts, 1) === paths.length) doneHere();
  };
  return { stats, help };
}

/** `root` as the start of a walked path joined as a string. */
function joinedBase(root: string): string {
  return root.endsWith(sep) || root.endsWith('/') ? root : root + sep;
}

/**
 * statFilesAlong on this thread (below STAT_ASIDE_FILES, or when the thread cannot run): statChunks a
 * chunk at a time, the event loop running between two.
 */
async function statFilesHere(root: string, paths: string[]): Promise<Float64Array> {
  const base = joinedBase(root);
  const counts = new Int32Array(2);
  const out = new Float64Array(2 * paths.length).fill(-1);
  for (;;) {
    statChunks(lstatSync, base, paths, counts, out, STAT_BATCH, true);
    if (counts[1] === paths.length) return out;
    await new Promise((next) => setImmediate(next));
  }
}

/** Runs STAT_WORKER; whether it went through every chunk (false: it could not run, or failed). */
async function statInThread(data: Record<string, unknown>): Promise<boolean> {
  // Started now, not after an import resolves (which waits for the event loop, while the main thread
  // reads the cache and then takes chunks itself): getBuiltinModule from Node 20.16.
  const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const { Worker } =
    (builtin?.('node:worker_threads') as typeof import('node:worker_threads') | undefined) ??
    (await import('node:worker_threads'));
  return new Promise<boolean>((resolve) => {
    try {
      const worker = new Worker(STAT_WORKER, { eval: true, workerData: data });
      worker.once('message', (m) => resolve(m === 'done'));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    } catch {
      resolve(false);
    }
  });
}

function fileDiagnostic(path: string, code: string, message: string, level: Diagnostic['level'] = 'warning') {
  return { item: null, diagnostics: [{ level, path, line: null, code, message }] };
}

/** The diagnostic of a symbolic link the backlog does not follow. */
export function linkDiagnostic(path: string): Diagnostic {
  return {
    level: 'warning',
    path,
    line: null,
    code: 'symbolic_link',
    message: 'a symbolic link; never followed (it could lead outside the backlog), not indexed',
  };
}

/** parse-file.ts with zod ready for its checks: loaded when the first file is read (issue #23). */
async function fileParser(): Promise<typeof import('./parse-file.js')> {
  const [parser] = await Promise.all([import('./parse-file.js'), loadTaskSchema()]);
  return parser;
}

/** Reads and parses one file; links, files outside the root, unreadable, binary or oversized files become diagnostics. */
export async function loadFile(
  root: string,
  relPath: string,
  format: BacklogFormat = nativeFormat,
): Promise<{ item: BacklogItem | null; diagnostics: Diagnostic[] }> {
  try {
    const { bytes, stats, complete } = await readInsideRoot(root, relPath, MAX_FILE_BYTES);
    if (!complete)
      return fileDiagnostic(
        relPath,
        'file_too_large',
        `${stats.size} bytes is over the ${MAX_FILE_BYTES}-byte limit; not indexed`,
      );
    if (bytes.subarray(0, 8192).includes(0))
      return fileDiagnostic(relPath, 'binary_file', 'looks binary (NUL bytes); not indexed');
    const { parseFile } = await fileParser();
    return parseFile(
      { path: relPath, size: stats.size, mtime_ms: stats.mtimeMs },
      bytes.toString('utf8'),
      format,
    );
  } catch (err) {
    if (isBacklogError(err) && err.code === 'FORBIDDEN_PATH')
      return err.details.reason === 'link'
        ? { item: null, diagnostics: [linkDiagnostic(relPath)] }
        : fileDiagnostic(relPath, 'outside_root', `${err.message}; not indexed`, 'error');
    // Gone since it was listed (deleted, renamed): nothing to report.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { item: null, diagnostics: [] };
    return fileDiagnostic(relPath, 'unreadable', (err as Error).message, 'error');
  }
}

/** Loads the whole backlog. Duplicate ids are reported; the later file stays searchable under its path. */
export async function loadBacklog(
  root: string,
  format: BacklogFormat = nativeFormat,
  onProgress?: (done: number, total: number) => void,
): Promise<LoadResult> {
  const { files, links } = await walkBacklog(root);
  const loaded = await loadFiles(root, files, format, onProgress);
  loaded.diagnostics.unshift(...format.configDiagnostics);
  loaded.diagnostics.push(...links.map(linkDiagnostic));
  return loaded;
}

const STATE_RANK: Record<string, number> = { active: 0, completed: 1, draft: 2, archived: 3 };
const rank = (item: BacklogItem) => (item.state ? STATE_RANK[item.state] : 0);

/**
 * Which of two files that claim one id keeps it: the one in the livelier state (active, completed,
 * draft, archived: Backlog.md's own order when it looks a task up), then the first in path order.
 */
export function keepsId(a: BacklogItem, b: BacklogItem): boolean {
  return rank(a) !== rank(b) ? rank(a) < rank(b) : a.path < b.path;
}

/**
 * The id of a file that lost its id to another: the id qualified by where the file stands,
 * `BACK-569@archived` (a task's state, else its type), and `-2`, `-3` ... while that is taken too.
 * Readable and typed as it is shown; the file's path and resource URI keep working as well.
 */
export function duplicateId(item: BacklogItem, writtenId: string, taken: (id: string) => boolean): string {
  const base = `${writtenId}@${item.state ?? item.type}`;
  let id = base;
  for (let n = 2; taken(id); n++) id = `${base}-${n}`;
  return id;
}

/** The file that lost its id to `ownerPath`, addressed by `newId` from now on. An archived copy is only a note. */
export function duplicateDiagnostic(
  item: BacklogItem,
  writtenId: string,
  ownerPath: string,
  newId: string,
): Diagnostic {
  return {
    level: item.state === 'archived' ? 'info' : 'warning',
    path: item.path,
    line: null,
    code: 'duplicate_id',
    message: `id ${writtenId} is already used by ${ownerPath}; this file is ${newId} (or ${resourceUri(item.path)})`,
  };
}

/**
 * Gives each id to one item (keepsId); the others get a qualified id (duplicateId; `item.id` changed in
 * place), each with a diagnostic. `owners` holds the items that already have their ids, by idKey.
 */
export function settleDuplicateIds(
  items: BacklogItem[],
  owners = new Map<string, BacklogItem>(),
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const item of items) {
    const key = idKey(item.id);
    const owner = owners.get(key);
    if (!owner) {
      owners.set(key, item);
      continue;
    }
    const [keeper, loser] = keepsId(item, owner) ? [item, owner] : [owner, item];
    const id = duplicateId(loser, loser.id, (candidate) => owners.has(idKey(candidate)));
    diagnostics.push(duplicateDiagnostic(loser, loser.id, keeper.path, id));
    loser.id = id;
    owners.set(key, keeper);
    owners.set(idKey(id), loser);
  }
  return diagnostics;
}

/** Loads these files (paths relative to `root`), with the same duplicate-id rule as loadBacklog. */
export async function loadFiles(
  root: string,
  paths: string[],
  format: BacklogFormat = nativeFormat,
  onProgress?: (done: number, total: number) => void,
): Promise<LoadResult> {
  const items: BacklogItem[] = [];
  const diagnostics: Diagnostic[] = [];
  const loaded = await mapLimit(paths, 32, (p) => loadFile(root, p, format), onProgress);
  for (const { item, diagnostics: d } of loaded) {
    diagnostics.push(...d);
    if (item) items.push(item);
  }
  diagnostics.push(...settleDuplicateIds(items));
  return { items, diagnostics, files: paths.length };
}

async function mapLimit<T, R>(
  inputs: T[],
  limit: number,
  fn: (x: T) => Promise<R>,
  onProgress?: (done: number, total: number) => void,
): Promise<R[]> {
  const out = new Array<R>(inputs.length);
  let next = 0;
  let done = 0;
  async function worker(): Promise<void> {
    while (next < inputs.length) {
      const i = next++;
      out[i] = await fn(inputs[i]);
      onProgress?.(++done, inputs.length);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, worker));
  return out;
}

// Atomic writes live in ./write-file.ts (with the clean-up of what killed writers leave behind).
export { writeFileAtomic } from './write-file.js';
