import { isBacklogError } from '../errors.js';
import { BUNDLED_DIMS, BUNDLED_MAX_TOKENS, bundledId, createBundledEmbedder } from './bundled.js';
import {
  createTransformersEmbedder,
  describeTransformersModel,
  locateTransformersModel,
} from './transformers.js';
import type { Embedder, EmbedderOptions, EmbeddingProvider, ResolvedEmbedder } from './types.js';

/** What an embedder will be once loaded, known from files alone: the cache it keys on and its chunk size. */
export interface DescribedEmbedder {
  provider: 'transformers' | 'bundled';
  id: string;
  maxTokens: number | undefined;
  /** Known for the bundled model; a transformers model's come from the cache file's header. */
  dims?: number;
}

/**
 * The embedder `resolveEmbedder` would load, without loading it (no model, no runtime): a local
 * transformers model for `auto` and `transformers` when its files are there, else the bundled model.
 * Undefined when that cannot be told from files (injected loaders) or nothing would load. The loaded
 * embedder may still differ (a model that fails to load falls back): callers compare ids.
 */
export async function describeEmbedder(
  provider: EmbeddingProvider = 'auto',
  options: EmbedderOptions = {},
): Promise<DescribedEmbedder | undefined> {
  if (provider === 'none' || options.loaders) return undefined;
  if (provider === 'auto' || provider === 'transformers') {
    const local = await describeTransformersModel(options.transformers);
    if (local) return { provider: 'transformers', ...local };
    // Asked for by name and not loadable: loading it says why (a missing model or package), with a hint.
    if (provider === 'transformers') return undefined;
  }
  const id = bundledId();
  if (id.endsWith('@unknown')) return undefined;
  return { provider: 'bundled', id, maxTokens: BUNDLED_MAX_TOKENS, dims: BUNDLED_DIMS };
}

function message(err: unknown): string {
  // A missing optional package says how to install it (transformers.ts).
  if (isBacklogError(err)) return `${err.message}. ${err.hint}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Picks and loads an embedder. `auto` (the default): transformers when its model is available, else the
 * bundled encoder, else none. A requested provider that is missing or fails to load falls back the same
 * way with a warning. Never throws: the worst outcome is `{ embedder: null, provider: 'none' }`.
 */
export async function resolveEmbedder(
  provider: EmbeddingProvider = 'auto',
  options: EmbedderOptions = {},
): Promise<ResolvedEmbedder> {
  const warnings: string[] = [];
  if (provider === 'none') return { embedder: null, provider: 'none', warnings };

  if (provider === 'auto' || provider === 'transformers') {
    const loader = options.loaders?.transformers;
    let embedder: Embedder | null = null;
    try {
      if (loader) embedder = await loader();
      else {
        const where = await locateTransformersModel(options.transformers);
        if (where.available) embedder = await createTransformersEmbedder(options.transformers);
        else
          warnings.push(
            `${where.reason ?? 'transformers model not available'}; falling back to the bundled model`,
          );
      }
    } catch (err) {
      warnings.push(
        `transformers provider failed to load (${message(err)}); falling back to the bundled model`,
      );
    }
    if (embedder) return { embedder, provider: 'transformers', warnings };
  }

  try {
    const load = options.loaders?.bundled;
    const embedder = await (load ? load() : createBundledEmbedder({ firstQuery: options.firstQuery }));
    return { embedder, provider: 'bundled', warnings };
  } catch (err) {
    warnings.push(`bundled provider failed to load (${message(err)}); search stays lexical`);
    return { embedder: null, provider: 'none', warnings };
  }
}
