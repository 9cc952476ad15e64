/**
 * The int8 vectors of the embedding cache (cache.ts) back to Float32: one row in JavaScript, many in a
 * WebAssembly kernel (the same bits), used by the cache and by the vector index, which dequantizes cached
 * vectors straight into its matrix.
 */
import { compileKernel, type WasmModule } from './wasm-api.js';

/** Row `row` of `q` back to Float32 at `out[at..]`, renormalized; offsets, not subarrays (a view each costs). */
export function dequantizeRow(
  q: Int8Array,
  scales: Float32Array,
  row: number,
  dims: number,
  out: Float32Array,
  at: number,
): void {
  const base = row * dims;
  const scale = scales[row];
  let sum = 0;
  for (let i = 0; i < dims; i++) {
    const x = q[base + i] * scale;
    out[at + i] = x;
    sum += x * x;
  }
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < dims; i++) out[at + i] *= inv;
  }
}

/**
 * The kernel of `dequantizeRow` in WebAssembly, for many rows at once: a one-shot hybrid search dequantizes
 * every cached vector (5,692 x 512 on the Backlog.md folder), and it runs before V8's optimizing compiler is
 * on (src/cli/main.ts), where the JavaScript loop took about 0.2 s of CPU. The same operations in the same
 * order (f64 products and sum, each stored value rounded to f32 as a Float32Array store does), so the same
 * bits. Compiled from this text format (wat2wasm):
 *
 *   (module
 *     (import "env" "memory" (memory 1))
 *     ;; for j < n: row = rows[j]; out[j*dims ..] = dequantizeRow(q, scales, row)
 *     (func (export "deq") (param $q i32) (param $scales i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
 *       ;; base = q + row*dims; scale = f64(scales[row]); o = out + j*dims*4; sum = 0
 *       ;; for i < dims: x = f64(i8 at base+i) * scale; f32 at o+4i = f32(x); sum += x*x
 *       ;; if sum > 0: inv = 1 / sqrt(sum); for i < dims: f32 at o+4i = f32(f64(f32 at o+4i) * inv)
 *     ))
 */
const DEQUANTIZE_WASM =
  'AGFzbQEAAAABCgFgBn9/f39/fwACDwEDZW52Bm1lbW9yeQIAAQMCAQAHBwEDZGVxAAAK9AEB8QECBH8EfAJAA0AgBiADTw0BIAAgAiAGQQJ0aigCACAEbGohCCABIAIgBkECdGooAgBBAnRqKgIAuyEKIAUgBiAEbEECdGohCUQAAAAAAAAAACELQQAhBwJAA0AgByAETw0BIAggB2osAAC3IAqiIQwgCSAHQQJ0aiAMtjgCACALIAwgDKKgIQsgB0EBaiEHDAALCyALRAAAAAAAAAAAZARARAAAAAAAAPA/IAufoyENQQAhBwJAA0AgByAETw0BIAkgB0ECdGogCSAHQQJ0aioCALsgDaK2OAIAIAdBAWohBwwACwsLIAZBAWohBgwACwsL';

let deqModule: WasmModule | null | undefined;

/** The compiled kernel (export `deq`, memory imported as env.memory), or null where WebAssembly is not available. */
export function dequantizeKernel(): WasmModule | null {
  if (deqModule === undefined) deqModule = compileKernel(DEQUANTIZE_WASM);
  return deqModule;
}

/** The kernel's signature (byte offsets in its memory): out[j] = rows[j] of q, for j < n. */
export type DequantizeFn = (
  q: number,
  scales: number,
  rows: number,
  n: number,
  dims: number,
  out: number,
) => void;
