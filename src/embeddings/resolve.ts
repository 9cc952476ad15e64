import { createBundledEmbedder } from './bundled.js';
import { createTransformersEmbedder, locateTransformersModel } from './transformers.js';
import type { Embedder, EmbedderOptions, EmbeddingProvider, ResolvedEmbedder } from './types.js';

function message(err: unknown): string {
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
    const embedder = await (options.loaders?.bundled ?? createBundledEmbedder)();
    return { embedder, provider: 'bundled', warnings };
  } catch (err) {
    warnings.push(`bundled provider failed to load (${message(err)}); search stays lexical`);
    return { embedder: null, provider: 'none', warnings };
  }
}
