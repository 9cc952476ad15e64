import { createHash, timingSafeEqual, type Hmac } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { stat } from 'node:fs/promises';
import { CACHE_MAC_BYTES, cacheMac } from '../storage/cache-key.js';
import { openRegularFile, READ_FLAGS, readRegularFile } from '../storage/read-file.js';
import { writeFileAtomic } from '../storage/write-file.js';
import { join } from 'node:path';
import { dequantizeKernel, dequantizeRow } from './quantized.js';
import { wasm, WASM_PAGE } from './wasm-api.js';

/**
 * File layout (little-endian), version 2:
 *
 *   0   8 bytes  magic "BSEMBED\0"
 *   8   u32      format version
 *   12  u32      dims
 *   16  u32      count
 *   20  u32      byte length L of the model id
 *   24  u32      encoding: 0 = Float32, 1 = Int8 with one Float32 scale per vector
 *   28  L bytes  model id (UTF-8), zero-padded to a multiple of 4
 *   H   count x 20 bytes   SHA-1 of each chunk text
 *   V   f32: count x dims x 4 bytes, Float32 vectors in the same order
 *       i8:  count x 4 bytes of Float32 scales, then count x dims Int8 values (v[i] = q[i] * scale),
 *            zero-padded to a multiple of 4
 *   E   32 bytes           HMAC-SHA256 of bytes [0, E) under this user's cache key (storage/cache-key.ts)
 *
 * Version 1 ended with an unkeyed SHA-1: a file planted in a pulled `.cache/` checked out, and its vectors
 * reordered hybrid results (docs/security.md). A file that another key signed is ignored and rebuilt.
 */
export const CACHE_FORMAT_VERSION = 2;
/** What the signature of an embedding cache file is made for (cacheMac): no other file's fits. */
const MAC_KIND = `embedding cache ${CACHE_FORMAT_VERSION}`;
const MAGIC = Buffer.from('BSEMBED\0', 'latin1');
const HASH_BYTES = 20;
const HEADER_BYTES = 28;

/**
 * How vectors are stored on disk. `f32` (default) is exact. `i8` is a quarter of the vector bytes
 * (536 B a chunk at 512 dims instead of 2,068): each vector scaled so its largest component is 127; a
 * cosine read back differs by about 1e-3. The cache holds its vectors in memory in the same encoding
 * (an `i8` cache is a quarter of the memory too); `get` always gives Float32 unit vectors.
 */
export type CacheEncoding = 'f32' | 'i8';
const ENCODINGS: CacheEncoding[] = ['f32', 'i8'];

function dataBytes(encoding: CacheEncoding, count: number, dims: number): number {
  return encoding === 'f32' ? count * dims * 4 : count * 4 + pad4(count * dims);
}

/** Content hash of a chunk text: hex SHA-1 of its UTF-8 bytes. */
export function hashText(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/** The cache file for a model in `dir`: readable name plus a hash, so ids that slug alike never share a file. */
export function cacheFileFor(dir: string, modelId: string): string {
  const slug = modelId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return join(dir, `embeddings-${slug}-${hashText(modelId).slice(0, 8)}.bin`);
}

const pad4 = (n: number) => (n + 3) & ~3;

/** Hashes written, and bytes checksummed, between two turns of the event loop while a file is built. */
const WRITE_SLICE_ROWS = 1024;
const WRITE_SLICE_BYTES = 512 * 1024;
/** Lets the event loop run (timers, a worker's reply) before going on. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The dims a cache file's header gives, when it is a cache file of this format (an older one is not read). */
function headerDims(head: Buffer): number | undefined {
  if (!head.subarray(0, 8).equals(MAGIC) || head.readUInt32LE(8) !== CACHE_FORMAT_VERSION) return undefined;
  return head.readUInt32LE(12) || undefined;
}

/**
 * Embeddings of chunk texts for one model, keyed by the SHA-1 of the text, kept in memory and saved as one
 * binary file (atomically: writeFileAtomic, a temp file, fsync, rename). A file that is truncated, corrupt, from another model,
 * dims or format version is ignored with a warning in `warnings`, never an exception.
 *
 * Vectors returned by `get` never change afterwards, so they are safe to keep: in `f32` they are views into
 * the cache's storage (a stored row is written once, and compaction on `save` moves data to new storage),
 * in `i8` they are new arrays, dequantized and renormalized (what a reload of the file gives).
 */
export class EmbeddingCache {
  readonly path: string;
  readonly warnings: string[] = [];
  /** f32: the vectors, row after row. */
  private arena = new Float32Array(0);
  /** i8: the quantized vectors, row after row, and each row's scale. */
  private q = new Int8Array(0);
  private scales = new Float32Array(0);
  private rows = 0;
  private readonly byHash = new Map<string, number>();
  private changed = false;
  private saving: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dir: string,
    readonly modelId: string,
    readonly dims: number,
    readonly encoding: CacheEncoding,
  ) {
    this.path = cacheFileFor(dir, modelId);
    this.reserve(64);
  }

  /** Room for `capacity` rows in this encoding's storage, keeping the first `this.rows`. */
  private reserve(capacity: number): void {
    const d = this.dims;
    if (this.encoding === 'f32') {
      const arena = new Float32Array(capacity * d);
      arena.set(this.arena.subarray(0, this.rows * d));
      this.arena = arena;
    } else {
      const q = new Int8Array(capacity * d);
      q.set(this.q.subarray(0, this.rows * d));
      const scales = new Float32Array(capacity);
      scales.set(this.scales.subarray(0, this.rows));
      this.q = q;
      this.scales = scales;
    }
  }

  private get capacity(): number {
    return this.encoding === 'f32' ? this.arena.length / this.dims : this.scales.length;
  }

  /**
   * Opens the cache of `modelId` in `dir`, loading its file when there is a valid one (in either encoding;
   * the next save writes `options.encoding`). Never throws on a bad file.
   */
  static async open(
    dir: string,
    modelId: string,
    dims: number,
    options: { encoding?: CacheEncoding } = {},
  ): Promise<EmbeddingCache> {
    const cache = new EmbeddingCache(dir, modelId, dims, options.encoding ?? 'f32');
    await cache.load();
    return cache;
  }

  /**
   * The dims of the cache file of `modelId` in `dir`, read from its header alone; undefined when there is
   * no such file or it is not one (a one-shot command decides from this whether to read it at all).
   */
  static async peekDims(dir: string, modelId: string): Promise<number | undefined> {
    let fh;
    try {
      fh = await openRegularFile(cacheFileFor(dir, modelId));
      const head = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await fh.read(head, 0, HEADER_BYTES, 0);
      return bytesRead < HEADER_BYTES ? undefined : headerDims(head);
    } catch {
      return undefined;
    } finally {
      await fh?.close();
    }
  }

  /**
   * peekDims without leaving the thread: a one-shot's early start (early-start.ts) decides from it whether
   * to start the model's worker, and each await of the asynchronous one (open, stat, read, close) let the
   * rest of the open run first (its modules load, ~0.05-0.1 s of this thread), which the worker then waited for.
   * The same checks: no link followed, no wait on a FIFO, a regular file only.
   */
  static peekDimsSync(dir: string, modelId: string): number | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(cacheFileFor(dir, modelId), READ_FLAGS);
      if (!fstatSync(fd).isFile()) return undefined;
      const head = Buffer.alloc(HEADER_BYTES);
      return readSync(fd, head, 0, HEADER_BYTES, 0) < HEADER_BYTES ? undefined : headerDims(head);
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Number of cached vectors. */
  get size(): number {
    return this.byHash.size;
  }

  /** Bytes of the vectors held in memory. */
  get memoryBytes(): number {
    return this.arena.byteLength + this.q.byteLength + this.scales.byteLength;
  }

  /** True when there is something `save` would write. */
  get dirty(): boolean {
    return this.changed;
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  /** The vectors of `hashes` in order (undefined where not cached) and the positions that are missing. */
  get(hashes: string[]): { vectors: (Float32Array | undefined)[]; missing: number[] } {
    const vectors: (Float32Array | undefined)[] = [];
    const missing: number[] = [];
    const rows: number[] = [];
    hashes.forEach((h, i) => {
      const row = this.byHash.get(h);
      if (row === undefined) missing.push(i);
      rows.push(row ?? -1);
    });
    // i8: every vector dequantized into one new array, each a view of its part (an array per vector, 5,692
    // on the Backlog.md folder, cost a one-shot hybrid search its allocations and the collections they set off).
    const d = this.dims;
    const found = rows.filter((r) => r >= 0);
    const all = this.encoding === 'i8' ? dequantizeRows(this.q, this.scales, found, d) : null;
    let at = 0;
    for (const row of rows) {
      if (row < 0) vectors.push(undefined);
      else if (!all) vectors.push(this.arena.subarray(row * d, row * d + d));
      else vectors.push(all.subarray(at * d, ++at * d));
    }
    return { vectors, missing };
  }

  /**
   * i8 only: the stored rows of `hashes` (undefined where not cached) and the storage they index, for a
   * VectorIndex to dequantize straight into its matrix (`upsertQuantized`: the vectors `get` gives). The
   * arrays are the cache's own, valid until the next `put` or `retain`: read them at once, never write.
   */
  quantized(
    hashes: string[],
  ): { q: Int8Array; scales: Float32Array; rows: (number | undefined)[] } | undefined {
    if (this.encoding !== 'i8') return undefined;
    return { q: this.q, scales: this.scales, rows: hashes.map((h) => this.byHash.get(h)) };
  }

  /** Stores vectors (a hash already present keeps its vector: same text, same model, same vector). */
  put(hashes: string[], vectors: Float32Array[]): void {
    if (hashes.length !== vectors.length) throw new Error('put: hashes and vectors differ in length');
    const d = this.dims;
    for (let i = 0; i < hashes.length; i++) {
      if (this.byHash.has(hashes[i])) continue;
      const v = vectors[i];
      if (v.length !== d) throw new Error(`put: vector of ${v.length} dims, cache holds ${d}`);
      if (this.rows + 1 > this.capacity) this.reserve(Math.max(64, this.capacity * 2));
      if (this.encoding === 'f32') this.arena.set(v, this.rows * d);
      else quantize(v, this.q, this.rows * d, this.scales, this.rows);
      this.byHash.set(hashes[i], this.rows++);
      this.changed = true;
    }
  }

  /** Keeps only the given hashes (the chunks still in use); returns how many were dropped. */
  retain(hashes: Iterable<string>): number {
    const keep = new Set(hashes);
    let dropped = 0;
    for (const h of [...this.byHash.keys()]) {
      if (!keep.has(h)) {
        this.byHash.delete(h);
        dropped++;
      }
    }
    if (dropped > 0) this.changed = true;
    return dropped;
  }

  /** Writes the file when anything changed (atomic: temp file + fsync + rename). Returns whether it wrote. */
  save(): Promise<boolean> {
    const run = this.saving.then(() => this.write());
    this.saving = run.catch(() => undefined);
    return run;
  }

  /** Bytes of the cache file on disk (0 when there is none). */
  async sizeOnDisk(): Promise<number> {
    try {
      return (await stat(this.path)).size;
    } catch {
      return 0;
    }
  }

  /**
   * Writes the file in slices of {@link WRITE_SLICE_ROWS} hashes and {@link WRITE_SLICE_BYTES} of checksum,
   * giving the event loop a turn between two: on the Backlog.md folder the whole file took 40-60 ms of the
   * main thread in one piece, which a query arriving meanwhile waited for (docs/performance.md). Rows
   * 0..count-1 do not change while it runs: `put` only appends, and storage is compacted here alone.
   */
  private async write(): Promise<boolean> {
    if (!this.changed) return false;
    this.changed = false;
    this.compact();
    const d = this.dims;
    const id = Buffer.from(this.modelId, 'utf8');
    const hashes = [...this.byHash.keys()];
    const count = hashes.length;
    const h = HEADER_BYTES + pad4(id.length);
    const v = h + count * HASH_BYTES;
    const e = v + dataBytes(this.encoding, count, d);
    // Not zero-filled in one piece (its pages are first touched by the slices below): only the padding is.
    const buf = Buffer.allocUnsafeSlow(e + CACHE_MAC_BYTES);
    buf.fill(0, HEADER_BYTES + id.length, h);
    const vectorBytes = this.encoding === 'f32' ? count * d * 4 : count * 4 + count * d;
    buf.fill(0, v + vectorBytes, e);
    MAGIC.copy(buf, 0);
    buf.writeUInt32LE(CACHE_FORMAT_VERSION, 8);
    buf.writeUInt32LE(d, 12);
    buf.writeUInt32LE(count, 16);
    buf.writeUInt32LE(id.length, 20);
    buf.writeUInt32LE(ENCODINGS.indexOf(this.encoding), 24);
    id.copy(buf, HEADER_BYTES);
    for (let from = 0; from < count; from += WRITE_SLICE_ROWS) {
      if (from > 0) await turn();
      const to = Math.min(count, from + WRITE_SLICE_ROWS);
      for (let row = from; row < to; row++) buf.write(hashes[row], h + row * HASH_BYTES, HASH_BYTES, 'hex');
    }
    // The vectors' bytes, in slices too (the first touch of a fresh buffer's pages is what costs).
    const parts =
      this.encoding === 'f32'
        ? [() => this.arena.subarray(0, count * d)]
        : [() => this.scales.subarray(0, count), () => this.q.subarray(0, count * d)];
    let at = v;
    for (const part of parts) {
      const bytes = part().byteLength;
      for (let from = 0; from < bytes; from += WRITE_SLICE_BYTES) {
        await turn();
        // Read again after each turn: a `put` meanwhile may have moved the storage (its rows unchanged).
        const src = part();
        const end = Math.min(bytes, from + WRITE_SLICE_BYTES);
        buf.set(new Uint8Array(src.buffer, src.byteOffset + from, end - from), at + from);
      }
      at += bytes;
    }
    const sum = await cacheMac(MAC_KIND);
    for (let from = 0; from < e; from += WRITE_SLICE_BYTES) {
      await turn();
      sum.update(buf.subarray(from, Math.min(e, from + WRITE_SLICE_BYTES)));
    }
    sum.digest().copy(buf, e);

    try {
      await writeFileAtomic(this.path, buf);
    } catch (err) {
      this.changed = true;
      throw err;
    }
    return true;
  }

  /**
   * Storage rows in the order of `byHash`, 0..size-1, as a reload of the file gives. New storage only when
   * rows were dropped (`retain`) or are out of order: f32 views handed out by `get` keep the old one,
   * unchanged. Already compact (the usual case: rows are only appended between two saves), nothing moves.
   */
  private compact(): void {
    let row = 0;
    let inOrder = this.rows === this.byHash.size;
    for (const r of this.byHash.values()) if (!inOrder || r !== row++) inOrder = false;
    if (inOrder) return;
    const d = this.dims;
    const count = this.byHash.size;
    const arena = this.encoding === 'f32' ? new Float32Array(count * d) : this.arena;
    const q = this.encoding === 'i8' ? new Int8Array(count * d) : this.q;
    const scales = this.encoding === 'i8' ? new Float32Array(count) : this.scales;
    row = 0;
    for (const [hash, r] of this.byHash) {
      if (this.encoding === 'f32') arena.set(this.arena.subarray(r * d, r * d + d), row * d);
      else {
        q.set(this.q.subarray(r * d, r * d + d), row * d);
        scales[row] = this.scales[r];
      }
      this.byHash.set(hash, row++);
    }
    this.arena = arena;
    this.q = q;
    this.scales = scales;
    this.rows = count;
  }

  private async load(): Promise<void> {
    let buf: Buffer;
    try {
      ({ bytes: buf } = await readRegularFile(this.path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.warnings.push(
          `embedding cache ${this.path} unreadable (${(err as Error).message}); starting empty`,
        );
      return;
    }
    const problem = this.check(buf, await cacheMac(MAC_KIND));
    if (problem) {
      this.warnings.push(`embedding cache ${this.path} ignored: ${problem}; it will be rebuilt`);
      return;
    }
    const d = this.dims;
    const count = buf.readUInt32LE(16);
    const encoding = ENCODINGS[buf.readUInt32LE(24)];
    const h = HEADER_BYTES + pad4(buf.readUInt32LE(20));
    const v = h + count * HASH_BYTES;
    // Copied into aligned storage of our own (a Buffer's offset is not always a multiple of 4).
    const data = buf.buffer.slice(
      buf.byteOffset + v,
      buf.byteOffset + v + dataBytes(encoding, count, d),
    ) as ArrayBuffer;
    const scales = encoding === 'i8' ? new Float32Array(data, 0, count) : undefined;
    const q = scales ? new Int8Array(data, count * 4, count * d) : undefined;
    if (this.encoding === 'i8' && q && scales) {
      this.q = q;
      this.scales = scales;
    } else if (this.encoding === 'i8') {
      this.reserve(count);
      const f32 = new Float32Array(data, 0, count * d);
      for (let r = 0; r < count; r++) quantize(f32.subarray(r * d, r * d + d), this.q, r * d, this.scales, r);
    } else {
      this.arena = new Float32Array(count * d);
      if (q && scales) dequantize(q, scales, count, d, this.arena);
      else this.arena.set(new Float32Array(data, 0, count * d));
    }
    for (let i = 0; i < count; i++) {
      this.byHash.set(buf.toString('hex', h + i * HASH_BYTES, h + (i + 1) * HASH_BYTES), i);
    }
    // Stored in another encoding than asked: the next save rewrites it.
    if (encoding !== this.encoding && count > 0) this.changed = true;
    this.rows = count;
  }

  /** Why `buf` is not a usable cache for this model, or undefined when it is (`mac`: a fresh cacheMac). */
  private check(buf: Buffer, mac: Hmac): string | undefined {
    if (endianness() !== 'LE') return 'this machine is big-endian and the cache format is little-endian';
    if (buf.length < HEADER_BYTES + CACHE_MAC_BYTES || !buf.subarray(0, 8).equals(MAGIC))
      return 'not an embedding cache file';
    const version = buf.readUInt32LE(8);
    if (version !== CACHE_FORMAT_VERSION)
      return `format version ${version}, expected ${CACHE_FORMAT_VERSION}`;
    const idLength = buf.readUInt32LE(20);
    if (HEADER_BYTES + idLength > buf.length) return 'truncated header';
    const id = buf.toString('utf8', HEADER_BYTES, HEADER_BYTES + idLength);
    if (id !== this.modelId) return `written by model "${id}", expected "${this.modelId}"`;
    const dims = buf.readUInt32LE(12);
    if (dims !== this.dims) return `${dims} dims, expected ${this.dims}`;
    const count = buf.readUInt32LE(16);
    const encoding = ENCODINGS[buf.readUInt32LE(24)];
    if (!encoding) return `unknown vector encoding ${buf.readUInt32LE(24)}`;
    const e = HEADER_BYTES + pad4(idLength) + count * HASH_BYTES + dataBytes(encoding, count, dims);
    if (buf.length !== e + CACHE_MAC_BYTES)
      return `${buf.length} bytes, expected ${e + CACHE_MAC_BYTES} (truncated or corrupt)`;
    const sum = mac.update(buf.subarray(0, e)).digest();
    if (!timingSafeEqual(sum, buf.subarray(e)))
      return 'checksum mismatch (corrupt, or not signed by this user on this machine)';
    return undefined;
  }
}

/** Symmetric Int8 quantization of one vector: q = round(v / scale), scale = max |v| / 127. */
function quantize(v: Float32Array, out: Int8Array, at: number, scales: Float32Array, row: number): void {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]));
  const scale = max / 127;
  scales[row] = scale;
  if (scale === 0) return;
  for (let i = 0; i < v.length; i++) out[at + i] = Math.round(v[i] / scale);
}

/** Rows from which the kernel is used: below, copying the whole cache into its memory costs more than it saves. */
const KERNEL_MIN_ROWS = 64;

/**
 * Rows `rows` of `q` as unit Float32 vectors, one after the other in one new array (in WebAssembly memory
 * of its own when the kernel runs: nothing else writes there, so views of it never change).
 */
function dequantizeRows(q: Int8Array, scales: Float32Array, rows: number[], dims: number): Float32Array {
  const n = rows.length;
  const deqModule = n >= KERNEL_MIN_ROWS ? dequantizeKernel() : null;
  if (!deqModule || !wasm) {
    const out = new Float32Array(n * dims);
    rows.forEach((row, j) => dequantizeRow(q, scales, row, dims, out, j * dims));
    return out;
  }
  // [out: n x dims f32] [scales f32] [rows i32] [q i8]
  const outAt = 0;
  const scalesAt = outAt + n * dims * 4;
  const rowsAt = scalesAt + scales.byteLength;
  const qAt = rowsAt + n * 4;
  const memory = new wasm.Memory({ initial: Math.ceil((qAt + q.byteLength) / WASM_PAGE) });
  const { exports } = new wasm.Instance(deqModule, { env: { memory } });
  const buf = memory.buffer;
  new Float32Array(buf, scalesAt, scales.length).set(scales);
  new Int32Array(buf, rowsAt, n).set(rows);
  new Int8Array(buf, qAt, q.length).set(q);
  (exports.deq as (q: number, s: number, r: number, n: number, d: number, o: number) => void)(
    qAt,
    scalesAt,
    rowsAt,
    n,
    dims,
    outAt,
  );
  return new Float32Array(buf, outAt, n * dims);
}

/** Int8 rows back to Float32, renormalized to unit length (a zero vector stays zero). */
function dequantize(
  q: Int8Array,
  scales: Float32Array,
  count: number,
  dims: number,
  out: Float32Array,
): void {
  for (let r = 0; r < count; r++) dequantizeRow(q, scales, r, dims, out, r * dims);
}
