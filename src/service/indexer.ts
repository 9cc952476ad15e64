/**
 * Keeps the items, the search index and the semantic index in step with the files: the first load
 * (from the persisted index when a valid one exists, reading only the files that changed since), then
 * one file at a time as the watcher or a write reports it. It owns what reading the files found (their
 * diagnostics), the persisted index's writes, and the change events the surfaces listen to.
 */
import { existsSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import type { SemanticSearch } from '../embeddings/semantic-search.js';
import { cacheDropped } from '../errors.js';
import type { OramaSearchService } from '../search/orama-search-service.js';
import { Background } from '../search/background.js';
import {
  duplicateDiagnostic,
  duplicateId,
  isIgnoredPath,
  keepsId,
  settleDuplicateIds,
  linkDiagnostic,
  loadBacklog,
  loadFile,
  loadFiles,
  statFiles,
  statFilesAlong,
  walkBacklog,
  walkBacklogSync,
} from '../storage/backlog-store.js';
import {
  detectFormat,
  nativeFormat,
  type BacklogFormat,
  type FormatName,
} from '../storage/formats/detect.js';
import { isLazy } from '../storage/lazy.js';
import { idKey } from '../storage/ids.js';
import { lengthWithinWords } from '../storage/parse.js';
import { isRelativeInside } from '../storage/root-path.js';
import type { BacklogItem, Diagnostic } from '../storage/types.js';
import { readSome, release } from '../storage/unread-bytes.js';
import { readIndexCache, writeIndexCache, type FileColumns, type FileStat } from './index-cache.js';
import type { ItemStore } from './item-store.js';
import type { Limits } from './limits.js';

/** One file applied to or removed from the index; `reload`: the backlog's config changed and every file was read again. */
export interface BacklogChange {
  kind: 'upsert' | 'remove' | 'reload';
  /** Relative to the backlog root. */
  path: string;
  /** The item's id ('' for `reload`). */
  id: string;
}

/** What the persisted index did on the last start. */
export interface CacheInfo {
  path: string | null;
  /** The cache was loaded (true) or the index was built from the files (false). */
  used: boolean;
  /** Files read because they changed, appeared or disappeared since the cache was written. */
  changed: number;
  bytes: number | null;
}

export type LoadProgress = (phase: 'read' | 'index', done: number, total: number) => void;

/** Persisted-index writes wait this long after the last change, so a burst of edits writes once. */
const CACHE_WRITE_DELAY_MS = 1000;
/** What a long-lived process reads a tick of the persisted index's rest (holdFile): a few ms. */
const REST_SLICE_BYTES = 4 << 20;

export interface IndexerOptions {
  dir: string;
  store: ItemStore;
  index: OramaSearchService;
  semantic: SemanticSearch;
  limits: Limits;
  /** `.cache/index.bin`, or null for none. */
  cachePath: string | null;
  /** The persisted index's version for a format signature (it is only valid for the format and config it was read with). */
  cacheVersion: (formatSignature: string) => string;
  /** Read the folder in this format instead of detecting it. */
  format?: FormatName;
  /**
   * Restore the persisted index when it is first read, not at start (a one-shot `get` never reads it).
   * Only when no file changed since the cache was written; a restore that then fails deletes the cache.
   */
  deferIndex?: boolean;
  /**
   * A search follows the open (a one-shot `search`): with deferIndex, the persisted index is parsed while
   * the files are stat'ed (OramaSearchService.readAhead), not after.
   */
  searchSoon?: boolean;
}

export class Indexer {
  private readonly dir: string;
  private readonly store: ItemStore;
  private readonly index: OramaSearchService;
  private readonly semantic: SemanticSearch;
  private readonly limits: Limits;
  private readonly versionFor: (formatSignature: string) => string;
  private readonly forcedFormat: FormatName | undefined;
  private readonly deferIndex: boolean;
  private readonly searchSoon: boolean;
  private currentFormat: BacklogFormat = nativeFormat;
  private cachePath: string | null;
  private cacheInfo: CacheInfo;
  private cacheDiagnostics: Diagnostic[] = [];
  private diagnosticsNow: Diagnostic[] = [];
  /** The persisted index's diagnostics, read when first asked for (a search never reads them). */
  private diagnosticsLater: (() => Diagnostic[]) | null = null;
  private cacheTimer: NodeJS.Timeout | null = null;
  private cacheWrite: Promise<void> = Promise.resolve();
  /** Per path, bumped by every apply and remove: a slow read never undoes a later change. */
  private readonly generations = new Map<string, number>();
  /** The latest applyFile of each path still running: an earlier one that it overtook answers with its result. */
  private readonly applying = new Map<string, Promise<BacklogItem | null>>();
  private readonly listeners = new Set<(change: BacklogChange) => void>();
  /** The persisted index's bytes as the last restore took them, parts of them maybe unread (holdFile). */
  private cacheBytes: Uint8Array | null = null;
  private readonly restWork = new Background();
  private closed = false;

  constructor(options: IndexerOptions) {
    this.dir = options.dir;
    this.store = options.store;
    this.index = options.index;
    this.semantic = options.semantic;
    this.limits = options.limits;
    this.cachePath = options.cachePath;
    this.versionFor = options.cacheVersion;
    this.forcedFormat = options.format;
    this.deferIndex = options.deferIndex ?? false;
    this.searchSoon = options.searchSoon ?? false;
    this.cacheInfo = { path: this.cachePath, used: false, changed: 0, bytes: null };
  }

  /** The format the files are read in (detected on each reload, and again when its config changes). */
  get format(): BacklogFormat {
    return this.currentFormat;
  }

  /** Reads the folder's format (its config.yml) without reading the files. */
  async detectFormat(): Promise<void> {
    this.currentFormat = await detectFormat(this.dir, this.forcedFormat);
  }

  private get cacheVersion(): string {
    return this.versionFor(this.currentFormat.signature);
  }

  private get fileDiagnostics(): Diagnostic[] {
    if (this.diagnosticsLater) {
      const later = this.diagnosticsLater;
      this.diagnosticsLater = null;
      this.diagnosticsNow = later();
    }
    return this.diagnosticsNow;
  }

  private set fileDiagnostics(diagnostics: Diagnostic[]) {
    this.diagnosticsLater = null;
    this.diagnosticsNow = diagnostics;
  }

  /** What reading the files found, and what the persisted index said. */
  diagnostics(): Diagnostic[] {
    return this.fileDiagnostics;
  }

  cacheStatus(): CacheInfo {
    return { ...this.cacheInfo };
  }

  /**
   * Brings everything in step with the files: from the persisted index when there is a valid one
   * (reading only the files that changed since), else by reading every file.
   */
  async reload(onProgress?: LoadProgress, { rebuild = false }: { rebuild?: boolean } = {}): Promise<void> {
    await this.detectFormat();
    if (this.cachePath && !rebuild && (await this.reloadFromCache())) return;
    const loaded = await loadBacklog(this.dir, this.currentFormat, (d, t) => onProgress?.('read', d, t));
    for (const item of loaded.items) this.applyWordBudget(item, loaded.diagnostics);
    this.fileDiagnostics = [...loaded.diagnostics, ...this.cacheDiagnostics];
    this.store.replaceAll(loaded.items);
    await this.index.build(
      loaded.items.map((item) => this.store.toSearchDocument(item)),
      { onProgress: (d, t) => onProgress?.('index', d, t) },
    );
    this.cacheInfo = { path: this.cachePath, used: false, changed: loaded.files, bytes: null };
    this.scheduleCacheWrite(0);
  }

  private async reloadFromCache(): Promise<boolean> {
    const cacheName = relative(this.dir, this.cachePath!).split('\\').join('/');
    const unusable = (why: string) => {
      this.cacheDiagnostics = [
        {
          level: 'warning',
          path: cacheName,
          line: null,
          code: 'cache_rebuilt',
          message: `persisted index not used: ${why}; rebuilt from the files`,
        },
      ];
      return false;
    };
    // The files are listed first and, in a large backlog, stat'ed in a thread while the cache is read.
    const listed = walkBacklogSync(this.dir);
    const stating = statFilesAlong(this.dir, listed.files);
    const walking = stating.stats.then((stats) => ({ walked: listed, stats }));
    walking.catch(() => undefined);
    // A one-shot reads the items it shows (ItemTable), when nothing changed; the rest reads them all now.
    const read = await readIndexCache(this.cachePath!, this.cacheVersion, { lazyItems: this.deferIndex });
    if (!('snapshot' in read)) {
      if (read.missing) this.cacheDiagnostics = [];
      return read.missing ? false : unusable(read.reason);
    }
    const { snapshot, table } = read;
    if (this.deferIndex && this.searchSoon) this.index.readAhead(snapshot.index, read.routes);
    // Nothing else to do before the stats: this thread takes its share of them.
    stating.help();
    const { walked, stats } = await walking;
    const { changed, removed } = compareFiles(read.files, table.paths, walked.files, stats);
    const cachePath = this.cachePath!;
    // Told when the index turns out unusable after it was taken (its bytes are read when first used).
    const builtInstead = (why: string) => {
      unusable(why);
      this.fileDiagnostics = [...this.fileDiagnostics, ...this.cacheDiagnostics];
      // The index was built from the items instead; the next start rebuilds the cache from the files
      // (not after close: the file was let go, not found wrong).
      if (!this.closed) rmSync(cachePath, { force: true });
    };
    if (this.deferIndex && changed.length + removed.length === 0) {
      // Every item's path is a file the walk found (nothing removed): inside the root, not ignored.
      const at = new Map<string, number>();
      table.ids.forEach((id, i) => at.set(id, i));
      if (at.size !== table.ids.length) return unusable('an item in it is malformed');
      // Each item read when first asked for, checked then: one that is not what it must be (a bug: the
      // file is signed) fails the lookup that asked and drops the cache; the CLI runs the command again.
      this.store.replaceLater({
        at,
        ids: table.ids,
        paths: table.paths,
        statuses: table.statuses,
        states: table.states,
        updated: table.updated,
        item: (i) => {
          let item: BacklogItem | undefined;
          try {
            item = table.item(i);
          } catch {
            // Said below.
          }
          if (item && isCachedItemShape(item)) return item;
          builtInstead(`item ${i} in it is malformed`);
          // A lookup cannot read the files here (they are read asynchronously): the CLI runs its command
          // again, from the files (cacheDropped).
          throw cacheDropped(`the persisted index's item ${i} is malformed`);
        },
      });
      const docs = () => table.ids.map((id) => this.store.toSearchDocument(this.store.byId(id)!));
      // The documents are made from the store when the index is first read: before any change to it
      // (applyLatest and removeFile settle first), so they are the cached items' as read. The result
      // store and id routing take them by position, each made when first read (a one-shot's results).
      this.index.restoreLater(snapshot.index, docs, builtInstead, {
        ids: table.ids,
        at,
        routes: read.routes,
        doc: (i) => this.store.toSearchDocument(this.store.byId(table.ids[i])!),
      });
    } else {
      let items: BacklogItem[];
      try {
        items = snapshot.items;
      } catch (err) {
        return unusable((err as Error).message);
      }
      if (!items.every(isCachedItemShape)) return unusable('an item in it is malformed');
      this.store.replaceAll(items);
      const docs = () => items.map((item) => this.store.toSearchDocument(item));
      try {
        this.index.restore(snapshot.index, docs(), builtInstead);
      } catch (err) {
        return unusable((err as Error).message);
      }
      if (!sameIds(this.index.documentIds(), items)) return unusable('its index and its items disagree');
    }
    this.holdFile(snapshot.index);
    this.cacheDiagnostics = [];
    // Links are not files of the backlog, so the cache does not track them: report today's.
    const links = walked.links.map(linkDiagnostic);
    this.fileDiagnostics = [];
    this.diagnosticsLater = () => [
      ...snapshot.diagnostics.filter((d) => d.code !== 'symbolic_link'),
      ...links,
    ];
    if (changed.length + removed.length > Math.max(50, this.store.size / 10)) {
      // Re-indexing a document costs in proportion to its terms' posting lengths; past a tenth of the
      // backlog a fresh build from the cached items plus the changed files is faster.
      const gone = new Set([...removed, ...changed]);
      const fresh = await loadFiles(this.dir, changed, this.currentFormat);
      for (const item of fresh.items) this.applyWordBudget(item, fresh.diagnostics);
      const kept = [...this.store.values()].filter((i) => !gone.has(i.path));
      const owners = new Map(kept.map((i) => [idKey(i.id), i]));
      fresh.diagnostics.push(...settleDuplicateIds(fresh.items, owners));
      const items = [...kept, ...fresh.items];
      this.fileDiagnostics = [...this.fileDiagnostics.filter((d) => !gone.has(d.path)), ...fresh.diagnostics];
      this.store.replaceAll(items);
      await this.index.build(items.map((item) => this.store.toSearchDocument(item)));
    } else {
      for (const path of removed) this.removeFile(path);
      for (const path of changed) await this.applyFile(path);
    }
    this.cacheInfo = {
      path: this.cachePath,
      used: true,
      changed: changed.length + removed.length,
      bytes: null,
    };
    // A long-lived process completes the prepared bodies a one-shot command left out (ResultStore.savePrepared).
    if (changed.length + removed.length > 0 || (!this.deferIndex && this.index.snippetsPartial))
      this.scheduleCacheWrite();
    return true;
  }

  /**
   * Applies what changed on disk since the files were read: each file whose size or modification time
   * is not its item's, each new one, each one gone. A watcher started after the read calls this once
   * it is ready, for what changed before it saw the file's folder. Returns how many paths it applied.
   */
  async catchUp(): Promise<number> {
    const walked = await walkBacklog(this.dir);
    const stats = await statFiles(this.dir, walked.files);
    const changed = Object.keys(stats).filter((path) => {
      const id = this.store.atPath(path);
      const item = id === undefined ? undefined : this.store.byId(id);
      // A file without an item (malformed when read) is read again: it may have been fixed since.
      return !item || item.size !== stats[path].size || item.mtime_ms !== stats[path].mtime_ms;
    });
    const removed = [...this.store.values()].map((item) => item.path).filter((path) => !stats[path]);
    for (const path of removed) this.removeFile(path);
    for (const path of changed) await this.applyFile(path);
    return changed.length + removed.length;
  }

  /**
   * Re-reads one file (path relative to the root) and updates everything before returning: added,
   * changed, or gone. Descendants are re-indexed too when the item's place in the tree changed.
   */
  applyFile(relPath: string): Promise<BacklogItem | null> {
    const run = this.applyLatest(relPath);
    this.applying.set(relPath, run);
    const forget = () => {
      if (this.applying.get(relPath) === run) this.applying.delete(relPath);
    };
    run.then(forget, forget);
    return run;
  }

  private async applyLatest(relPath: string): Promise<BacklogItem | null> {
    if (await this.reconfigured(relPath)) return null;
    const generation = this.touch(relPath);
    const { item, diagnostics } = await loadFile(this.dir, relPath, this.currentFormat);
    // A later apply or remove of this path started while this one read: the later one decides, and a
    // write that applied its own file (then overtaken by the watcher's apply of it) answers with that.
    if (this.generations.get(relPath) !== generation) {
      const later = this.applying.get(relPath);
      if (later) return later;
      const current = this.store.atPath(relPath);
      return current ? this.store.byId(current)! : null;
    }
    if (item) this.applyWordBudget(item, diagnostics);
    this.fileDiagnostics = [...this.fileDiagnostics.filter((d) => d.path !== relPath), ...diagnostics];
    this.index.settle();
    const previous = this.store.atPath(relPath);
    if (!item) {
      if (previous) {
        this.removeItem(previous);
        this.emit({ kind: 'remove', path: relPath, id: previous });
      }
      return null;
    }
    if (previous && previous !== item.id) this.removeItem(previous);
    const ownerId = this.store.ownerOfKey(item.id);
    const owner = ownerId ? this.store.byId(ownerId) : undefined;
    if (owner && owner.path !== relPath) {
      const taken = (id: string) => this.store.ownerOfKey(id) !== undefined;
      if (keepsId(item, owner)) {
        // The new file outranks the one that had the id (an active task beside its archived copy).
        this.removeItem(owner.id);
        const id = duplicateId(owner, owner.id, taken);
        this.fileDiagnostics.push(duplicateDiagnostic(owner, owner.id, relPath, id));
        owner.id = id;
        this.store.put(owner);
        this.index.upsert(this.store.toSearchDocument(owner));
        // Its sub-tasks' lineage names it by its new id now.
        this.reindex(this.store.descendants(owner.id, false));
        this.semantic.upsert(owner).catch(() => undefined);
      } else {
        const id = duplicateId(item, item.id, taken);
        this.fileDiagnostics.push(duplicateDiagnostic(item, item.id, owner.path, id));
        item.id = id;
      }
    }
    const before = this.store.put(item);
    this.index.upsert(this.store.toSearchDocument(item));
    if (!before || before.parent_id !== item.parent_id || before.id !== item.id)
      this.reindex(this.store.descendants(item.id, false));
    this.semantic.upsert(item).catch(() => undefined);
    this.emit({ kind: 'upsert', path: relPath, id: item.id });
    return item;
  }

  /**
   * When `relPath` is the backlog's config (or becomes one), the format is detected again and, if it
   * changed, every file is read again in it. Returns true when `relPath` was handled that way.
   */
  async reconfigured(relPath: string): Promise<boolean> {
    if (relPath !== this.currentFormat.configPath && relPath !== 'config.yml') return false;
    const format = await detectFormat(this.dir, this.forcedFormat);
    if (format.signature === this.currentFormat.signature) return format.configPath === relPath;
    const before = new Set(this.store.ids());
    await this.reload(undefined, { rebuild: true });
    // Ids may have changed (a path became a task id): the vectors follow (cached chunks are not embedded again).
    for (const item of this.store.values()) {
      before.delete(item.id);
      this.semantic.upsert(item).catch(() => undefined);
    }
    for (const id of before) this.semantic.remove(id);
    this.emit({ kind: 'reload', path: relPath, id: '' });
    return true;
  }

  /** Forgets the file at `relPath` (deleted or renamed away). Returns whether an item was there. */
  removeFile(relPath: string): boolean {
    if (relPath === this.currentFormat.configPath) {
      void this.reconfigured(relPath);
      return false;
    }
    this.touch(relPath);
    this.applying.delete(relPath);
    this.fileDiagnostics = this.fileDiagnostics.filter((d) => d.path !== relPath);
    const id = this.store.atPath(relPath);
    if (!id) return false;
    this.index.settle();
    this.removeItem(id);
    this.emit({ kind: 'remove', path: relPath, id });
    return true;
  }

  /** Called after each file applied to or removed from the index; returns the unsubscribe function. */
  onChange(listener: (change: BacklogChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A restored file whose stamp matched is read when its parts are first needed, through a descriptor
   * kept open until every part is read (unread-bytes.ts). A long-lived process reads what is left once
   * its background work is done, a slice a tick, and the descriptor is closed then; a one-shot exits
   * first. `close` lets the file go in any case.
   */
  private holdFile(bytes: Uint8Array): void {
    this.cacheBytes = bytes;
    if (this.deferIndex) return;
    void this.index.warmedUp().then(() =>
      this.restWork.start(() => {
        if (this.cacheBytes !== bytes || this.closed) return true;
        try {
          return readSome(bytes, REST_SLICE_BYTES);
        } catch {
          // Shorter or unreadable since it was checked: each part left fails where it is read.
          release(bytes);
          return true;
        }
      }),
    );
  }

  /** Stops the work of this Indexer and closes the persisted index's file if a restore still holds it. */
  close(): void {
    this.closed = true;
    if (this.cacheBytes) release(this.cacheBytes);
    this.cacheBytes = null;
  }

  /** Writes the pending persisted index now; call before the process exits. */
  async flush(): Promise<void> {
    if (this.cacheTimer) {
      clearTimeout(this.cacheTimer);
      this.cacheTimer = null;
      this.cacheWrite = this.writeCache();
    }
    await this.cacheWrite;
  }

  private removeItem(id: string): void {
    const kids = this.store.remove(id);
    this.index.remove(id);
    this.semantic.remove(id);
    for (const kid of kids) this.reindex(this.store.descendants(kid, true));
  }

  /** Puts these items in the index again (their lineage, which `parent_id` filters use, changed). */
  private reindex(ids: string[]): void {
    for (const id of ids) this.index.upsert(this.store.toSearchDocument(this.store.byId(id)!));
  }

  /** Marks how much of a long body is searchable (Limits.maxWordsPerFile) and says so in a diagnostic. */
  private applyWordBudget(item: BacklogItem, diagnostics: Diagnostic[]): void {
    const max = this.limits.maxWordsPerFile;
    const searchable = lengthWithinWords(item.body, max);
    if (searchable >= item.body.length) return;
    item.searchable_chars = searchable;
    diagnostics.push({
      level: 'warning',
      path: item.path,
      line: null,
      code: 'terms_over_budget',
      message: `over ${max} words: the first ${max} (${searchable} of ${item.body.length} characters) are searchable, the rest is kept and readable with get (limits.maxWordsPerFile)`,
    });
  }

  /** Bumps the path's generation (see applyFile) and returns it. */
  private touch(relPath: string): number {
    const generation = (this.generations.get(relPath) ?? 0) + 1;
    this.generations.set(relPath, generation);
    return generation;
  }

  private emit(change: BacklogChange): void {
    this.scheduleCacheWrite();
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the index is already up to date.
      }
    }
  }

  /** Writes the persisted index after `delay` ms unless another change comes first. */
  private scheduleCacheWrite(delay = CACHE_WRITE_DELAY_MS): void {
    if (!this.cachePath) return;
    if (this.cacheTimer) clearTimeout(this.cacheTimer);
    this.cacheTimer = setTimeout(() => {
      this.cacheTimer = null;
      this.cacheWrite = this.writeCache();
    }, delay);
    this.cacheTimer.unref();
  }

  private async writeCache(): Promise<void> {
    if (!this.cachePath) return;
    await this.cacheWrite;
    // The backlog's folder is gone (deleted while open): writing its cache would make the folder again.
    if (!existsSync(this.dir)) return;
    const files: Record<string, FileStat> = {};
    const items = [...this.store.values()];
    for (const item of items) files[item.path] = { size: item.size, mtime_ms: item.mtime_ms };
    try {
      const bytes = await writeIndexCache(
        this.cachePath,
        this.cacheVersion,
        {
          files,
          items,
          diagnostics: this.fileDiagnostics.filter((d) => d.code !== 'cache_rebuilt'),
          index: await this.index.serialize(),
        },
        this.dir,
      );
      this.cacheInfo = { ...this.cacheInfo, bytes };
    } catch (err) {
      // A read-only folder only costs the next start its speed; say so once and stop trying.
      this.fileDiagnostics.push({
        level: 'warning',
        path: relative(this.dir, this.cachePath).split('\\').join('/'),
        line: null,
        code: 'cache_unwritable',
        message: `persisted index not written: ${(err as Error).message}`,
      });
      this.cachePath = null;
    }
  }
}

/**
 * Every file's size and modification time against the cache's (columns: no object per file): `changed`,
 * the walked files whose stats differ or that the cache does not have; `removed`, the cache's files and
 * items' paths that are not a file now (an item whose file is gone, or never was there, is dropped).
 * `stats`: statFilesAlong's, along `walked`.
 */
export function compareFiles(
  files: FileColumns,
  itemPaths: readonly string[],
  walked: readonly string[],
  stats: Float64Array,
): { changed: string[]; removed: string[] } {
  const changed: string[] = [];
  const n = walked.length;
  // The usual case: the cache's files and items are the walk's files in its order (the cache was written
  // from a walk), compared along without a map of 50,000 paths.
  if (files.paths.length === n && itemPaths.length === n) {
    let k = 0;
    while (k < n && files.paths[k] === walked[k] && itemPaths[k] === walked[k]) k++;
    if (k === n) {
      const removed: string[] = [];
      for (let i = 0; i < n; i++) {
        if (stats[2 * i] < 0) removed.push(walked[i]);
        else if (files.sizes[i] !== stats[2 * i] || files.mtimes[i] !== stats[2 * i + 1])
          changed.push(walked[i]);
      }
      return { changed, removed };
    }
  }
  const cachedAt = new Map<string, number>();
  files.paths.forEach((p, j) => cachedAt.set(p, j));
  const statAt = new Map<string, number>();
  walked.forEach((p, k) => {
    if (stats[2 * k] < 0) return; // vanished, or not a file now
    statAt.set(p, k);
    const j = cachedAt.get(p);
    if (j === undefined || files.sizes[j] !== stats[2 * k] || files.mtimes[j] !== stats[2 * k + 1])
      changed.push(p);
  });
  const removed = [
    ...new Set([...files.paths.filter((p) => !statAt.has(p)), ...itemPaths.filter((p) => !statAt.has(p))]),
  ];
  return { changed, removed };
}

/** What every cached item must look like before it is used (the cache is checked, not trusted). */
function isCachedItemShape(item: unknown): item is BacklogItem {
  const i = item as Partial<BacklogItem> | null;
  return (
    typeof i === 'object' &&
    i !== null &&
    typeof i.id === 'string' &&
    typeof i.title === 'string' &&
    // A cached body is decoded when first read (index-cache.ts): a string by construction, not read here.
    (isLazy(i, 'body') || typeof i.body === 'string') &&
    typeof i.path === 'string' &&
    isCachedPath(i.path) &&
    Array.isArray(i.tags) &&
    Array.isArray(i.references) &&
    typeof i.frontmatter === 'object'
  );
}

/** A cached item's path: inside the root, and one a walk reads. */
function isCachedPath(path: unknown): boolean {
  return typeof path === 'string' && isRelativeInside(path) && !isIgnoredPath(path);
}

function sameIds(indexed: string[], items: BacklogItem[]): boolean {
  if (indexed.length !== items.length) return false;
  const ids = new Set(items.map((i) => i.id));
  return ids.size === items.length && indexed.every((id) => ids.has(id));
}
