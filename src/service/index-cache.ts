/**
 * The persisted index: everything `openBacklog` derives from the files (parsed items, diagnostics, the
 * Orama index) in one file under `.cache/`, so a restart re-reads only the files that changed.
 *
 * Layout: 8 magic bytes, the SHA-1 of the body (20 bytes), then the body: gzip (level 1, on libuv's
 * thread pool) of the msgpack of `{ version, files, items, diagnostics, index }`, where `index` is
 * OramaSearchService.serialize(). Gzip takes the Backlog.md folder's cache from 5.3 to 1.9 MB.
 * A wrong magic, a checksum mismatch (truncated or corrupt file) or another version (schema,
 * settings or format changed) makes the cache unusable; the caller rebuilds from the files.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { decode, encode } from '@msgpack/msgpack';
import { writeFileAtomic } from '../storage/backlog-store.js';
import type { BacklogItem, Diagnostic } from '../storage/types.js';

const MAGIC = Buffer.from('BLSCACHE');
const HASH_BYTES = 20;
/**
 * Bump when the layout of the cache or of the index inside it changes. 3: the BM25F fields as binary
 * (term dictionary, forward index and document frequencies; FIELD_INDEX_FORMAT 2).
 */
export const CACHE_FORMAT = 3;
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
export const CACHE_FILE = 'index.bin';

export interface FileStat {
  size: number;
  mtime_ms: number;
}

export interface CacheSnapshot {
  files: Record<string, FileStat>;
  items: BacklogItem[];
  diagnostics: Diagnostic[];
  index: Uint8Array;
}

/** Version of a cache: any change of format, schema or settings gives another. */
export function cacheVersion(parts: unknown): string {
  return createHash('sha1')
    .update(JSON.stringify({ format: CACHE_FORMAT, parts }))
    .digest('hex');
}

export async function writeIndexCache(
  path: string,
  version: string,
  snapshot: CacheSnapshot,
): Promise<number> {
  const body = await gzipAsync(encode({ version, ...snapshot }), { level: 1 });
  const hash = createHash('sha1').update(body).digest();
  const bytes = Buffer.concat([MAGIC, hash, body]);
  await writeFileAtomic(path, bytes);
  return bytes.length;
}

/** The snapshot, or why there is none (`missing` is not worth a warning; the rest is). */
export async function readIndexCache(
  path: string,
  version: string,
): Promise<{ snapshot: CacheSnapshot } | { reason: string; missing?: boolean }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return { reason: 'no cache yet', missing: true };
  }
  if (bytes.length < MAGIC.length + HASH_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC))
    return { reason: 'not a backlog-search cache file' };
  const body = bytes.subarray(MAGIC.length + HASH_BYTES);
  const hash = createHash('sha1').update(body).digest();
  if (!hash.equals(bytes.subarray(MAGIC.length, MAGIC.length + HASH_BYTES)))
    return { reason: 'checksum mismatch (truncated or corrupt)' };
  try {
    const decoded = decode(await gunzipAsync(body)) as CacheSnapshot & { version: string };
    if (decoded.version !== version) return { reason: 'made with other settings or an older version' };
    return {
      snapshot: {
        files: decoded.files,
        items: decoded.items,
        diagnostics: decoded.diagnostics,
        index: decoded.index,
      },
    };
  } catch (err) {
    return { reason: `unreadable (${(err as Error).message})` };
  }
}
