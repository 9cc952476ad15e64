export type {
  Embedder,
  EmbedKind,
  EmbeddingProvider,
  ResolvedProvider,
  ResolvedEmbedder,
  EmbedderOptions,
  TransformersOptions,
  TransformersDtype,
  Pooling,
} from './types.js';
export { resolveEmbedder } from './resolve.js';
export {
  createTransformersEmbedder,
  TRANSFORMERS_INSTALL,
  locateTransformersModel,
  defaultModelPath,
  modelDefaults,
  DEFAULT_TRANSFORMERS_MODEL,
  MULTILINGUAL_TRANSFORMERS_MODEL,
  type ModelLocation,
} from './transformers.js';
export { createBundledEmbedder, BUNDLED_DIMS, BUNDLED_MAX_TOKENS } from './bundled.js';
export { EmbeddingPool, type PoolOptions, type EmbedAllOptions, type PoolStats } from './pool.js';
export { chunkText, chunkOptionsFor, DEFAULT_CHUNK_OPTIONS, type Chunk, type ChunkOptions } from './chunk.js';
export { EmbeddingCache, hashText, cacheFileFor, CACHE_FORMAT_VERSION, type CacheEncoding } from './cache.js';
export { VectorIndex, type VectorHit, type VectorSearchOptions } from './vector-index.js';
export {
  SemanticIndex,
  embedWithCache,
  type SemanticDocument,
  type SemanticIndexOptions,
  type SemanticUpsertResult,
  type EmbedCachedResult,
  type IndexEmbedder,
} from './semantic-index.js';
export { l2normalize, dot } from './vector.js';
