/**
 * Three of TF.js's WebAssembly kernels replaced for the bundled model (USE Lite), which spent a third of
 * its CPU time in two avoidable ways (`node --cpu-prof`, docs/embeddings.md "Embedding speed"):
 *
 * - `Slice` and `SplitV`: the backend's own `slice` reads its input with `backend.readSync`, which copies
 *   the whole tensor out of the WebAssembly heap into a new array before it copies the part it wants, and
 *   `splitV` slices once per part: splitting a tensor in n copied it n times. Here the input is read
 *   through a view of the heap and only the part asked for is copied: the same bytes, the same vectors.
 * - `BatchMatMul` with batch dimensions (attention: texts x heads products of 128 x 128): TF.js runs
 *   those in a plain blocked loop and only a batch of one through XNNPACK. Here each batch item is an
 *   XNNPACK product of its own, on tensors registered at offsets inside the inputs (no copy). The sums
 *   run in another order: vectors differ by at most ~2e-7 per component (cosine >= 0.9999999 with the
 *   loop's), well under what the int8 cache rounds away (5.8e-4), so cached vectors stay valid.
 */

interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}
interface WasmBackend {
  makeOutput(shape: number[], dtype: string, memoryOffset?: number): TensorInfo;
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array;
  disposeData(dataId: object): boolean;
  dataIdMap: { get(dataId: object): { id: number; memoryOffset: number }; delete(dataId: object): void };
  wasm: {
    cwrap(name: string, ret: null, args: string[]): (...args: unknown[]) => void;
    tfjs: { disposeData(id: number): void };
  };
}
interface KernelArgs {
  inputs: Record<string, TensorInfo>;
  backend: WasmBackend;
  attrs: Record<string, unknown>;
}
type KernelFunc = (args: KernelArgs) => TensorInfo | TensorInfo[];
interface KernelConfig {
  kernelName: string;
  backendName: string;
  kernelFunc: KernelFunc;
  setupFunc?: unknown;
  disposeFunc?: unknown;
}
/** The parts of @energetic-ai/core (TF.js) used here. */
export interface KernelCore {
  getKernel(name: string, backend: string): KernelConfig | undefined;
  unregisterKernel(name: string, backend: string): void;
  registerKernel(config: KernelConfig): void;
  slice_util: {
    parseSliceParams(x: TensorInfo, begin: number[], size?: number[]): [number[], number[]];
    isSliceContinous(shape: number[], begin: number[], size: number[]): boolean;
    computeFlatOffset(begin: number[], strides: number[]): number;
  };
  backend_util: {
    prepareSplitSize(x: TensorInfo, numOrSizeSplits: number | number[], axis: number): number[];
  };
  util: {
    computeStrides(shape: number[]): number[];
    sizeFromShape(shape: number[]): number;
    parseAxisParam(axis: number | number[], shape: number[]): number[];
  };
}

/** TF.js's own kernels, by name, while ours stand in their place. */
const originals = new Map<string, KernelConfig>();

/** Which of the kernels above are ours (both by default). */
export interface FasterKernels {
  /** Slice and SplitV (the same bytes as TF.js's). */
  slice?: boolean;
  /** BatchMatMul with batch dimensions (the same products, summed in another order). */
  matmul?: boolean;
}

/**
 * Puts the kernels above in place of TF.js's WebAssembly ones, or TF.js's back (`{ slice: false }`...),
 * in this thread; a kernel missing from this TF.js is left alone. Tests compare both.
 */
export function useFasterKernels(core: KernelCore, which: FasterKernels = {}): void {
  const transpose = core.getKernel('Transpose', 'wasm');
  const slice = which.slice ?? true;
  swap(core, 'Slice', slice, (o) => sliceKernel(core, o));
  swap(core, 'SplitV', slice, (o) => splitKernel(core, o));
  swap(core, 'BatchMatMul', (which.matmul ?? true) && transpose !== undefined, (o) =>
    batchMatMulKernel(core, o, transpose as KernelConfig),
  );
}

function swap(core: KernelCore, name: string, ours: boolean, make: (original: KernelConfig) => KernelFunc) {
  const original = originals.get(name);
  if (ours === (original !== undefined)) return;
  if (original) {
    core.unregisterKernel(name, 'wasm');
    core.registerKernel(original);
    originals.delete(name);
    return;
  }
  const theirs = core.getKernel(name, 'wasm');
  if (!theirs) return;
  originals.set(name, theirs);
  core.unregisterKernel(name, 'wasm');
  core.registerKernel({ ...theirs, kernelFunc: make(theirs) });
}

/** `x[begin : begin + size]` into a new tensor, reading `x` through a view of the heap. */
function sliceOf(core: KernelCore, x: TensorInfo, begin: number[], size: number[], backend: WasmBackend) {
  const out = backend.makeOutput(size, x.dtype);
  if (core.util.sizeFromShape(size) === 0) return out;
  // Views taken after makeOutput, which may grow the heap (and detach views taken before).
  const from = backend.typedArrayFromHeap(x);
  const to = backend.typedArrayFromHeap(out);
  const strides = core.util.computeStrides(x.shape);
  if (core.slice_util.isSliceContinous(x.shape, begin, size)) {
    const at = core.slice_util.computeFlatOffset(begin, strides);
    to.set(from.subarray(at, at + to.length));
    return out;
  }
  // Not continuous (rank >= 2): the innermost rows one by one.
  const rank = size.length;
  const row = size[rank - 1];
  const index = new Array<number>(rank - 1).fill(0);
  for (let written = 0; ; written += row) {
    let at = begin[rank - 1];
    for (let d = 0; d < rank - 1; d++) at += (begin[d] + index[d]) * strides[d];
    to.set(from.subarray(at, at + row), written);
    let d = rank - 2;
    while (d >= 0 && ++index[d] === size[d]) index[d--] = 0;
    if (d < 0) return out;
  }
}

function sliceKernel(core: KernelCore, original: KernelConfig): KernelFunc {
  return (args) => {
    const { x } = args.inputs;
    if (x.dtype === 'string' || x.shape.length === 0) return original.kernelFunc(args);
    const [begin, size] = core.slice_util.parseSliceParams(
      x,
      args.attrs.begin as number[],
      args.attrs.size as number[],
    );
    return sliceOf(core, x, begin, size, args.backend);
  };
}

function splitKernel(core: KernelCore, original: KernelConfig): KernelFunc {
  return (args) => {
    const { x } = args.inputs;
    if (x.dtype === 'string' || x.shape.length === 0) return original.kernelFunc(args);
    const axis = core.util.parseAxisParam(args.attrs.axis as number, x.shape)[0];
    const sizes = core.backend_util.prepareSplitSize(x, args.attrs.numOrSizeSplits as number[], axis);
    const begin = new Array<number>(x.shape.length).fill(0);
    return sizes.map((s) => {
      const size = [...x.shape];
      size[axis] = s;
      const part = sliceOf(core, x, [...begin], size, args.backend);
      begin[axis] += s;
      return part;
    });
  };
}

/**
 * A product with batch dimensions as one XNNPACK product per batch item (TF.js's `BatchMatMul` entry
 * point takes that path for a batch of one, b as [k, n]). A transposed b is transposed once first.
 */
function batchMatMulKernel(core: KernelCore, original: KernelConfig, transpose: KernelConfig): KernelFunc {
  let product: ((...args: unknown[]) => void) | undefined;
  return (args) => {
    const { backend } = args;
    const { a, b } = args.inputs;
    const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
    const rank = a.shape.length;
    const outer = a.shape.slice(0, -2);
    const batch = core.util.sizeFromShape(outer);
    const m = a.shape[rank - 2];
    const k = a.shape[rank - 1];
    const n = transposeB ? b.shape[rank - 2] : b.shape[rank - 1];
    if (
      transposeA ||
      batch <= 1 ||
      m * k * n === 0 ||
      a.dtype !== 'float32' ||
      b.dtype !== 'float32' ||
      b.shape.length !== rank ||
      outer.some((d, i) => d !== b.shape[i])
    )
      return original.kernelFunc(args);
    product ??= backend.wasm.cwrap('BatchMatMul', null, [
      ...['number', 'array', 'number'], // a: id, shape, rank
      ...['number', 'array', 'number'], // b
      ...['number', 'number', 'number'], // transposeA, transposeB, out id
    ]);
    const bk = transposeB
      ? (transpose.kernelFunc({
          inputs: { x: { dataId: b.dataId, shape: [batch, n, k], dtype: b.dtype } },
          backend,
          attrs: { perm: [0, 2, 1] },
        }) as TensorInfo)
      : b;
    const out = backend.makeOutput([...outer, m, n], 'float32');
    const offset = (t: TensorInfo) => backend.dataIdMap.get(t.dataId).memoryOffset;
    const [aAt, bAt, outAt] = [offset(a), offset(bk), offset(out)];
    const shape = (rows: number, cols: number) => new Uint8Array(new Int32Array([1, rows, cols]).buffer);
    const [aShape, bShape] = [shape(m, k), shape(k, n)];
    for (let i = 0; i < batch; i++) {
      // Tensors registered at offsets inside a, b and out: unregistered after (which also drops the
      // XNNPACK operator TF.js caches on b), never freed (the memory is a's, b's and out's).
      const views = [
        backend.makeOutput([1, m, k], 'float32', aAt + i * m * k * 4),
        backend.makeOutput([1, k, n], 'float32', bAt + i * k * n * 4),
        backend.makeOutput([1, m, n], 'float32', outAt + i * m * n * 4),
      ];
      const [ai, bi, oi] = views.map((v) => backend.dataIdMap.get(v.dataId).id);
      try {
        product(ai, aShape, 3, bi, bShape, 3, false, false, oi);
      } finally {
        for (const v of views) {
          backend.wasm.tfjs.disposeData(backend.dataIdMap.get(v.dataId).id);
          backend.dataIdMap.delete(v.dataId);
        }
      }
    }
    if (bk !== b) backend.disposeData(bk.dataId);
    return out;
  };
}
