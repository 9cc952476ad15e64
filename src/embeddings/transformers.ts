import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { BacklogError } from '../errors.js';
import type { Embedder, EmbedKind, Pooling, TransformersDtype, TransformersOptions } from './types.js';
import { embedNonEmpty, l2normalize } from './vector.js';

/**
 * Default model: BAAI's bge-small-en-v1.5 (ONNX export by Xenova). 33M parameters, 384 dims, 512 tokens;
 * SciFact nDCG@10 0.713 against all-MiniLM-L6-v2's 0.645 (both published, MTEB/BEIR), at about half
 * MiniLM-L6's speed (12 layers against 6). docs/embeddings.md has the reasoning.
 */
export const DEFAULT_TRANSFORMERS_MODEL = 'Xenova/bge-small-en-v1.5';
/** For Russian (and ~100 other languages): 384 dims, `query: `/`passage: ` prefixes. */
export const MULTILINGUAL_TRANSFORMERS_MODEL = 'Xenova/multilingual-e5-small';

const BGE_EN_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

/** Where local models live unless told otherwise: `$BACKLOG_SEARCH_MODELS`, else `~/.cache/backlog-search/models`. */
export function defaultModelPath(): string {
  const fromEnv = process.env.BACKLOG_SEARCH_MODELS;
  return fromEnv ? resolve(fromEnv) : join(homedir(), '.cache', 'backlog-search', 'models');
}

/** Pooling and prefixes a model family was trained with (overridable in TransformersOptions). */
export function modelDefaults(model: string): {
  pooling: Pooling;
  queryPrefix: string;
  passagePrefix: string;
} {
  const m = basename(model).toLowerCase();
  if (m.includes('e5')) return { pooling: 'mean', queryPrefix: 'query: ', passagePrefix: 'passage: ' };
  if (m.startsWith('bge-') && m.includes('-en'))
    return { pooling: 'cls', queryPrefix: BGE_EN_QUERY_INSTRUCTION, passagePrefix: '' };
  if (m.startsWith('bge-')) return { pooling: 'cls', queryPrefix: '', passagePrefix: '' };
  return { pooling: 'mean', queryPrefix: '', passagePrefix: '' };
}

const DTYPE_SUFFIX: Record<Exclude<TransformersDtype, 'auto'>, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
};

function remoteHostOf(options: TransformersOptions): string {
  const host = options.remoteHost ?? 'https://huggingface.co/';
  return host.endsWith('/') ? host : `${host}/`;
}

export interface ModelLocation {
  /** True when the model can be loaded: its files are on disk, or remote loading is allowed and the hub answered. */
  available: boolean;
  /** Local model folder (`<localModelPath>/<model id>` or the absolute path given). */
  folder: string;
  /** `local` files, or `remote` (to be downloaded into `folder`). */
  source: 'local' | 'remote';
  dtype: Exclude<TransformersDtype, 'auto'>;
  /** Why it is not available. */
  reason?: string;
}

function resolvedOptions(options: TransformersOptions) {
  const model = options.model ?? DEFAULT_TRANSFORMERS_MODEL;
  const absolute = isAbsolute(model);
  const root = absolute ? dirname(model) : resolve(options.localModelPath ?? defaultModelPath());
  const name = absolute ? basename(model) : model;
  return { model, root, name, folder: join(root, name) };
}

/**
 * Finds a transformers model without loading it: checks the files on disk, or (only when `allowRemote`)
 * asks the hub with a time limit. Never throws and never hangs longer than `remoteTimeoutMs`.
 */
export async function locateTransformersModel(options: TransformersOptions = {}): Promise<ModelLocation> {
  const { model, folder } = resolvedOptions(options);
  const requested = options.dtype ?? 'auto';
  const onnx = (dtype: Exclude<TransformersDtype, 'auto'>) =>
    join(folder, 'onnx', `model${DTYPE_SUFFIX[dtype]}.onnx`);
  const localDtype: Exclude<TransformersDtype, 'auto'> | undefined =
    requested === 'auto'
      ? existsSync(onnx('q8'))
        ? 'q8'
        : existsSync(onnx('fp32'))
          ? 'fp32'
          : undefined
      : existsSync(onnx(requested))
        ? requested
        : undefined;
  const missing = ['config.json', 'tokenizer.json', 'tokenizer_config.json'].filter(
    (f) => !existsSync(join(folder, f)),
  );
  if (localDtype && missing.length === 0)
    return { available: true, folder, source: 'local', dtype: localDtype };
  const wanted =
    requested === 'auto'
      ? 'onnx/model_quantized.onnx or onnx/model.onnx'
      : `onnx/model${DTYPE_SUFFIX[requested]}.onnx`;
  const what = [...missing, ...(localDtype ? [] : [wanted])].join(', ');
  const reason = `transformers model "${model}" not found locally: missing ${what} in ${folder}`;
  const remoteDtype = requested === 'auto' ? 'q8' : requested;
  if (!options.allowRemote || isAbsolute(model))
    return { available: false, folder, source: 'local', dtype: remoteDtype, reason };
  const url = `${remoteHostOf(options)}${model}/resolve/main/config.json`;
  try {
    const res = await fetch(url, {
      method: 'HEAD',
      signal: AbortSignal.timeout(options.remoteTimeoutMs ?? 3000),
    });
    if (res.ok) return { available: true, folder, source: 'remote', dtype: remoteDtype };
    return {
      available: false,
      folder,
      source: 'remote',
      dtype: remoteDtype,
      reason: `${reason}; the hub answered ${res.status} for ${url}`,
    };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      available: false,
      folder,
      source: 'remote',
      dtype: remoteDtype,
      reason: `${reason}; the hub is unreachable (${why})`,
    };
  }
}

const maxTokensOf = (maxLength: unknown): number | undefined =>
  typeof maxLength === 'number' && maxLength > 0 && maxLength < 1e6 ? maxLength : undefined;

/** The embedder's id (what caches key on): the model, its ONNX file and size, pooling and passage prefix. */
function transformersId(options: TransformersOptions, where: ModelLocation): string {
  const { model } = resolvedOptions(options);
  const pooling = options.pooling ?? modelDefaults(model).pooling;
  const passagePrefix = options.passagePrefix ?? modelDefaults(model).passagePrefix;
  const prefixTag = passagePrefix
    ? `:${createHash('sha1').update(passagePrefix).digest('hex').slice(0, 8)}`
    : '';
  const id = `transformers:${isAbsolute(model) ? basename(model) : model}:${where.dtype}:${pooling}${prefixTag}`;
  // Files on disk can change under the same name; the size of the onnx file is part of the identity.
  const onnxFile = join(where.folder, 'onnx', `model${DTYPE_SUFFIX[where.dtype]}.onnx`);
  const size = existsSync(onnxFile) ? statSync(onnxFile).size : 0;
  return size ? `${id}:${size}` : id;
}

/**
 * The id and token limit a local transformers model will have once loaded, from its files alone (no
 * runtime loaded); undefined when it is not on disk. `maxTokens` is the tokenizer's `model_max_length`,
 * which is what transformers.js reads.
 */
export async function describeTransformersModel(
  options: TransformersOptions = {},
): Promise<{ id: string; maxTokens: number | undefined } | undefined> {
  const where = await locateTransformersModel({ ...options, allowRemote: false });
  if (!where.available || !transformersInstalled()) return undefined;
  let maxLength: unknown;
  try {
    const config = JSON.parse(await readFile(join(where.folder, 'tokenizer_config.json'), 'utf8')) as {
      model_max_length?: unknown;
    };
    maxLength = config.model_max_length;
  } catch {
    return undefined;
  }
  return { id: transformersId(options, where), maxTokens: maxTokensOf(maxLength) };
}

/**
 * How a user adds the transformers provider: @huggingface/transformers is an optional peer dependency (with
 * it come ONNX Runtime's 430 MB, which the bundled model does not need). ONNXRUNTIME_NODE_INSTALL=skip
 * keeps npm 10 from downloading ONNX Runtime's CUDA libraries in its install script (CPU is what runs here).
 */
export const TRANSFORMERS_INSTALL =
  'ONNXRUNTIME_NODE_INSTALL=skip npm install -g @huggingface/transformers@4';

/** Whether @huggingface/transformers can be imported from here (resolved, not loaded). */
export function transformersInstalled(): boolean {
  try {
    import.meta.resolve('@huggingface/transformers');
    return true;
  } catch {
    return false;
  }
}

async function loadTransformers(): Promise<typeof import('@huggingface/transformers')> {
  if (!transformersInstalled())
    throw new BacklogError(
      'NOT_FOUND',
      'the transformers embedding provider needs @huggingface/transformers, which is not installed',
      `Install it beside backlog-search: ${TRANSFORMERS_INSTALL} (in a project: npm install @huggingface/transformers@4), or use --embeddings bundled.`,
      { package: '@huggingface/transformers' },
    );
  return import('@huggingface/transformers');
}

type FeatureExtractor = ((
  texts: string[],
  options: { pooling: Pooling; normalize: boolean },
) => Promise<{ data: Float32Array; dims: number[] }>) & {
  tokenizer?: { model_max_length?: number };
  dispose(): Promise<void>;
};

/**
 * Loads a feature-extraction pipeline from the local folder (or the hub when allowed) and probes it once,
 * so a broken model fails here, not at the first query. Throws a clear error when the model is missing.
 */
export async function createTransformersEmbedder(options: TransformersOptions = {}): Promise<Embedder> {
  const where = await locateTransformersModel(options);
  if (!where.available) throw new Error(where.reason);
  const { model, root, name } = resolvedOptions(options);
  const defaults = modelDefaults(model);
  const pooling = options.pooling ?? defaults.pooling;
  const queryPrefix = options.queryPrefix ?? defaults.queryPrefix;
  const passagePrefix = options.passagePrefix ?? defaults.passagePrefix;

  const { env, pipeline, LogLevel } = await loadTransformers();
  env.localModelPath = root;
  env.allowLocalModels = true;
  env.allowRemoteModels = where.source === 'remote';
  env.remoteHost = remoteHostOf(options);
  // Downloads land in the same layout as local models, so the next start works offline.
  env.cacheDir = root;
  env.logLevel = LogLevel.ERROR;
  const sessionOptions =
    options.threads !== undefined ? { intraOpNumThreads: options.threads, interOpNumThreads: 1 } : undefined;
  const extractor = (await pipeline('feature-extraction', name, {
    dtype: where.dtype,
    device: 'cpu',
    local_files_only: where.source === 'local',
    ...(sessionOptions ? { session_options: sessionOptions } : {}),
  })) as unknown as FeatureExtractor;

  const run = async (texts: string[]): Promise<Float32Array[]> => {
    const out = await extractor(texts, { pooling, normalize: true });
    const [n, d] = out.dims;
    const rows: Float32Array[] = [];
    for (let i = 0; i < n; i++) rows.push(l2normalize(out.data.slice(i * d, (i + 1) * d)));
    return rows;
  };
  let probe: Float32Array[];
  try {
    probe = await run(['dimension probe']);
  } catch (err) {
    await extractor.dispose().catch(() => undefined);
    throw err;
  }
  const dims = probe[0].length;

  return {
    id: transformersId(options, where),
    dims,
    maxTokens: maxTokensOf(extractor.tokenizer?.model_max_length),
    embed(texts: string[], kind: EmbedKind = 'passage') {
      const prefix = kind === 'query' ? queryPrefix : passagePrefix;
      return embedNonEmpty(texts, dims, (batch) => run(prefix ? batch.map((t) => prefix + t) : batch));
    },
    close: () => extractor.dispose(),
  };
}
