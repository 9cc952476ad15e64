/**
 * Live updates: a chokidar watcher on the backlog root that keeps a BacklogService (a WatchTarget) in step with the
 * files. Adds and changes go through `service.applyFile`, deletes through `service.removeFile`; a
 * rename arrives as unlink + add. Events are debounced per path (a burst of writes to one file is
 * read once, after it settles) and applied one at a time, in order, so the index is updated within
 * about 100 ms of the last write.
 */
import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import { isIgnoredPath, toRelative } from '../storage/backlog-store.js';
import { TEXT_EXTENSIONS, fileType } from '../storage/parse.js';

/** What the watcher keeps in step (BacklogService gives it; nothing here imports the service). */
export interface WatchTarget {
  readonly dir: string;
  applyFile(relPath: string): Promise<unknown>;
  removeFile(relPath: string): boolean;
  ids(): string[];
  get(id: string): { path: string };
}

export interface WatchOptions {
  /** Quiet time after the last event for a path before it is applied (default 50 ms). */
  debounceMs?: number;
  /** Watcher and apply failures (default: a line on stderr). The watcher keeps running. */
  onError?: (error: Error) => void;
  /** Poll instead of native events (network drives, containers without inotify). */
  usePolling?: boolean;
  /** Aborted before the watcher is ready: resolves then, without waiting for its first scan (close it). */
  signal?: AbortSignal;
}

export interface BacklogWatcher {
  /** Resolves once every change seen so far has been applied to the index. */
  idle(): Promise<void>;
  /** Stops watching; pending changes are applied first. */
  close(): Promise<void>;
}

type Pending = 'apply' | 'remove';

/** Files the backlog indexes: text extensions outside hidden folders and node_modules. */
function isBacklogFile(rel: string): boolean {
  return rel !== '' && !rel.startsWith('..') && !isIgnoredPath(rel) && TEXT_EXTENSIONS.has(fileType(rel));
}

/** Starts watching `service.dir`; resolves when the watcher is ready (its initial scan is done). */
export async function watchBacklog(
  service: WatchTarget,
  options: WatchOptions = {},
): Promise<BacklogWatcher> {
  const root = service.dir;
  const debounceMs = options.debounceMs ?? 50;
  const onError =
    options.onError ?? ((err: Error) => process.stderr.write(`backlog-search watcher: ${err.message}\n`));

  const pending = new Map<string, Pending>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  let closed = false;

  const flush = () => {
    timer = undefined;
    const batch = [...pending];
    pending.clear();
    chain = chain.then(async () => {
      for (const [rel, op] of batch) {
        try {
          if (op === 'remove') service.removeFile(rel);
          else await service.applyFile(rel);
        } catch (err) {
          onError(err instanceof Error ? err : new Error(String(err)));
        }
      }
    });
  };
  const schedule = (rel: string, op: Pending) => {
    if (closed) return;
    pending.set(rel, op);
    if (timer) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  };

  const watcher: FSWatcher = watch(root, {
    ignoreInitial: true,
    persistent: true,
    usePolling: options.usePolling ?? false,
    // A link that arrives with a pull could lead anywhere: never followed (applyFile refuses it too).
    followSymlinks: false,
    interval: 100,
    ignored: (path: string, stats?: Stats) => {
      const rel = toRelative(root, path);
      if (rel === '' || rel.startsWith('..')) return false;
      if (isIgnoredPath(rel)) return true;
      return Boolean(stats?.isFile() && !TEXT_EXTENSIONS.has(fileType(rel)));
    },
  });

  const relOf = (path: string) => toRelative(root, path);
  watcher.on('add', (path) => {
    const rel = relOf(path);
    if (isBacklogFile(rel)) schedule(rel, 'apply');
  });
  watcher.on('change', (path) => {
    const rel = relOf(path);
    if (isBacklogFile(rel)) schedule(rel, 'apply');
  });
  watcher.on('unlink', (path) => {
    const rel = relOf(path);
    if (isBacklogFile(rel)) schedule(rel, 'remove');
  });
  watcher.on('unlinkDir', (path) => {
    // A folder removed or renamed away: forget everything indexed beneath it.
    const prefix = `${relOf(path)}/`;
    for (const id of service.ids()) {
      const rel = service.get(id).path;
      if (rel.startsWith(prefix)) schedule(rel, 'remove');
    }
  });
  watcher.on('error', (err) => onError(err instanceof Error ? err : new Error(String(err))));

  await new Promise<void>((resolve) => {
    watcher.once('ready', () => resolve());
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
    if (options.signal?.aborted) resolve();
  });

  const idle = async () => {
    if (timer) {
      clearTimeout(timer);
      flush();
    }
    // A flush may have queued more work behind the one awaited; wait until the chain stops growing.
    let last: Promise<unknown>;
    do {
      last = chain;
      await last;
    } while (last !== chain);
  };

  return {
    idle,
    close: async () => {
      if (closed) return;
      closed = true;
      await watcher.close();
      await idle();
    },
  };
}
