import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { BacklogError, errors } from '../errors.js';
import type { SearchSettings } from '../search/orama-search-service.js';
import { BacklogService } from './backlog-service.js';
import type { EmbeddingProvider, TransformersOptions } from '../embeddings/index.js';
import type { EmbedMissing } from '../embeddings/semantic-search.js';
import type { HybridSettings } from '../search/hybrid.js';
import type { FormatName } from '../storage/formats/detect.js';
import type { Limits } from './limits.js';
import type { BacklogWatcher, WatchOptions } from './watcher.js';
import { parseLanguagesSetting, readBacklogLanguages } from './backlog-settings.js';
import { removeWriteLeftovers } from '../storage/write-file.js';
import { cacheDirFor } from './cache-file.js';
import type { SharedEmbeddingPool } from '../embeddings/shared-pool.js';

export interface OpenBacklogOptions {
  /** Backlog root; default `BACKLOG_DIR` or `./backlog`. */
  dir?: string;
  /**
   * Keep the index in step with the files: a watcher applies adds, changes, deletes and renames
   * within about 100 ms. Stop it with `closeBacklog(service)` (it keeps the process alive).
   * An object sets the watcher's options.
   */
  watch?: boolean | Omit<WatchOptions, 'after' | 'signal'>;
  /**
   * Embedding provider for hybrid search: `auto` (default; `BACKLOG_EMBEDDINGS` overrides it):
   * transformers if its model is on disk, else the bundled English model, else none (lexical only).
   */
  embeddings?: EmbeddingProvider;
  /** When to embed what the embedding cache lacks: `background` (default), `wait`, `never` (see SemanticOptions). */
  embedMissing?: EmbedMissing;
  /**
   * Worker threads for the initial embedding of a backlog whose chunks are mostly not cached; one stays
   * afterwards for queries and edits. Default: as many (at most 2) as `memoryBudgetMb` has room for, which
   * with the bundled model at the default budget is one. A second bundled worker makes the build about
   * 1.8x faster and adds about 160 MB to its peak.
   */
  embeddingWorkers?: number;
  /**
   * RSS in MB the service plans to stay under when it picks the workers of a large initial embedding
   * (default `BACKLOG_MEMORY_MB`, else 400): a second worker is used only if the projected peak fits
   * (bundled model: from about 600 MB on the Backlog.md folder). Ignored when `embeddingWorkers` is given.
   */
  memoryBudgetMb?: number;
  /**
   * The query a one-shot process will ask once open: when its answer will be hybrid, the model starts
   * loading during the open instead of at the query (the query must still be passed to the search).
   */
  expectQuery?: string;
  /** Model, local folder and remote use of the `transformers` provider. */
  transformers?: TransformersOptions;
  /** Fusion weights and multipliers of hybrid search (see docs/search.md). */
  hybrid?: Partial<HybridSettings>;
  /** Progress of the embedding (chunks), e.g. for a progress bar. */
  onEmbedProgress?: (done: number, total: number) => void;
  /**
   * The languages of the backlog's text (docs/search.md, "Languages"): `'detect'` (default: each file
   * by its frontmatter `lang`, its script, or the language detector) or a list such as
   * `['english', 'japanese']` / `['en', 'ja']`. Default: `languages` in the backlog's `config.yml`,
   * else `'detect'`. Same as `search.tokenizer.languages`.
   */
  languages?: 'detect' | string[];
  search?: Partial<SearchSettings>;
  /** Budgets of one file, query and response (docs/security.md): maxWordsPerFile, maxIdsPerGet, maxQueryTerms, maxResponseChars. */
  limits?: Partial<Limits>;
  /** Where the persisted index goes (default `BACKLOG_CACHE_DIR`, else `<dir>/.cache`); `false` for none. */
  cacheDir?: string | false;
  /**
   * How the folder's files are read: `auto` (default) detects Backlog.md by its config.yml or its folder
   * layout, else the native format; `native` or `backlog-md` skip detection (docs/formats.md).
   */
  format?: FormatName | 'auto';
  /**
   * Prepare snippet bodies and proximity filters in the background once the index is built or read
   * (default true: later queries are faster). A process that answers one query and exits passes false:
   * that work would cost it more than its query (docs/performance.md, "Start-up"). False also puts off
   * restoring the persisted index until something reads it (a `get` never does).
   */
  background?: boolean;
  /**
   * With `background: false`, still prepare every snippet body before the persisted index is saved, so
   * that it keeps them all (`backlog-search index`): the bodies without the warm-up searches and the
   * proximity filters, which only a process that goes on answering queries needs.
   */
  saveEveryBody?: boolean;
  /**
   * Load the search and list options' schemas with the open (default true); false for a one-shot whose
   * options are plain (BacklogServiceOptions.optionSchemas).
   */
  optionSchemas?: boolean;
  /** Read every file and rebuild the index even when the persisted one is valid. */
  rebuild?: boolean;
  onProgress?: (phase: 'read' | 'index', done: number, total: number) => void;
  /**
   * Remove what writers killed half-way left in the folder (their hidden temporary files and lock files
   * whose owner process is gone) before reading it (default true; live writers' files are kept).
   */
  removeLeftovers?: boolean;
  /** One embedding pool for several backlogs (openWorkspace passes it): the model is loaded once. */
  sharedEmbeddingPool?: SharedEmbeddingPool;
}

export function defaultBacklogDir(): string {
  return resolve(process.env.BACKLOG_DIR || 'backlog');
}

const watchers = new WeakMap<BacklogService, BacklogWatcher>();
/**
 * Opens still running (the files being read, the watcher starting): `closeBacklog` stops what is left of
 * one (no embedding, watcher or catch-up starts; a watcher starting is closed) and waits for it to end.
 */
const opening = new WeakMap<BacklogService, { stop: AbortController; done: Promise<unknown> }>();

/**
 * Opens a backlog folder and resolves to a ready BacklogService (files read, index built). With
 * `watch`, the watcher starts before the files are read (changes made during the read are applied
 * after it) and is ready when this resolves; `closeBacklog(service)` stops it.
 */
export async function openBacklog(options: OpenBacklogOptions = {}): Promise<BacklogService> {
  return (await beginOpenBacklog(options)).opened;
}

/**
 * `openBacklog` in steps: resolves as soon as the service knows its folder's format and settings
 * (config.yml read, no other file), with `read`, which resolves when the files are read and the index is
 * built (searches answer from then on; a watcher may still be starting), and `opened`, which resolves
 * when the watcher too is ready, as `openBacklog` does. Until `read` the service answers as an empty
 * backlog: a server gives out only what needs no items (the MCP server's `initialize` and `tools/list`).
 */
export async function beginOpenBacklog(
  options: OpenBacklogOptions = {},
  /** Read the files only once this settles (a workspace reads its backlogs one after the other). */
  after?: Promise<unknown>,
): Promise<{ service: BacklogService; read: Promise<BacklogService>; opened: Promise<BacklogService> }> {
  const dir = resolve(options.dir ?? defaultBacklogDir());
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    throw new BacklogError(
      'NOT_FOUND',
      `Backlog folder not found: ${dir}`,
      'Pass --dir (or BACKLOG_DIR) pointing at the backlog folder (the one with tasks/; in a Backlog.md project, the one with config.yml).',
      { dir },
    );
  }
  const provider =
    options.embeddings ?? (process.env.BACKLOG_EMBEDDINGS as EmbeddingProvider | undefined) ?? 'auto';
  const languages =
    options.languages !== undefined
      ? parseLanguagesSetting(options.languages, 'languages')
      : options.search?.tokenizer?.languages === undefined
        ? await readBacklogLanguages(dir)
        : undefined;
  const search =
    languages === undefined
      ? options.search
      : { ...options.search, tokenizer: { ...options.search?.tokenizer, languages } };
  const service = new BacklogService({
    dir,
    search,
    limits: options.limits,
    format: options.format === 'auto' ? undefined : options.format,
    cacheDir: options.cacheDir ?? cacheDirFor(dir),
    hybrid: options.hybrid,
    background: options.background,
    ...(options.saveEveryBody ? { saveEveryBody: true } : {}),
    ...(options.expectQuery !== undefined ? { searchSoon: true } : {}),
    ...(options.optionSchemas === false ? { optionSchemas: false } : {}),
    embeddings: {
      provider,
      embedMissing: options.embedMissing ?? 'background',
      transformers: options.transformers,
      onProgress: options.onEmbedProgress,
      ...(options.sharedEmbeddingPool ? { sharedPool: options.sharedEmbeddingPool } : {}),
      ...(options.expectQuery !== undefined ? { expectedQuery: options.expectQuery } : {}),
      ...(options.embeddingWorkers !== undefined ? { workers: options.embeddingWorkers } : {}),
      // Checked only where it decides something.
      ...(provider !== 'none' && options.embeddingWorkers === undefined
        ? { memoryBudgetMb: memoryBudget(options.memoryBudgetMb) }
        : {}),
    },
  });
  await service.detectFormat();
  let wasRead!: () => void;
  const readDone = new Promise<BacklogService>((resolve) => (wasRead = () => resolve(service)));
  const stop = new AbortController();
  const finish = () => finishOpen(service, options, wasRead, stop.signal);
  const opened = after ? after.then(finish, finish) : finish();
  const done = opened.finally(() => opening.delete(service));
  done.catch(() => undefined);
  opening.set(service, { stop, done });
  // Whichever comes first: the read, or the open's failure before it.
  const read = Promise.race([readDone, opened]);
  // Handled by whoever awaits them; marked here so a failure before they do is not an unhandled rejection.
  opened.catch(() => undefined);
  read.catch(() => undefined);
  return { service, read, opened };
}

async function finishOpen(
  service: BacklogService,
  options: OpenBacklogOptions,
  wasRead: () => void,
  /** Aborted by closeBacklog: what is left of the open is not started. */
  stopped: AbortSignal,
): Promise<BacklogService> {
  if (options.removeLeftovers !== false) await removeWriteLeftovers(service.dir);
  await service.reload(options.onProgress, { rebuild: options.rebuild });
  if (!stopped.aborted) await service.startSemantic();
  wasRead();
  if (!options.watch || stopped.aborted) return service;
  // The watcher starts after the read, so its first scan (a stat of every file) does not hold up the
  // first answer; what changed before it saw a file's folder is caught up once it is ready.
  const { watchBacklog } = await import('./watcher.js');
  const watcher = await watchBacklog(service, {
    ...(typeof options.watch === 'object' ? options.watch : {}),
    signal: stopped,
  });
  // Closed while its first scan ran (seconds on a busy machine): a client gone does not wait for it.
  if (stopped.aborted) {
    await watcher.close();
    return service;
  }
  watchers.set(service, watcher);
  await service.catchUp();
  return service;
}

/** The watcher started by `openBacklog({watch: true})` for this service, if any. */
export function backlogWatcher(service: BacklogService): BacklogWatcher | undefined {
  return watchers.get(service);
}

/** Stops what `openBacklog` started for this service (the file watcher) and writes the pending persisted index. Safe to call twice. */
export async function closeBacklog(service: BacklogService): Promise<void> {
  const open = opening.get(service);
  open?.stop.abort();
  await open?.done.catch(() => undefined);
  const watcher = watchers.get(service);
  watchers.delete(service);
  await watcher?.close();
  await service.close();
}

/** The memory budget asked for (option, else `BACKLOG_MEMORY_MB`), checked; undefined for the default. */
function memoryBudget(option: number | undefined): number | undefined {
  const raw = option ?? process.env.BACKLOG_MEMORY_MB;
  if (raw === undefined || raw === '') return undefined;
  const mb = Number(raw);
  if (!Number.isFinite(mb) || mb <= 0)
    throw errors.invalidFilter(
      option !== undefined ? 'memoryBudgetMb' : 'BACKLOG_MEMORY_MB',
      `"${raw}" is not a number of megabytes`,
      'Give a positive number of MB, e.g. 800, or leave it unset for the default of 400.',
    );
  return mb;
}
