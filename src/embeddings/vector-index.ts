import { TopK } from '../search/top-k.js';
import { dequantizeKernel, dequantizeRow, type DequantizeFn } from './quantized.js';
import {
  compileKernel,
  wasm,
  WASM_PAGE,
  type WasmApi,
  type WasmMemory,
  type WasmModule,
} from './wasm-api.js';

export interface VectorHit {
  docId: string;
  /** Cosine of the query and the document's best chunk (dot product of unit vectors), in [-1, 1]. */
  score: number;
  /** Index of that best chunk among the vectors given to `upsert`. */
  chunk: number;
}

export interface VectorSearchOptions {
  /** Only documents for which this returns true (called once per document per search). */
  filter?: (docId: string) => boolean;
  /** Drop documents scoring below this. */
  minScore?: number;
}

/**
 * The scoring kernel, WebAssembly with 128-bit SIMD (4 x f32x4 accumulators: 16 floats a step, so dims
 * must be a multiple of 16), about 5x the plain JavaScript loop (5 GMAC/s against 1 on this machine).
 * Compiled from this text format (wat2wasm --enable-simd):
 *
 *   (module
 *     (import "env" "memory" (memory 1))
 *     ;; out[r] = dot(m[r*dims ..], q) for r < rows, all f32
 *     (func (export "dots") (param $m i32) (param $q i32) (param $out i32) (param $rows i32) (param $dims i32)
 *       (local $r i32) (local $i i32) (local $bytes i32) (local $a v128) (local $b v128) (local $c v128) (local $d v128)
 *       (local.set $bytes (i32.shl (local.get $dims) (i32.const 2)))
 *       (block $done (loop $each_row
 *         (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
 *         ;; a, b, c, d = 0; i = 0
 *         (block $row_done (loop $each_16
 *           (br_if $row_done (i32.ge_u (local.get $i) (local.get $bytes)))
 *           ;; a += m[i..i+4] * q[i..i+4]; b, c, d likewise at offsets 16, 32, 48 bytes
 *           (local.set $i (i32.add (local.get $i) (i32.const 64)))
 *           (br $each_16)))
 *         ;; out[r] = horizontal sum of a + b + c + d
 *         (local.set $m (i32.add (local.get $m) (local.get $bytes)))
 *         (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *         (local.set $r (i32.add (local.get $r) (i32.const 1)))
 *         (br $each_row)))))
 */
const DOTS_WASM =
  'AGFzbQEAAAABCQFgBX9/f39/AAIPAQNlbnYGbWVtb3J5AgABAwIBAAcIAQRkb3RzAAAKvgIBuwICA38EeyAEQQJ0IQcCQANAIAUgA08NAf0MAAAAAAAAAAAAAAAAAAAAACEI/QwAAAAAAAAAAAAAAAAAAAAAIQn9DAAAAAAAAAAAAAAAAAAAAAAhCv0MAAAAAAAAAAAAAAAAAAAAACELQQAhBgJAA0AgBiAHTw0BIAggACAGav0ABAAgASAGav0ABAD95gH95AEhCCAJIAAgBmr9AAQQIAEgBmr9AAQQ/eYB/eQBIQkgCiAAIAZq/QAEICABIAZq/QAEIP3mAf3kASEKIAsgACAGav0ABDAgASAGav0ABDD95gH95AEhCyAGQcAAaiEGDAALCyAIIAn95AEgCiAL/eQB/eQBIQggAiAI/R8AIAj9HwGSIAj9HwIgCP0fA5KSOAIAIAAgB2ohACACQQRqIQIgBUEBaiEFDAALCws=';

let dotsModule: WasmModule | null | undefined;

/** The compiled kernel, or null where WebAssembly SIMD is not available. */
function simdKernel(): WasmModule | null {
  if (dotsModule === undefined) dotsModule = compileKernel(DOTS_WASM);
  return dotsModule;
}

/** Where the rows live and how they are scored against a query. */
interface Storage {
  /** rows x dims, row-major; valid until the next `grow`. */
  matrix: Float32Array;
  grow(rows: number): void;
  /** Scores of the first `rows` rows against `query`; valid until the next call or `grow`. */
  dots(query: Float32Array, rows: number): Float32Array;
  /** Rows `rows` of int8 `q` (a scale each), dequantized as the embedding cache does, into rows `at`... */
  dequantize(q: Int8Array, scales: Float32Array, rows: number[], at: number): void;
  readonly bytes: number;
}

/** Rows in WebAssembly memory: [matrix (capacity x dims)] [query (dims)] [scores (capacity)]. */
class SimdStorage implements Storage {
  matrix!: Float32Array;
  private query!: Float32Array;
  private scores!: Float32Array;
  private readonly memory: WasmMemory;
  private readonly kernel: (m: number, q: number, out: number, rows: number, dims: number) => void;
  /** The dequantization kernel on the same memory (writes cached vectors straight into the matrix). */
  private readonly deq: DequantizeFn | undefined;
  private capacity = 0;

  constructor(
    module: WasmModule,
    private readonly dims: number,
    rows: number,
  ) {
    const api = wasm as WasmApi;
    this.memory = new api.Memory({ initial: 1 });
    const instance = new api.Instance(module, { env: { memory: this.memory } });
    this.kernel = instance.exports.dots as SimdStorage['kernel'];
    const deq = dequantizeKernel();
    this.deq = deq
      ? (new api.Instance(deq, { env: { memory: this.memory } }).exports.deq as DequantizeFn)
      : undefined;
    this.grow(rows);
  }

  get bytes(): number {
    return this.memory.buffer.byteLength;
  }

  grow(rows: number, scratch = 0): void {
    const d = this.dims;
    const need = rows * d * 4 + d * 4 + rows * 4 + scratch;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / WASM_PAGE));
    // The matrix stays at offset 0, so its rows survive; query and scores are scratch and move.
    this.capacity = rows;
    const buf = this.memory.buffer;
    this.matrix = new Float32Array(buf, 0, rows * d);
    this.query = new Float32Array(buf, rows * d * 4, d);
    this.scores = new Float32Array(buf, rows * d * 4 + d * 4, rows);
  }

  dots(query: Float32Array, rows: number): Float32Array {
    this.query.set(query);
    this.kernel(0, this.query.byteOffset, this.scores.byteOffset, Math.min(rows, this.capacity), this.dims);
    return this.scores;
  }

  dequantize(q: Int8Array, scales: Float32Array, rows: number[], at: number): void {
    const d = this.dims;
    if (!this.deq) {
      rows.forEach((row, j) => dequantizeRow(q, scales, row, d, this.matrix, (at + j) * d));
      return;
    }
    // The document's rows and scales gathered after the scores (a few KB: a document has at most 64
    // chunks), then dequantized by the kernel into the matrix.
    const n = rows.length;
    this.grow(this.capacity, n * (8 + d));
    const buf = this.memory.buffer;
    const scalesAt = this.scores.byteOffset + this.scores.byteLength;
    const indexAt = scalesAt + n * 4;
    const qAt = indexAt + n * 4;
    const sc = new Float32Array(buf, scalesAt, n);
    const index = new Int32Array(buf, indexAt, n);
    const qs = new Int8Array(buf, qAt, n * d);
    rows.forEach((row, j) => {
      sc[j] = scales[row];
      index[j] = j;
      qs.set(q.subarray(row * d, row * d + d), j * d);
    });
    this.deq(qAt, scalesAt, indexAt, n, d, at * d * 4);
  }
}

/** Plain JavaScript fallback (dims not a multiple of 16, or no WebAssembly SIMD). */
class ArrayStorage implements Storage {
  matrix: Float32Array;
  private scores: Float32Array;

  constructor(
    private readonly dims: number,
    rows: number,
  ) {
    this.matrix = new Float32Array(rows * dims);
    this.scores = new Float32Array(rows);
  }

  get bytes(): number {
    return this.matrix.byteLength + this.scores.byteLength;
  }

  grow(rows: number): void {
    const matrix = new Float32Array(rows * this.dims);
    matrix.set(this.matrix.subarray(0, Math.min(this.matrix.length, matrix.length)));
    this.matrix = matrix;
    this.scores = new Float32Array(rows);
  }

  dequantize(q: Int8Array, scales: Float32Array, rows: number[], at: number): void {
    rows.forEach((row, j) => dequantizeRow(q, scales, row, this.dims, this.matrix, (at + j) * this.dims));
  }

  dots(query: Float32Array, rows: number): Float32Array {
    const d = this.dims;
    const m = this.matrix;
    const out = this.scores;
    const d4 = d - (d % 4);
    for (let r = 0; r < rows; r++) {
      const base = r * d;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = 0;
      for (; i < d4; i += 4) {
        s0 += m[base + i] * query[i];
        s1 += m[base + i + 1] * query[i + 1];
        s2 += m[base + i + 2] * query[i + 2];
        s3 += m[base + i + 3] * query[i + 3];
      }
      for (; i < d; i++) s0 += m[base + i] * query[i];
      out[r] = s0 + s1 + s2 + s3;
    }
    return out;
  }
}

/**
 * Flat in-memory store of chunk vectors: one Float32 matrix (rows grow by doubling), each row owned by a
 * document. A document scores as its best chunk. Search is exact: every row's dot product with the query
 * (a WebAssembly SIMD kernel when dims are a multiple of 16, else plain JavaScript), then each document's
 * best row, then a size-k heap (no full sort).
 */
export class VectorIndex {
  private storage: Storage;
  private capacity: number;
  private rows = 0;
  /** Row -> document slot, and the row's chunk number. */
  private rowSlot: Int32Array;
  private rowChunk: Int32Array;
  private readonly slotOf = new Map<string, number>();
  private slotIds: (string | undefined)[] = [];
  private slotRows: number[][] = [];
  private freeSlots: number[] = [];
  private best = new Float32Array(0);
  private bestChunk = new Int32Array(0);
  private allowed = new Uint8Array(0);

  constructor(
    readonly dims: number,
    initialRows = 1024,
  ) {
    if (!Number.isInteger(dims) || dims <= 0) throw new Error(`VectorIndex: bad dims ${dims}`);
    this.capacity = Math.max(1, initialRows);
    this.storage = VectorIndex.storageFor(dims, this.capacity);
    this.rowSlot = new Int32Array(this.capacity);
    this.rowChunk = new Int32Array(this.capacity);
  }

  private static storageFor(dims: number, rows: number): Storage {
    const kernel = dims % 16 === 0 ? simdKernel() : null;
    return kernel ? new SimdStorage(kernel, dims, rows) : new ArrayStorage(dims, rows);
  }

  /** Number of documents. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Number of chunk vectors. */
  get chunkCount(): number {
    return this.rows;
  }

  /** Bytes held by the matrix and row tables. */
  get memoryBytes(): number {
    return this.storage.bytes + this.rowSlot.byteLength + this.rowChunk.byteLength;
  }

  /** Whether scoring runs in the WebAssembly SIMD kernel. */
  get simd(): boolean {
    return this.storage instanceof SimdStorage;
  }

  has(docId: string): boolean {
    return this.slotOf.has(docId);
  }

  docIds(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  /**
   * Replaces the document's vectors (each of `dims` entries, unit length). No vectors removes the document.
   * `chunks` numbers them for the hits' `chunk` (default: their position in `vectors`).
   */
  upsert(docId: string, vectors: Float32Array[], chunks?: number[]): void {
    for (const v of vectors) {
      if (v.length !== this.dims)
        throw new Error(`VectorIndex: vector of ${v.length} dims, index holds ${this.dims}`);
    }
    const at = this.place(docId, vectors.length, chunks);
    vectors.forEach((v, i) => this.storage.matrix.set(v, (at + i) * this.dims));
  }

  /**
   * `upsert` with the vectors as the embedding cache holds them (its i8 rows `rows` of `q`, a scale each),
   * dequantized straight into the matrix: the same vectors as the cache's `get` gives, without a Float32
   * copy of each first (a one-shot hybrid search reads every cached vector: 11.6 MB of memory touched
   * for the first time on the Backlog.md folder, and the allocations).
   */
  upsertQuantized(
    docId: string,
    q: Int8Array,
    scales: Float32Array,
    rows: number[],
    chunks?: number[],
  ): void {
    const d = this.dims;
    for (const row of rows) {
      if (!Number.isInteger(row) || row < 0 || (row + 1) * d > q.length || row >= scales.length)
        throw new Error(`VectorIndex: no quantized row ${row}`);
    }
    const at = this.place(docId, rows.length, chunks);
    if (rows.length > 0) this.storage.dequantize(q, scales, rows, at);
  }

  /** Replaces the document's rows by `count` new ones at the end (their data written by the caller); returns the first. */
  private place(docId: string, count: number, chunks?: number[]): number {
    this.remove(docId);
    const at = this.rows;
    if (count === 0) return at;
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.slotIds.length;
      this.slotIds.push(undefined);
      this.slotRows.push([]);
    }
    this.slotIds[slot] = docId;
    this.slotOf.set(docId, slot);
    this.ensureCapacity(this.rows + count);
    const own: number[] = [];
    for (let chunk = 0; chunk < count; chunk++) {
      const row = this.rows++;
      this.rowSlot[row] = slot;
      this.rowChunk[row] = chunks?.[chunk] ?? chunk;
      own.push(row);
    }
    this.slotRows[slot] = own;
    return at;
  }

  /** Copies of the document's vectors, in the order `upsert` was given them (none when it is not indexed). */
  vectors(docId: string): Float32Array[] {
    const slot = this.slotOf.get(docId);
    if (slot === undefined) return [];
    const d = this.dims;
    return this.slotRows[slot].map((row) => this.storage.matrix.slice(row * d, row * d + d));
  }

  /** Removes the document; its rows are filled by moving the last rows down. Returns whether it was there. */
  remove(docId: string): boolean {
    const slot = this.slotOf.get(docId);
    if (slot === undefined) return false;
    const d = this.dims;
    const mine = [...this.slotRows[slot]].sort((a, b) => b - a);
    for (const row of mine) {
      const last = --this.rows;
      if (row !== last) {
        this.storage.matrix.copyWithin(row * d, last * d, last * d + d);
        const owner = this.rowSlot[last];
        this.rowSlot[row] = owner;
        this.rowChunk[row] = this.rowChunk[last];
        const list = this.slotRows[owner];
        list[list.indexOf(last)] = row;
      }
    }
    this.slotOf.delete(docId);
    this.slotIds[slot] = undefined;
    this.slotRows[slot] = [];
    this.freeSlots.push(slot);
    return true;
  }

  clear(): void {
    this.rows = 0;
    this.slotOf.clear();
    this.slotIds = [];
    this.slotRows = [];
    this.freeSlots = [];
  }

  /** The k documents whose best chunk is closest to `query` (a unit vector), best first; ties by doc id. */
  search(query: Float32Array, k: number, options: VectorSearchOptions = {}): VectorHit[] {
    if (query.length !== this.dims)
      throw new Error(`VectorIndex: query of ${query.length} dims, index holds ${this.dims}`);
    if (k <= 0 || this.rows === 0) return [];
    const slots = this.slotIds.length;
    if (this.best.length < slots) {
      this.best = new Float32Array(slots * 2);
      this.bestChunk = new Int32Array(slots * 2);
      this.allowed = new Uint8Array(slots * 2);
    }
    const best = this.best;
    const bestChunk = this.bestChunk;
    const allowed = this.allowed;
    best.fill(-Infinity, 0, slots);
    const filter = options.filter;
    for (let s = 0; s < slots; s++) {
      const id = this.slotIds[s];
      allowed[s] = id !== undefined && (!filter || filter(id)) ? 1 : 0;
    }

    const scores = this.storage.dots(query, this.rows);
    const rowSlot = this.rowSlot;
    const rowChunk = this.rowChunk;
    for (let r = 0; r < this.rows; r++) {
      const slot = rowSlot[r];
      const score = scores[r];
      if (score > best[slot] && allowed[slot] === 1) {
        best[slot] = score;
        bestChunk[slot] = rowChunk[r];
      }
    }

    const minScore = options.minScore ?? -Infinity;
    const heap = new TopK<Entry>(k, below);
    for (let s = 0; s < slots; s++) {
      if (allowed[s] === 0 || best[s] === -Infinity || best[s] < minScore) continue;
      heap.offer({ score: best[s], slot: s, id: this.slotIds[s] as string });
    }
    return heap.sorted().map(({ score, slot }) => ({
      docId: this.slotIds[slot] as string,
      score,
      chunk: bestChunk[slot],
    }));
  }

  /**
   * Gives back the room that growth left unused: the matrix is copied into storage for the rows held plus
   * `spare` (WebAssembly memory cannot shrink in place, so the old one is left to the garbage collector).
   * For after a bulk load, when few rows will follow.
   */
  compact(spare = 0): void {
    const cap = Math.max(1, this.rows + Math.max(0, Math.floor(spare)));
    if (cap >= this.capacity) return;
    const storage = VectorIndex.storageFor(this.dims, cap);
    storage.matrix.set(this.storage.matrix.subarray(0, this.rows * this.dims));
    this.storage = storage;
    this.resizeRowTables(cap);
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity) return;
    let cap = this.capacity;
    while (cap < rows) cap *= 2;
    this.storage.grow(cap);
    this.resizeRowTables(cap);
  }

  private resizeRowTables(cap: number): void {
    const rowSlot = new Int32Array(cap);
    rowSlot.set(this.rowSlot.subarray(0, this.rows));
    const rowChunk = new Int32Array(cap);
    rowChunk.set(this.rowChunk.subarray(0, this.rows));
    this.rowSlot = rowSlot;
    this.rowChunk = rowChunk;
    this.capacity = cap;
  }
}

interface Entry {
  score: number;
  slot: number;
  id: string;
}

/** `a` ranks below `b`: lower score, or equal score and a later id. */
function below(a: Entry, b: Entry): boolean {
  return a.score < b.score || (a.score === b.score && a.id > b.id);
}
