/**
 * This user's key for signing what backlog-search derives into a backlog's `.cache/` (the persisted index,
 * the embedding cache and its chunk plans): kept outside every backlog (`~/.config/backlog-search/cache-key`,
 * mode 0600), so a cache file someone else made (a pull, a planted file, another user) never checks out.
 */
import { createHmac, randomBytes, type Hmac } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { userConfigDir } from './user-config.js';

/** Where the signing key is kept: outside every backlog, readable by this user only. */
export function cacheKeyPath(): string {
  return join(userConfigDir(), 'cache-key');
}

let cacheKey: Promise<Buffer> | undefined;

/**
 * This user's key for signing caches, made on first use. When it cannot be stored (a read-only home),
 * a key for this process only: caches still work within the process, and the next start rebuilds.
 */
export function signingKey(): Promise<Buffer> {
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

/** An HMAC-SHA256 under this user's key, for a file of `kind` (so one kind's signature never fits another). */
export async function cacheMac(kind: string): Promise<Hmac> {
  return createHmac('sha256', await signingKey()).update(`backlog-search ${kind}\0`);
}

/** Bytes of a cacheMac signature. */
export const CACHE_MAC_BYTES = 32;
