/** What an embedding is computed for: e5/bge-style models prefix queries and passages differently. */
export type EmbedKind = 'query' | 'passage';

/**
 * A text embedding model. Every vector it returns has `dims` entries and unit L2 norm, so the cosine of
 * two vectors is their dot product. An empty text embeds to the zero vector (it matches nothing).
 */
export interface Embedder {
  /** Identifies the model and everything that changes its vectors (provider, model id, pooling, prefixes). Caches key on it. */
  readonly id: string;
  readonly dims: number;
  /** Longest input in model tokens; text past it is ignored by the model (chunk below it). Unknown when absent. */
  readonly maxTokens?: number;
  embed(texts: string[], kind?: EmbedKind): Promise<Float32Array[]>;
  close?(): Promise<void>;
  /** `EmbedderOptions.firstQuery` and its vector, when the embedder embedded it while loading. */
  readonly first?: { text: string; vector: Float32Array };
}

/** `auto`: transformers when its model is available locally (or remote loading is allowed and reachable), else bundled, else none. */
export type EmbeddingProvider = 'auto' | 'transformers' | 'bundled' | 'none';
/** The provider actually in use after resolution. */
export type ResolvedProvider = 'transformers' | 'bundled' | 'none';

export type TransformersDtype = 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4';
export type Pooling = 'mean' | 'cls';

/** Options of the `transformers` provider (@huggingface/transformers, ONNX Runtime on the CPU). */
export interface TransformersOptions {
  /**
   * A hub model id (`Xenova/bge-small-en-v1.5`), looked up as `<localModelPath>/<model>/`, or an absolute
   * path to a model folder. Default `DEFAULT_TRANSFORMERS_MODEL` (`Xenova/bge-small-en-v1.5`).
   */
  model?: string;
  /** Folder holding `<model id>/config.json, tokenizer.json, tokenizer_config.json, onnx/model*.onnx`. */
  localModelPath?: string;
  /**
   * Allow downloading from the Hugging Face hub (into `localModelPath`, so the next start works offline).
   * Default false: nothing touches the network unless asked.
   */
  allowRemote?: boolean;
  /** Which ONNX file: `auto` picks `model_quantized.onnx` (q8) when present, else `model.onnx` (fp32). */
  dtype?: TransformersDtype;
  /** Default by model: `cls` for bge, `mean` otherwise. */
  pooling?: Pooling;
  /** Prepended to queries; default by model (`query: ` for e5, bge's retrieval instruction for bge-*-en). */
  queryPrefix?: string;
  /** Prepended to passages; default by model (`passage: ` for e5). */
  passagePrefix?: string;
  /** ONNX Runtime intra-op threads per session (the pool sets 1 per worker). Default: ONNX Runtime's. */
  threads?: number;
  /** How long a remote availability check may take before giving up. Default 3000 ms. */
  remoteTimeoutMs?: number;
  /** Hub to download from when `allowRemote` (a mirror). Default `https://huggingface.co/`. */
  remoteHost?: string;
}

export interface EmbedderOptions {
  transformers?: TransformersOptions;
  /**
   * A query about to be asked (a one-shot search's): the bundled model embeds it as the first run it makes
   * while loading anyway, and gives its vector back with the embedder (`first`), so the query costs no run
   * of its own. Other providers ignore it.
   */
  firstQuery?: string;
  /** Replaces how a provider is loaded (tests inject failing or counting providers). */
  loaders?: Partial<Record<'transformers' | 'bundled', () => Promise<Embedder>>>;
}

export interface ResolvedEmbedder<E extends Embedder = Embedder> {
  embedder: E | null;
  provider: ResolvedProvider;
  /** Why a provider was skipped or failed; empty when the requested one loaded. */
  warnings: string[];
}
