import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createBundledEmbedder } from '../src/embeddings/bundled.js';
import { useFasterKernels, type KernelCore } from '../src/embeddings/bundled-kernels.js';
import type { Embedder } from '../src/embeddings/types.js';
import { dot } from '../src/embeddings/vector.js';

// The parts of TF.js these tests call.
interface Tensor {
  shape: number[];
  dataSync(): Float32Array;
  dispose(): void;
}
interface Tf {
  tensor(values: Float32Array, shape: number[]): Tensor;
  slice(x: Tensor, begin: number[], size: number[]): Tensor;
  split(x: Tensor, sizes: number[], axis: number): Tensor[];
  matMul(a: Tensor, b: Tensor, transposeA?: boolean, transposeB?: boolean): Tensor;
  getBackend(): string;
  memory(): { numTensors: number };
  backend(): { numDataIds(): number };
}

let tf: Tf;
let core: KernelCore;
let bundled: Embedder;

beforeAll(async () => {
  bundled = await createBundledEmbedder(); // sets up TF.js's WebAssembly backend, with our kernels
  tf = (await import('@energetic-ai/core')) as unknown as Tf;
  core = tf as unknown as KernelCore;
}, 60_000);

afterEach(() => useFasterKernels(core)); // as the embedder left them

/** Seeded values, so a failure repeats. */
function values(n: number, seed: number): Float32Array {
  let s = seed;
  return Float32Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 30 - 1;
  });
}

/** Runs `f` with our kernels and with TF.js's own; returns both results. */
function both<T>(f: () => T): { ours: T; theirs: T } {
  useFasterKernels(core);
  const ours = f();
  useFasterKernels(core, { slice: false, matmul: false });
  const theirs = f();
  useFasterKernels(core);
  return { ours, theirs };
}

const read = (t: Tensor) => {
  const v = Array.from(t.dataSync());
  t.dispose();
  return v;
};

describe('faster WebAssembly kernels for the bundled model', () => {
  test("the embedder runs on the wasm backend with them in place; TF.js's come back when asked", () => {
    expect(tf.getBackend()).toBe('wasm');
    const names = ['Slice', 'SplitV', 'BatchMatMul'];
    const kernels = () => names.map((n) => core.getKernel(n, 'wasm')?.kernelFunc);
    const ours = kernels();
    useFasterKernels(core, { slice: false, matmul: false });
    const theirs = kernels();
    names.forEach((_, i) => expect(theirs[i]).not.toBe(ours[i]));
    useFasterKernels(core);
    kernels().forEach((k, i) => expect(k).not.toBe(theirs[i]));
  });

  test('Slice: the same values as TF.js, continuous and not, ranks 1-5', () => {
    const cases: [number[], number[], number[]][] = [
      [[10], [3], [4]],
      [
        [6, 8],
        [2, 0],
        [3, 8],
      ], // continuous rows
      [
        [6, 8],
        [1, 2],
        [4, 5],
      ],
      [
        [4, 128, 64],
        [0, 0, 32],
        [4, 128, 32],
      ],
      [
        [3, 4, 5, 6],
        [1, 1, 2, 0],
        [2, 3, 2, 6],
      ],
      [
        [2, 3, 4, 5, 6],
        [0, 1, 1, 2, 3],
        [2, 2, 3, 2, 3],
      ],
      [
        [5, 7],
        [2, 3],
        [0, 4],
      ], // empty
    ];
    for (const [shape, begin, size] of cases) {
      const x = tf.tensor(
        values(
          shape.reduce((a, b) => a * b, 1),
          shape.length,
        ),
        shape,
      );
      const { ours, theirs } = both(() => read(tf.slice(x, begin, size)));
      expect(ours).toEqual(theirs);
      expect(ours.length).toBe(size.reduce((a, b) => a * b, 1));
      x.dispose();
    }
  });

  test('SplitV: the same parts as TF.js on every axis', () => {
    const x = tf.tensor(values(4 * 6 * 9, 7), [4, 6, 9]);
    for (const [sizes, axis] of [
      [[1, 3], 0],
      [[2, 2, 2], 1],
      [[3, 3, 3], 2],
      [[4, 5], 2],
    ] as [number[], number][]) {
      const { ours, theirs } = both(() => tf.split(x, sizes, axis).map(read));
      expect(ours).toEqual(theirs);
    }
    x.dispose();
  });

  test('BatchMatMul with batch dimensions: TF.js products within float rounding, no tensor left behind', () => {
    const cases: [number[], number[], boolean][] = [
      [[4, 4, 16, 8], [4, 4, 8, 12], false],
      [[4, 4, 16, 8], [4, 4, 12, 8], true], // attention: q x k^T
      [[3, 5, 7], [3, 7, 2], false],
      [[1, 5, 7], [1, 7, 2], false], // a batch of one: TF.js's own path
    ];
    for (const [sa, sb, transposeB] of cases) {
      const a = tf.tensor(
        values(
          sa.reduce((x, y) => x * y, 1),
          3,
        ),
        sa,
      );
      const b = tf.tensor(
        values(
          sb.reduce((x, y) => x * y, 1),
          5,
        ),
        sb,
      );
      const before = tf.memory().numTensors;
      const ids = tf.backend().numDataIds(); // the backend's own records: the views registered are gone too
      const { ours, theirs } = both(() => read(tf.matMul(a, b, false, transposeB)));
      expect(tf.memory().numTensors).toBe(before);
      expect(tf.backend().numDataIds()).toBe(ids);
      expect(ours.length).toBe(theirs.length);
      for (let i = 0; i < ours.length; i++) expect(Math.abs(ours[i] - theirs[i])).toBeLessThan(1e-5);
      // And against the product computed here, for one entry of the last batch item.
      const [m, k] = sa.slice(-2);
      const n = transposeB ? sb[sb.length - 2] : sb[sb.length - 1];
      const items = sa.slice(0, -2).reduce((x, y) => x * y, 1);
      const av = a.dataSync();
      const bv = b.dataSync();
      const [i, j, item] = [m - 1, n - 1, items - 1];
      let sum = 0;
      for (let p = 0; p < k; p++)
        sum +=
          av[item * m * k + i * k + p] *
          (transposeB ? bv[item * n * k + j * k + p] : bv[item * k * n + p * n + j]);
      expect(ours[item * m * n + i * n + j]).toBeCloseTo(sum, 4);
      a.dispose();
      b.dispose();
    }
  });

  test("embeddings: bit for bit TF.js's with the new Slice, within 1e-6 with the new BatchMatMul", async () => {
    const texts = [
      'search the backlog',
      'Vitamin D deficiency is associated with increased risk of respiratory infections in adults.',
      `long ${'the sign-in form rejects the password and blocks the account '.repeat(12)}`,
    ];
    useFasterKernels(core, { slice: false, matmul: false });
    const theirs = await bundled.embed(texts);
    useFasterKernels(core, { slice: true, matmul: false });
    const slices = await bundled.embed(texts);
    useFasterKernels(core);
    const ours = await bundled.embed(texts);
    // The new products are summed in another order: not the same bits (so they did run), nearly the same vectors.
    expect(ours.some((v, t) => v.some((x, i) => x !== theirs[t][i]))).toBe(true);
    for (let t = 0; t < texts.length; t++) {
      expect(Array.from(slices[t])).toEqual(Array.from(theirs[t]));
      expect(dot(ours[t], theirs[t])).toBeGreaterThan(0.999999);
      expect(Math.max(...ours[t].map((x, i) => Math.abs(x - theirs[t][i])))).toBeLessThan(1e-6);
    }
  });
});
