/**
 * The signed file under a cache: 8 magic bytes, an HMAC-SHA256 of the body (32 bytes), the body. What
 * the body holds is index-cache.ts's business; this module only reads, checks and signs, and imports
 * nothing but Node, so a one-shot command can start reading its cache before it loads the rest of the
 * program (prefetchSignedFile).
 *
 * The key lives outside every backlog (`~/.config/backlog-search/cache-key`, mode 0600): a backlog
 * arrives with `git pull`, and a cache someone else made is never read.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, read } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEMO_BACKLOG_DIR, DEMO_CACHE_DIR } from '../storage/demo.js';
import { userConfigDir } from '../storage/user-config.js';

const MAGIC = Buffer.from('BLSCACH2');
const MAC_BYTES = 32;
const HEAD_BYTES = MAGIC.length + MAC_BYTES;
/** The index cache's file name in a cache folder. */
export const CACHE_FILE = 'index.bin';

/** Where a backlog's derived data goes when no other folder is given: `.cache/` in it (the demo's: the package's). */
export function defaultCacheDir(dir: string): string {
  return dir === DEMO_BACKLOG_DIR ? DEMO_CACHE_DIR : join(dir, '.cache');
}

/** The cache folder of the backlog at `dir` when none is passed: `BACKLOG_CACHE_DIR`, else defaultCacheDir. */
export function cacheDirFor(dir: string): string {
  return process.env.BACKLOG_CACHE_DIR || defaultCacheDir(dir);
}

/** Where the signing key is kept: outside every backlog, readable by this user only. */
export function cacheKeyPath(): string {
  return join(userConfigDir(), 'cache-key');
}

let cacheKey: Promise<Buffer> | undefined;

/**
 * This user's key for signing caches, made on first use. When it cannot be stored (a read-only home),
 * a key for this process only: caches still work within the process, and the next start rebuilds.
 */
function signingKey(): Promise<Buffer> {
  cacheKey ??= (async () => {
    const path = cacheKeyPath();
    const existing = await readFile(path).catch(() => null);
    if (existing && existing.length >= 32) return existing;
    const key = randomBytes(32);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(path, key, { mode: 0o600, flag: 'wx' });
      await chmod(path, 0o600);
      return key;
    } catch (err) {
      // Another process made it first: use theirs.
      const theirs = await readFile(path).catch(() => null);
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && theirs && theirs.length >= 32) return theirs;
      return key;
    }
  })();
  return cacheKey;
}

async function mac(body: Uint8Array): Promise<Buffer> {
  return createHmac('sha256', await signingKey())
    .update(body)
    .digest();
}

/** The file's bytes for `body`: magic, signature, body. */
export async function signedFile(body: Buffer): Promise<Buffer> {
  return Buffer.concat([MAGIC, await mac(body), body]);
}

export type SignedRead = { body: Buffer } | { reason: string; missing?: boolean };

const NOT_OURS = 'not a backlog-search cache file of this version';
const MISMATCH = 'checksum mismatch (truncated, corrupt, or not signed by this user on this machine)';

/** The body of a signed file, or why it cannot be used (`missing`: there is none yet, not worth a warning). */
export async function readSignedFile(path: string): Promise<SignedRead> {
  const early = prefetched.get(path);
  prefetched.delete(path);
  const bytes = (await early) ?? (await readFile(path).catch(() => null));
  if (!bytes) return { reason: 'no cache yet', missing: true };
  if (bytes.length < HEAD_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC))
    return { reason: NOT_OURS };
  const body = bytes.subarray(HEAD_BYTES);
  return timingSafeEqual(await mac(body), bytes.subarray(MAGIC.length, HEAD_BYTES))
    ? { body }
    : { reason: MISMATCH };
}

/** Reads started by prefetchSignedFile (null: it could not read the whole file; readSignedFile tries again). */
const prefetched = new Map<string, Promise<Buffer | null>>();

/**
 * Starts reading `path` for the next readSignedFile of it, as one read on libuv's threads (readFile
 * reads 512 KB at a time, each part waiting for the main thread), so a one-shot command reads its cache
 * while it compiles the modules it then needs (issue #23; docs/performance.md). The signature is
 * checked when the file is taken. Never throws.
 */
export function prefetchSignedFile(path: string): void {
  if (prefetched.has(path)) return;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return;
  }
  prefetched.set(
    path,
    new Promise<Buffer | null>((resolve) => {
      try {
        const size = fstatSync(fd).size;
        const bytes = Buffer.allocUnsafeSlow(size);
        read(fd, bytes, 0, size, 0, (err, got) => {
          closeSync(fd);
          resolve(!err && got === size ? bytes : null);
        });
      } catch {
        closeSync(fd);
        resolve(null);
      }
    }),
  );
}
