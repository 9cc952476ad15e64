/**
 * Opens this project on a temp copy of the Backlog.md folder the way the product does (`openBacklog`):
 * lexical only, or with the bundled model's embeddings, built once into the copy's `.cache/` (the
 * `backlog-search index` path: every missing chunk embedded before the search starts) and reused after.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { closeBacklog, openBacklog, type BacklogService } from '../../src/index.js';
import { backlogCopy } from './corpus.js';

export interface OpenedBacklog {
  backlog: BacklogService;
  /** ms from openBacklog to a service ready for the mode (for hybrid: every chunk embedded). */
  readyMs: number;
  /** Chunks of the semantic index (0 for lexical only). */
  chunks: number;
  /** Whether an embedding cache was in the copy's `.cache/` before opening. */
  cacheWasWarm: boolean;
  close(): Promise<void>;
}

/**
 * `embeddings: 'none'`: a fresh copy, lexical only. `'bundled'`: the persistent copy
 * (`$TMPDIR/backlog-search-devset/...`), whose `.cache/` keeps the embeddings between runs.
 */
export async function openDevsetBacklog(
  embeddings: 'none' | 'bundled',
  log: (msg: string) => void = () => {},
): Promise<OpenedBacklog> {
  const copy = await backlogCopy(undefined, { persistent: embeddings !== 'none' });
  const cacheWasWarm = (await readdir(join(copy.dir, '.cache')).catch(() => [] as string[])).some((f) =>
    f.startsWith('embeddings-'),
  );
  const started = performance.now();
  let lastLog = 0;
  const backlog = await openBacklog({
    dir: copy.dir,
    embeddings,
    embedMissing: embeddings === 'none' ? 'never' : 'wait',
    onEmbedProgress: (done, total) => {
      if (done === total || performance.now() - lastLog > 15_000) {
        lastLog = performance.now();
        log(`   embedding ${done}/${total} chunks (${((performance.now() - started) / 1000).toFixed(0)} s)`);
      }
    },
  });
  if (embeddings !== 'none') {
    await backlog.semanticReady();
    const status = backlog.semanticStatus();
    if (status.provider === 'none')
      throw new Error(`no embedding provider could start: ${JSON.stringify(status)}`);
  }
  return {
    backlog,
    readyMs: performance.now() - started,
    chunks: embeddings === 'none' ? 0 : backlog.semanticStatus().total,
    cacheWasWarm,
    async close() {
      await closeBacklog(backlog);
      await copy.cleanup();
    },
  };
}
