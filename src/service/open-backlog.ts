import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { BacklogError } from '../errors.js';
import type { SearchSettings } from '../search/orama-search-service.js';
import { BacklogService } from './backlog-service.js';
import { watchBacklog, type BacklogWatcher, type WatchOptions } from './watcher.js';

export interface OpenBacklogOptions {
  /** Backlog root; default `BACKLOG_DIR` or `./backlog`. */
  dir?: string;
  /**
   * Keep the index in step with the files: a watcher applies adds, changes, deletes and renames
   * within about 100 ms. Stop it with `closeBacklog(service)` (it keeps the process alive).
   * An object sets the watcher's options.
   */
  watch?: boolean | Omit<WatchOptions, 'after'>;
  /** `none` (lexical only) is the one provider so far; others arrive with hybrid search. */
  embeddings?: 'auto' | 'none' | 'bundled' | 'transformers';
  search?: Partial<SearchSettings>;
  /** Where the persisted index goes; `false` for none (see BacklogServiceOptions.cacheDir). */
  cacheDir?: string | false;
  /** Read every file and rebuild the index even when the persisted one is valid. */
  rebuild?: boolean;
  onProgress?: (phase: 'read' | 'index', done: number, total: number) => void;
}

export function defaultBacklogDir(): string {
  return resolve(process.env.BACKLOG_DIR || 'backlog');
}

const watchers = new WeakMap<BacklogService, BacklogWatcher>();

/**
 * Opens a backlog folder and resolves to a ready BacklogService (files read, index built). With
 * `watch`, the watcher starts before the files are read (changes made during the read are applied
 * after it) and is ready when this resolves; `closeBacklog(service)` stops it.
 */
export async function openBacklog(options: OpenBacklogOptions = {}): Promise<BacklogService> {
  const dir = resolve(options.dir ?? defaultBacklogDir());
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    throw new BacklogError(
      'NOT_FOUND',
      `Backlog folder not found: ${dir}`,
      'Pass --dir (or BACKLOG_DIR) pointing at a folder with tasks/ and resources/.',
      { dir },
    );
  }
  const service = new BacklogService({ dir, search: options.search, cacheDir: options.cacheDir });
  if (!options.watch) {
    await service.reload(options.onProgress, { rebuild: options.rebuild });
    return service;
  }
  let reloaded!: () => void;
  const gate = new Promise<void>((resolve) => (reloaded = resolve));
  const watcher = await watchBacklog(service, {
    ...(typeof options.watch === 'object' ? options.watch : {}),
    after: gate,
  });
  try {
    await service.reload(options.onProgress, { rebuild: options.rebuild });
  } catch (err) {
    reloaded();
    await watcher.close();
    throw err;
  }
  reloaded();
  watchers.set(service, watcher);
  return service;
}

/** The watcher started by `openBacklog({watch: true})` for this service, if any. */
export function backlogWatcher(service: BacklogService): BacklogWatcher | undefined {
  return watchers.get(service);
}

/** Stops what `openBacklog` started for this service (the file watcher) and writes the pending persisted index. Safe to call twice. */
export async function closeBacklog(service: BacklogService): Promise<void> {
  const watcher = watchers.get(service);
  watchers.delete(service);
  await watcher?.close();
  await service.flush();
}
