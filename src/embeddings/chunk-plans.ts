/**
 * Each document's chunk hashes, kept beside the embedding cache (`<cache file>.chunks`), so that a process
 * that only reads cached vectors (a one-shot search) finds which vectors a document has without chunking
 * and hashing it again: that took 0.1-0.3 s of CPU on the Backlog.md folder, on the critical path of a
 * hybrid one-shot (docs/performance.md). Written with the cache by the processes that save it (`index`,
 * servers). A document is found by a hash of its title and body, under a fingerprint of the chunker (its
 * version, the model and chunk options, and the chunks it makes of a sample text): a file written by
 * another chunker is ignored, as is a truncated or corrupt one. A document not in the file is chunked.
 *
 * File layout: "BSCHUNK2", the fingerprint (20 bytes), the number of documents (u32 LE), then per
 * document its key (20 bytes), its number of chunks (u32 LE) and their hashes (20 bytes each); last,
 * an HMAC-SHA256 of everything before it under this user's cache key (storage/cache-key.ts): a file
 * planted in a pulled `.cache/` would send a document to other chunks' vectors (docs/security.md).
 * The first layout ("BSCHUNK\0", an unkeyed SHA-1) is not read.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { CACHE_MAC_BYTES, cacheMac } from '../storage/cache-key.js';
import { readRegularFile } from '../storage/read-file.js';
import { writeFileAtomic } from '../storage/write-file.js';
import { chunkText, type ChunkOptions } from './chunk.js';

/** Bump with any change to chunk.ts that changes the chunks of some text (the sample may not show it). */
export const CHUNKER_VERSION = 1;

const MAGIC = Buffer.from('BSCHUNK2', 'latin1');
const HASH = 20;
/** What the signature of a chunk plans file is made for (cacheMac): no other file's fits. */
const MAC_KIND = 'chunk plans 2';

const SAMPLE_TITLE = 'Sample: the chunker fingerprint';
const SAMPLE_BODY = [
  '## Description',
  '',
  'A [link](https://example.com) and `code`, **bold** and _emphasis_; a list:',
  '',
  '- [ ] one item',
  '- [x] another',
  '',
  '```',
  'fenced # not a heading',
  '```',
  '',
  '| a | b |',
  '|---|---|',
  '| c | d |',
  '',
  '## Notes',
  '',
  Array.from({ length: 260 }, (_, i) => `word${i % 37}`).join(' '),
].join('\n');

/** The key of a document: the SHA-1 of its title and body. */
export function documentKey(title: string, body: string): string {
  return createHash('sha1').update(title).update('\0').update(body).digest('hex');
}

/** What a chunk plans file must have been written under to be used (see the module comment). */
export function chunkerFingerprint(modelId: string, options: ChunkOptions): string {
  const sample = chunkText(SAMPLE_TITLE, SAMPLE_BODY, options).map((c) => c.text);
  return createHash('sha1')
    .update(JSON.stringify([CHUNKER_VERSION, modelId, options, sample]))
    .digest('hex');
}

/** The chunk plans file beside a cache file. */
export function chunkPlansPath(cachePath: string): string {
  return `${cachePath}.chunks`;
}

/** Document key -> chunk hashes (hex), from the file; empty when it is missing, another chunker's, or damaged. */
export async function readChunkPlans(path: string, fingerprint: string): Promise<Map<string, string[]>> {
  const plans = new Map<string, string[]>();
  let buf: Buffer;
  try {
    ({ bytes: buf } = await readRegularFile(path));
  } catch {
    return plans;
  }
  const head = MAGIC.length + HASH + 4;
  if (buf.length < head + CACHE_MAC_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return plans;
  if (buf.toString('hex', MAGIC.length, MAGIC.length + HASH) !== fingerprint) return plans;
  const end = buf.length - CACHE_MAC_BYTES;
  const sum = (await cacheMac(MAC_KIND)).update(buf.subarray(0, end)).digest();
  if (!timingSafeEqual(sum, buf.subarray(end))) return plans;
  const count = buf.readUInt32LE(MAGIC.length + HASH);
  let at = head;
  for (let d = 0; d < count; d++) {
    if (at + HASH + 4 > end) return new Map();
    const key = buf.toString('hex', at, at + HASH);
    const n = buf.readUInt32LE(at + HASH);
    at += HASH + 4;
    if (at + n * HASH > end) return new Map();
    const hashes: string[] = [];
    for (let i = 0; i < n; i++, at += HASH) hashes.push(buf.toString('hex', at, at + HASH));
    plans.set(key, hashes);
  }
  return at === end ? plans : new Map();
}

/** Writes the plans (document key, its chunk hashes) atomically. */
export async function writeChunkPlans(
  path: string,
  fingerprint: string,
  plans: [string, string[]][],
): Promise<void> {
  let size = MAGIC.length + HASH + 4 + CACHE_MAC_BYTES;
  for (const [, hashes] of plans) size += HASH + 4 + hashes.length * HASH;
  const buf = Buffer.alloc(size);
  MAGIC.copy(buf, 0);
  buf.write(fingerprint, MAGIC.length, 'hex');
  buf.writeUInt32LE(plans.length, MAGIC.length + HASH);
  let at = MAGIC.length + HASH + 4;
  for (const [key, hashes] of plans) {
    buf.write(key, at, 'hex');
    buf.writeUInt32LE(hashes.length, at + HASH);
    at += HASH + 4;
    for (const h of hashes) at += buf.write(h, at, 'hex');
  }
  (await cacheMac(MAC_KIND)).update(buf.subarray(0, at)).digest().copy(buf, at);
  await writeFileAtomic(path, buf);
}
