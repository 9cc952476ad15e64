/**
 * A one-shot search's model, started from the CLI's first lines: the model's worker takes about 0.8 s to
 * load, and the rest of the program's modules, the backlog's config and the service take 0.2-0.3 s more
 * before SemanticSearch would start it. Started only when the answer will be hybrid for this query (the
 * same checks as SemanticSearch's: a model known from its files, its vectors cached, the model reads the
 * query); SemanticSearch takes the started pool instead of starting another, or stops it when it closes.
 * This module imports only what those checks need, so it can run before the rest of the program loads,
 * and loads those when it starts: SemanticSearch imports it (takeEarlyPool, dropEarlyPool) in every
 * process, a lookup that never embeds too (issue #23: `get`, `list`, `--embeddings none`).
 */
import type { EmbeddingPool } from './pool.js';
import { englishOnlyQuerySupported, MULTILINGUAL } from './query-language.js';
import type { EmbeddingProvider, ResolvedEmbedder, TransformersOptions } from './types.js';

interface EarlyPool {
  id: string;
  started: Promise<ResolvedEmbedder<EmbeddingPool>>;
  stop: AbortController;
}

let early: Promise<EarlyPool | undefined> | undefined;

/** Starts the model for a one-shot `query` on the backlog whose cache folder is `cacheDir`, if it will be needed. */
export function startModelEarly(options: {
  provider: EmbeddingProvider;
  cacheDir: string;
  query: string;
  transformers?: TransformersOptions;
}): void {
  early = (async () => {
    const [{ describeEmbedder }, { EmbeddingCache }, { EmbeddingPool }] = await Promise.all([
      import('./resolve.js'),
      import('./cache.js'),
      import('./pool.js'),
    ]);
    const described = await describeEmbedder(options.provider, { transformers: options.transformers });
    if (!described) return undefined;
    // From here to the worker's start nothing waits on the event loop (the header is read synchronously):
    // the rest of the open, queued meanwhile, runs after the worker has started, not before.
    const dims = EmbeddingCache.peekDimsSync(options.cacheDir, described.id);
    if (dims === undefined || (described.dims !== undefined && dims !== described.dims)) return undefined;
    if (!MULTILINGUAL.test(described.id) && !(await englishOnlyQuerySupported(options.query)))
      return undefined;
    const stop = new AbortController();
    const started = EmbeddingPool.start({
      provider: described.provider,
      workers: 1,
      signal: stop.signal,
      transformers: options.transformers,
      // The model's first run embeds the query: its vector is ready when the model is.
      firstQuery: options.query,
    });
    return { id: described.id, started, stop };
  })().catch(() => undefined);
}

/** The pool started early for model `id`, if any; from now on `signal` stops it while it loads. */
export async function takeEarlyPool(
  id: string,
  signal: AbortSignal,
): Promise<Promise<ResolvedEmbedder<EmbeddingPool>> | undefined> {
  const pool = await early;
  if (!pool || pool.id !== id) return undefined;
  early = undefined;
  if (signal.aborted) pool.stop.abort();
  else signal.addEventListener('abort', () => pool.stop.abort(), { once: true });
  return pool.started;
}

/** Stops a pool started early that nothing took (the cache turned out incomplete, or the search failed). */
export function dropEarlyPool(): void {
  const pending = early;
  early = undefined;
  void pending?.then(async (pool) => {
    if (!pool) return;
    pool.stop.abort();
    await (await pool.started.catch(() => undefined))?.embedder?.close();
  });
}
