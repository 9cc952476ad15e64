/**
 * The signed file under a cache: 8 magic bytes, an HMAC-SHA256 of the body (32 bytes), the body. What
 * the body holds is index-cache.ts's business; this module only reads, checks and signs, and imports
 * nothing but Node, so a one-shot command can start reading its cache before it loads the rest of the
 * program (prefetchSignedFile).
 *
 * The key lives outside every backlog (`~/.config/backlog-search/cache-key`, mode 0600): a backlog
 * arrives with `git pull`, and a cache someone else made is never read.
 *
 * The stamp (`<file>.stamp`, beside it): checking the signature is a SHA-256 over the whole file (263 MB
 * at 50,000 documents: about a second). Once a file was written or checked, its stamp records an HMAC,
 * under the same key, of the file's signature and of its identity and status as the kernel keeps them:
 * device, inode, size, modification and change time in nanoseconds. A file whose status still matches
 * its stamp is the one checked. Its bytes cannot have changed since: any write, truncation, rename or
 * replacement gives another change time (ctime), which no unprivileged process can set, or another
 * inode. A stamp cannot be forged without the key, nor reused for another file. A stamp that does not
 * match (a copied, replaced or touched file, another key, a torn write) only means the whole signature
 * is checked, as before, and the file stamped again. Not used where the change time is coarse (whole
 * milliseconds) or can be set by its owner (Windows). What this gives up: a change that the kernel does
 * not see (a disk that silently flips a bit) is no longer caught by the signature; the reader's own
 * checks (packed.ts, index-cache.ts, the index's loads) still refuse malformed bytes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, read, readSync, type BigIntStats } from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_BACKLOG_DIR, DEMO_CACHE_DIR } from '../storage/demo.js';
import { signingKey } from '../storage/cache-key.js';
import { openRegularFile, READ_FLAGS } from '../storage/read-file.js';
import { unreadBuffer } from '../storage/unread-bytes.js';

const MAGIC = Buffer.from('BLSCACH2');
const STAMP_MAGIC = Buffer.from('BLSSTMP1');
const MAC_BYTES = 32;
const HEAD_BYTES = MAGIC.length + MAC_BYTES;
export { cacheKeyPath } from '../storage/cache-key.js';
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

async function mac(body: Uint8Array): Promise<Buffer> {
  return createHmac('sha256', await signingKey())
    .update(body)
    .digest();
}

/** The file's bytes for `body`: magic, signature, body. */
export async function signedFile(body: Buffer): Promise<Buffer> {
  return Buffer.concat([MAGIC, await mac(body), body]);
}

/** `checked`: how the body was found to be this user's: its stamp, or its whole signature. */
export type SignedRead =
  { body: Buffer; checked: 'stamp' | 'signature' } | { reason: string; missing?: boolean };

/**
 * A file's bytes and its status after they were read, through one descriptor (so the status is that of
 * those bytes' file, and any change made to it while they were read shows in its change time).
 */
interface FileRead {
  bytes: Buffer;
  stat: BigIntStats;
}

/** Where a file's stamp is kept: beside it. */
export function stampPath(path: string): string {
  return `${path}.stamp`;
}

/** The stamp of a file with this status and signature (null: its change time cannot be trusted). */
async function stampOf(stat: BigIntStats, signature: Uint8Array): Promise<Buffer | null> {
  if (process.platform === 'win32' || stat.ctimeNs % 1_000_000n === 0n) return null;
  const status = [stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs].join(':');
  return Buffer.concat([
    STAMP_MAGIC,
    createHmac('sha256', await signingKey())
      .update(`backlog-search stamp 1:${status}:`)
      .update(signature)
      .digest(),
  ]);
}

/**
 * Records that the file at `path`, as `stat` describes it, has `signature` and was written or checked
 * by this user. Best effort (a read-only folder keeps checking signatures); a torn stamp only fails to match.
 */
export async function stampSignedFile(path: string, stat: BigIntStats, signature: Uint8Array): Promise<void> {
  const stamp = await stampOf(stat, signature);
  if (!stamp) return;
  // A file of its own, renamed over the stamp: a link planted at the stamp's path is replaced, not followed.
  const tmp = `${stampPath(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, stamp, { flag: 'wx', mode: 0o600 });
    await rename(tmp, stampPath(path));
  } catch {
    await unlink(tmp).catch(() => undefined);
  }
}

/** The stamp's bytes when it is a regular file of exactly `size` bytes, else null. */
async function readStamp(path: string, size: number): Promise<Buffer | null> {
  const fh = await openRegularFile(stampPath(path)).catch(() => null);
  if (!fh) return null;
  try {
    const st = await fh.stat();
    if (st.size !== size) return null;
    const bytes = Buffer.alloc(size);
    const { bytesRead } = await fh.read(bytes, 0, size, 0);
    return bytesRead === size ? bytes : null;
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

/** The signature in a signed file's bytes (written by signedFile). */
export function signatureOf(bytes: Uint8Array): Uint8Array {
  return bytes.subarray(MAGIC.length, HEAD_BYTES);
}

const NOT_OURS = 'not a backlog-search cache file of this version';
const MISMATCH = 'checksum mismatch (truncated, corrupt, or not signed by this user on this machine)';

/** The body of a signed file, or why it cannot be used (`missing`: there is none yet, not worth a warning). */
export async function readSignedFile(path: string): Promise<SignedRead> {
  const early = prefetched.get(path);
  prefetched.delete(path);
  const read = (await early) ?? (await readChecked(path));
  if (!read) return { reason: 'no cache yet', missing: true };
  if ('unread' in read) return { body: read.unread, checked: 'stamp' };
  const { bytes, stat } = read;
  if (bytes.length < HEAD_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC))
    return { reason: NOT_OURS };
  const body = bytes.subarray(HEAD_BYTES);
  const signature = signatureOf(bytes);
  if (BigInt(bytes.length) === stat.size) {
    const expected = await stampOf(stat, signature);
    const stamp = expected && (await readStamp(path, expected.length));
    if (expected && stamp && timingSafeEqual(stamp, expected)) return { body, checked: 'stamp' };
  }
  if (!timingSafeEqual(await mac(body), signature)) return { reason: MISMATCH };
  // Checked whole: the next read of the same file needs only its status.
  if (BigInt(bytes.length) === stat.size) await stampSignedFile(path, stat, signature);
  return { body, checked: 'signature' };
}

/**
 * A file whose stamp matches its status (the one written or checked), as a body read when first needed
 * (unread-bytes.ts: a one-shot reads the parts it uses); else its bytes and status, read whole for the
 * signature (null: no such file, or it cannot be read). Never throws.
 */
async function readChecked(path: string): Promise<FileRead | { unread: Buffer } | null> {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return null;
  }
  let owned = false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) return null;
    const size = Number(stat.size);
    if (size > HEAD_BYTES) {
      const head = Buffer.alloc(HEAD_BYTES);
      if (
        readSync(fd, head, 0, HEAD_BYTES, 0) === HEAD_BYTES &&
        head.subarray(0, MAGIC.length).equals(MAGIC)
      ) {
        const expected = await stampOf(stat, signatureOf(head));
        const stamp = expected && (await readStamp(path, expected.length));
        if (expected && stamp && timingSafeEqual(stamp, expected)) {
          owned = true;
          return { unread: unreadBuffer(fd, HEAD_BYTES, size - HEAD_BYTES) };
        }
      }
    }
    owned = true;
    return await readWhole(fd);
  } catch {
    return null;
  } finally {
    if (!owned) closeSync(fd);
  }
}

/**
 * The whole file as one read on libuv's threads (readFile reads 512 KB at a time, each part waiting for
 * the main thread), and its status after the read (a change during it shows in the change time). Closes `fd`.
 */
function readWhole(fd: number): Promise<FileRead | null> {
  return new Promise<FileRead | null>((resolve) => {
    try {
      const size = fstatSync(fd).size;
      const bytes = Buffer.allocUnsafeSlow(size);
      read(fd, bytes, 0, size, 0, (err, got) => {
        try {
          resolve(!err && got === size ? { bytes, stat: fstatSync(fd, { bigint: true }) } : null);
        } catch {
          resolve(null);
        } finally {
          closeSync(fd);
        }
      });
    } catch {
      closeSync(fd);
      resolve(null);
    }
  });
}

/** Reads started by prefetchSignedFile (null: it could not read the file; readSignedFile tries again). */
const prefetched = new Map<string, Promise<FileRead | { unread: Buffer } | null>>();

/**
 * Starts reading `path` for the next readSignedFile of it while a one-shot command compiles the modules it
 * then needs (issue #23; docs/performance.md): its stamp, and the whole file only when the stamp does not
 * match (the signature is then checked when the file is taken). Never throws.
 */
export function prefetchSignedFile(path: string): void {
  if (prefetched.has(path)) return;
  prefetched.set(path, readChecked(path));
}
