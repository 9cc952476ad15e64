/**
 * The installed command's module loader (scripts/bundle-cli.mjs, issue #23): the bundle's chunks are
 * CommonJS files (dist/bin/*.cjs) compiled here by vm.Script with a V8 code cache, so that a start
 * deserializes the chunks it loads instead of parsing them (Node 20 has no compile cache for ES modules;
 * `module.enableCompileCache` is Node 22.1+, and is called too when it exists, for what Node loads
 * itself). The tsc build (dist/cli/) never uses this file.
 *
 * The cache is code: it lives outside every backlog, in the user's cache folder
 * ($XDG_CACHE_HOME or ~/.cache, then backlog-search/code/<node>-<arch>-<bundle>/), a folder made 0700; a
 * file or folder not owned by this user, writable by others, or a symbolic link is ignored. A file is
 * `<chunk>.<v8 tag>` (the tag: V8's version and flag hash, which lookups change at run time), written at
 * exit (temp file + rename) for each chunk compiled without an accepted cache; it starts with the SHA-1 of
 * the chunk's source and of the data (V8 itself checks only the source's length, and its version and
 * flags). Any error: no cache, silently.
 * BACKLOG_CODE_CACHE=0 turns it off. docs/security.md, "The code cache".
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import * as nodeModule from 'node:module';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

/** Set by scripts/bundle-cli.mjs: a hash of the bundle's files. */
declare const __BS_BUNDLE_ID: string | undefined;

const here = fileURLToPath(import.meta.url);
const binDir = dirname(here);
const nodeRequire = createRequire(here);
/** Chunks smaller than this are compiled without the cache (--version's): reading it costs more. */
const MIN_CACHED = 8 << 10;
/** Bundles whose caches are kept (other versions installed beside this one); older ones are removed. */
const KEEP_BUNDLES = 3;
const HEAD =
  '(function (exports, require, module, __filename, __dirname, __bsLoad, __bsImport, __bsUrl, __bsResolve) {';
const TAIL = '\n})';

interface Loaded {
  exports: unknown;
}
interface Compiled {
  file: string;
  script: Script;
  hash: Buffer;
}

const modules = new Map<string, Loaded>();
/** Chunks whose cache is to be written at exit. */
const toWrite: Compiled[] = [];
let cacheDir: string | null | undefined;

/**
 * `import("./x.js")` of a chunk, in the entry and in the chunks. Loaded after the I/O already waiting, as
 * an ES module's import() reads its files: the MCP server opens the backlog (loading the search's chunks)
 * while it answers `initialize`, which waited behind a synchronous load (+0.1 s).
 */
export function loadChunk(spec: string): Promise<unknown> {
  return new Promise((done, fail) =>
    setImmediate(() => {
      try {
        done(requireChunk(spec));
      } catch (err) {
        fail(err);
      }
    }),
  );
}

function requireChunk(spec: string): unknown {
  return spec.startsWith('./') ? load(spec.slice(2).replace(/\.js$/, '.cjs')) : nodeRequire(spec);
}

function load(file: string): unknown {
  const known = modules.get(file);
  if (known) return known.exports;
  const module: Loaded = { exports: {} };
  modules.set(file, module);
  const filename = join(binDir, file);
  // ASCII only (the build escapes the rest): a one-byte string, read as fast as it gets.
  const bytes = readFileSync(filename);
  const source = bytes.toString('latin1');
  const wrapped = HEAD + source + TAIL;
  const dir = source.length >= MIN_CACHED ? codeCacheDir() : null;
  let script: Script;
  if (dir) {
    const hash = sha1(bytes);
    const path = join(dir, `${file}.${v8Tag()}`);
    const cachedData = readCache(path, hash);
    script = new Script(wrapped, { filename, cachedData });
    if (!cachedData || script.cachedDataRejected) {
      if (toWrite.length === 0) process.once('exit', writeCaches);
      toWrite.push({ file, script, hash });
    }
  } else script = new Script(wrapped, { filename });
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  try {
    fn(
      module.exports,
      requireChunk,
      module,
      filename,
      binDir,
      loadChunk,
      importFromBin,
      pathToFileURL(filename).href,
      resolve,
    );
  } catch (err) {
    modules.delete(file); // as Node's require: a chunk that failed is not half there for the next import
    throw err;
  }
  return module.exports;
}

/** node:crypto when first needed: loading it costs --version (whose chunk is not cached) 10% more. */
function sha1(data: Buffer): Buffer {
  const { createHash } = nodeRequire('node:crypto') as typeof import('node:crypto');
  return createHash('sha1').update(data).digest();
}

/** `import()` of anything else (Node's modules, node_modules), as from the chunks: they sit beside this file. */
export function importFromBin(spec: string): Promise<unknown> {
  return import(spec);
}

/** `import.meta.resolve` for the chunks: they sit beside this file. */
function resolve(spec: string): string {
  return import.meta.resolve(spec);
}

/**
 * V8's version and flag hash as its code cache records them, read from the header of a tiny script's
 * cache: a cache made under other flags (a lookup sets some at run time) would be rejected.
 */
function v8Tag(): string {
  const data = new Script('0').createCachedData();
  return data.subarray(4, 16).toString('hex');
}

/** The folder of this bundle's caches, checked; null when off or unusable. */
function codeCacheDir(): string | null {
  if (cacheDir !== undefined) return cacheDir;
  cacheDir = null;
  const off = process.env.BACKLOG_CODE_CACHE;
  if (off === '0' || off === 'off' || off === 'false' || typeof __BS_BUNDLE_ID !== 'string') return null;
  const xdg = process.env.XDG_CACHE_HOME;
  const root = join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'backlog-search', 'code');
  cacheDir = join(root, `${process.version}-${process.arch}-${__BS_BUNDLE_ID}`);
  try {
    if (!ours(lstatSync(root)) || !ours(lstatSync(cacheDir))) cacheDir = null;
    // Node 22.1+: its own compile cache, in the same checked folder, for what it loads itself (the
    // packages left out of the bundle, the embedding worker).
    else
      (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache?.(
        join(cacheDir, 'node'),
      );
  } catch {
    // Not made yet: made at exit by the first write.
  }
  return cacheDir;
}

/** A folder or file of this user's that no one else can write to, not a link (never on Windows: no getuid). */
function ours(st: { uid: number; mode: number; isSymbolicLink(): boolean }): boolean {
  return !st.isSymbolicLink() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0;
}

function readCache(path: string, hash: Buffer): Buffer | undefined {
  let fd: number | undefined;
  try {
    // O_NONBLOCK: a FIFO planted here must not hold the command (the fstat below then refuses it).
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
    const st = fstatSync(fd);
    if (!st.isFile() || !ours(st) || st.size <= 2 * hash.length) return undefined;
    const file = readFileSync(fd);
    // The source's hash, the data's, the data: V8 checks the data's length and flags, not every byte.
    const data = file.subarray(2 * hash.length);
    if (!file.subarray(0, hash.length).equals(hash)) return undefined;
    return file.subarray(hash.length, 2 * hash.length).equals(sha1(data)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** At exit: the caches of the chunks compiled without one, this run's functions in them. */
function writeCaches(): void {
  const dir = cacheDir;
  if (!dir) return;
  try {
    const root = dirname(dir);
    let made = false;
    try {
      lstatSync(dir);
    } catch {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      made = true;
    }
    if (!ours(lstatSync(root)) || !ours(lstatSync(dir))) return;
    if (made) prune(root, dir);
    const tag = v8Tag(); // the flags now, which the data records (a long lookup turned the compiler back on)
    for (const { file, script, hash } of toWrite) writeCache(join(dir, `${file}.${tag}`), script, hash);
  } catch {
    // A read-only home, a race with another process: the next start compiles as usual.
  }
}

/** One chunk's cache: a temporary file of this user's, renamed over the old one. */
function writeCache(path: string, script: Script, hash: Buffer): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      const data = script.createCachedData();
      writeSync(fd, hash);
      writeSync(fd, sha1(data));
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true }); // a full disk: no half file left behind
  }
}

/** Keeps the caches of the newest KEEP_BUNDLES bundles (this one among them). */
function prune(root: string, keep: string): void {
  const others = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && join(root, d.name) !== keep)
    .map((d) => ({ path: join(root, d.name), mtime: lstatSync(join(root, d.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of others.slice(KEEP_BUNDLES - 1)) rmSync(old.path, { recursive: true, force: true });
}
