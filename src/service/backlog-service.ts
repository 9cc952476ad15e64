import { BacklogError, errors, isBacklogError } from '../errors.js';
import { OramaSearchService, idKey, type SearchSettings } from '../search/orama-search-service.js';
import { buildSnippet, toPlainText, type Snippet } from '../search/snippet.js';
import type { SearchDocument, SearchFilters, SearchGroup, SearchHit, TextField } from '../search/types.js';
import { parseRawQuery, positiveText } from '../search/query-parser.js';
import { LinkGraph, findRelated } from './links.js';
import { summarize, type ItemSummary } from './summary.js';
import { DEFAULT_HYBRID_SETTINGS, hybridRank, type HybridSettings } from '../search/hybrid.js';
import { SemanticSearch, type SemanticOptions, type SemanticStatus } from './semantic.js';
import type { Scored } from '../search/fusion.js';
import { join, relative } from 'node:path';
import {
  isIgnoredPath,
  linkDiagnostic,
  loadBacklog,
  loadFile,
  loadFiles,
  statFiles,
  walkBacklog,
} from '../storage/backlog-store.js';
import { isRelativeInside } from '../storage/root-path.js';
import { DEMO_BACKLOG_DIR, DEMO_CACHE_DIR } from '../storage/demo.js';
import {
  CACHE_FILE,
  serviceCacheVersion,
  readIndexCache,
  writeIndexCache,
  type FileStat,
} from './index-cache.js';
import { RESOURCE_URI_PREFIX, lengthWithinWords, resourceUri } from '../storage/parse.js';
import {
  ITEM_TYPES,
  STATUSES,
  searchableBody,
  type BacklogItem,
  type Diagnostic,
  type ItemType,
} from '../storage/types.js';
import { resolveLimits, type Limits } from './limits.js';
import {
  MAX_QUERY_CHARS,
  listOptionsSchema,
  searchOptionsSchema,
  toBacklogError,
  type ListOptionsInput,
  RELATIONS,
  type Relation,
  type SearchMode,
  type SearchOptions,
  type SearchOptionsInput,
} from './options.js';
import {
  createItem,
  deleteItem,
  updateItem,
  writeResourceFile,
  type CreateInput,
  type DeleteInput,
  type UpdateInput,
  type WriteResourceInput,
  type WriteResult,
} from './writes.js';

export type { CreateInput, DeleteInput, UpdateInput, WriteResourceInput, WriteResult } from './writes.js';

/** One file applied to or removed from the index. */
export interface BacklogChange {
  kind: 'upsert' | 'remove';
  /** Relative to the backlog root. */
  path: string;
  id: string;
}

export interface SearchResult {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  /** Relative to the backlog root. */
  path: string;
  snippet: Snippet;
  matched_fields: TextField[];
  score?: number;
  /** With include_scores: the BM25F score, the vector similarity (null when that retriever did not find it) and the final score. */
  scores?: { lexical: number | null; vector: number | null; final: number };
  /** Which retriever found it: words (`lexical`), meaning (`semantic`), or `both`; `related` for linked items. */
  match: 'lexical' | 'semantic' | 'both' | 'related';
  content?: string;
}

/** A ranked hit on its way to a result: which retriever found it and with what raw scores. */
interface RankedHit extends SearchHit {
  lexical: number | null;
  vector: number | null;
  match: SearchResult['match'];
}

function lexicalHit(h: SearchHit): RankedHit {
  return { ...h, lexical: h.score, vector: null, match: 'lexical' };
}

/** A document only vector search found: its cosine is its score. */
function semanticHit(v: Scored): RankedHit {
  return { id: v.id, score: v.score, matched_fields: [], lexical: null, vector: v.score, match: 'semantic' };
}

/** Fewer lexical matches than this: the rest of the page is filled from vector search (when it is ready). */
const FALLBACK_BELOW = 3;
/** Candidates each retriever gives hybrid fusion. */
const HYBRID_CANDIDATES = 100;

/** An item linked to a hit (include_related). */
export interface RelatedResult extends SearchResult {
  distance: number;
  via: string;
  source: string;
  relation: Relation;
}

export interface ResultGroup {
  key: string;
  /** Matches in this group (all pages). */
  count: number;
  /** The group's best results, ranked, at most `limit`. */
  results: SearchResult[];
}

export interface SearchResponse {
  results: SearchResult[];
  total: number;
  query: string;
  /** The mode that actually ran. */
  search_mode: SearchMode;
  took_ms: number;
  /** Offset of the next page, when there is one. */
  next_offset?: number;
  /** Something the caller should know, e.g. a requested mode that is not available. */
  warnings?: string[];
  /** With include_related: items linked to the hits, best first, no duplicates. */
  related?: RelatedResult[];
  /** With group_by: the matches grouped, each group ranked. */
  groups?: ResultGroup[];
}

export type { ItemSummary } from './summary.js';

export interface ListResponse {
  results: ItemSummary[];
  total: number;
  counts_by_status: Record<string, number>;
  next_offset?: number;
}

export type GetEntry =
  | { id: string; status: 'ok'; item: BacklogItem }
  | { id: string; status: 'error'; error: { code: string; message: string; hint: string } };

export interface ItemMetadata {
  id: string;
  type: ItemType;
  title: string;
  path: string;
  file_name: string;
  file_type: string;
  size: number;
  modified_at: string | null;
  indexed_at: string | null;
  frontmatter: Record<string, unknown>;
  links: { parent: string | null; children: string[]; references: string[] };
}

export interface BacklogServiceOptions {
  /** Absolute path of the backlog root. */
  dir: string;
  search?: Partial<SearchSettings>;
  /** Fusion and multipliers of hybrid search (defaults: DEFAULT_HYBRID_SETTINGS, docs/search.md). */
  hybrid?: Partial<HybridSettings>;
  /** Embeddings for hybrid search; default: none. openBacklog passes the provider chosen by the caller. */
  embeddings?: Omit<SemanticOptions, 'cacheDir'>;
  /**
   * Where the persisted index goes (`<dir>/.cache` by default; the demo backlog's goes to the
   * package's own `.cache/demo`). `false`: nothing is written, every start reads every file.
   */
  cacheDir?: string | false;
  /** Budgets of one file, query and response (DEFAULT_LIMITS; docs/security.md). */
  limits?: Partial<Limits>;
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

/** Persisted-index writes wait this long after the last change, so a burst of edits writes once. */
const CACHE_WRITE_DELAY_MS = 1000;

const SEARCH_KEYS = Object.keys(searchOptionsSchema.shape);
const LIST_KEYS = Object.keys(listOptionsSchema.shape);

/**
 * The backlog: its files, their diagnostics and the search index over them. Every surface (library,
 * CLI, MCP, HTTP, viewer) searches through `searchUnified`.
 */
export class BacklogService {
  readonly dir: string;
  readonly index: OramaSearchService;
  readonly limits: Limits;
  private items = new Map<string, BacklogItem>();
  private byKey = new Map<string, string>();
  private byPath = new Map<string, string>();
  private children = new Map<string, string[]>();
  private indexedAt = new Map<string, number>();
  /** Per path, bumped by every applyFile and removeFile: a slow read never undoes a later change. */
  private generations = new Map<string, number>();
  private fileDiagnostics: Diagnostic[] = [];
  /** Bodies as plain text for snippets (markdown stripping is the slow part of a snippet). */
  private plainBodies = new Map<string, string>();
  private graph: LinkGraph | null = null;
  private cachePath: string | null;
  private readonly cacheVersion: string;
  private cacheInfo: CacheInfo;
  private cacheDiagnostics: Diagnostic[] = [];
  private cacheTimer: NodeJS.Timeout | null = null;
  private cacheWrite: Promise<void> = Promise.resolve();
  private readonly semantic: SemanticSearch;
  private readonly hybridSettings: HybridSettings;

  constructor(options: BacklogServiceOptions) {
    this.dir = options.dir;
    this.limits = resolveLimits(options.limits);
    this.index = new OramaSearchService(options.search);
    const cacheDir =
      options.cacheDir ?? (this.dir === DEMO_BACKLOG_DIR ? DEMO_CACHE_DIR : join(this.dir, '.cache'));
    this.cachePath = cacheDir === false ? null : join(cacheDir, CACHE_FILE);
    this.cacheVersion = serviceCacheVersion(this.index.settings, this.limits.maxWordsPerFile);
    this.cacheInfo = { path: this.cachePath, used: false, changed: 0, bytes: null };
    this.hybridSettings = {
      ...DEFAULT_HYBRID_SETTINGS,
      ...options.hybrid,
      multipliers: { ...DEFAULT_HYBRID_SETTINGS.multipliers, ...options.hybrid?.multipliers },
    };
    this.semantic = new SemanticSearch({
      provider: 'none',
      embedMissing: 'background',
      ...options.embeddings,
      cacheDir: cacheDir === false ? null : cacheDir,
    });
  }

  /** Starts the semantic index over the current items (see SemanticOptions.embedMissing). */
  async startSemantic(): Promise<void> {
    await this.semantic.start([...this.items.values()]);
  }

  /** Provider and progress of the semantic index. */
  semanticStatus(): SemanticStatus {
    return this.semantic.info();
  }

  /** Waits until the initial embedding is done (or skipped, or failed). */
  async semanticReady(): Promise<void> {
    await this.semantic.ready;
  }

  /**
   * Brings the index in step with the files: from the persisted index when there is a valid one
   * (reading only the files that changed since), else by reading every file.
   */
  async reload(
    onProgress?: (phase: 'read' | 'index', done: number, total: number) => void,
    { rebuild = false }: { rebuild?: boolean } = {},
  ): Promise<void> {
    if (this.cachePath && !rebuild && (await this.reloadFromCache())) return;
    const loaded = await loadBacklog(this.dir, (d, t) => onProgress?.('read', d, t));
    for (const item of loaded.items) this.applyWordBudget(item, loaded.diagnostics);
    this.fileDiagnostics = [...loaded.diagnostics, ...this.cacheDiagnostics];
    this.setItems(loaded.items);
    await this.index.build(
      loaded.items.map((item) => this.toSearchDocument(item)),
      { onProgress: (d, t) => onProgress?.('index', d, t) },
    );
    const now = Date.now();
    for (const id of this.items.keys()) this.indexedAt.set(id, now);
    this.cacheInfo = { path: this.cachePath, used: false, changed: loaded.files, bytes: null };
    this.scheduleCacheWrite(0);
  }

  private async reloadFromCache(): Promise<boolean> {
    const read = await readIndexCache(this.cachePath!, this.cacheVersion);
    if (!('snapshot' in read)) {
      this.cacheDiagnostics = read.missing
        ? []
        : [
            {
              level: 'warning',
              path: relativeCachePath(this.dir, this.cachePath!),
              line: null,
              code: 'cache_rebuilt',
              message: `persisted index not used: ${read.reason}; rebuilt from the files`,
            },
          ];
      return false;
    }
    const { snapshot } = read;
    const walked = await walkBacklog(this.dir);
    const stats = await statFiles(this.dir, walked.files);
    const unusable = (why: string) => {
      this.cacheDiagnostics = [
        {
          level: 'warning',
          path: relativeCachePath(this.dir, this.cachePath!),
          line: null,
          code: 'cache_rebuilt',
          message: `persisted index not used: ${why}; rebuilt from the files`,
        },
      ];
      return false;
    };
    if (!Array.isArray(snapshot.items) || !snapshot.items.every(isCachedItemShape))
      return unusable('an item in it is malformed');
    try {
      this.index.restore(snapshot.index);
    } catch (err) {
      return unusable((err as Error).message);
    }
    if (!sameIds(this.index.documentIds(), snapshot.items))
      return unusable('its index and its items disagree');
    this.cacheDiagnostics = [];
    // Links are not files of the backlog, so the cache does not track them: report today's.
    this.fileDiagnostics = [
      ...snapshot.diagnostics.filter((d) => d.code !== 'symbolic_link'),
      ...walked.links.map(linkDiagnostic),
    ];
    this.setItems(snapshot.items);
    const now = Date.now();
    for (const id of this.items.keys()) this.indexedAt.set(id, now);
    const changed = Object.keys(stats).filter(
      (p) => snapshot.files[p]?.size !== stats[p].size || snapshot.files[p]?.mtime_ms !== stats[p].mtime_ms,
    );
    // Only what is inside the root now counts: an item whose file is gone (or never was there) is dropped.
    const removed = [
      ...new Set([
        ...Object.keys(snapshot.files).filter((p) => !stats[p]),
        ...snapshot.items.filter((i) => !stats[i.path]).map((i) => i.path),
      ]),
    ];
    if (changed.length + removed.length > Math.max(50, this.items.size / 10)) {
      // Re-indexing a document costs in proportion to its terms' posting lengths; past a tenth of the
      // backlog a fresh build from the cached items plus the changed files is faster.
      const gone = new Set([...removed, ...changed]);
      const fresh = await loadFiles(this.dir, changed);
      for (const item of fresh.items) this.applyWordBudget(item, fresh.diagnostics);
      const kept = snapshot.items.filter((i) => !gone.has(i.path));
      const keys = new Map(kept.map((i) => [idKey(i.id), i.path]));
      for (const item of fresh.items) {
        const owner = keys.get(idKey(item.id));
        if (owner === undefined) continue;
        fresh.diagnostics.push({
          level: 'warning',
          path: item.path,
          line: null,
          code: 'duplicate_id',
          message: `id ${item.id} is already used by ${owner}; this file is addressed as ${resourceUri(item.path)}`,
        });
        item.id = resourceUri(item.path);
      }
      const items = [...kept, ...fresh.items];
      this.fileDiagnostics = [...snapshot.diagnostics.filter((d) => !gone.has(d.path)), ...fresh.diagnostics];
      this.setItems(items);
      await this.index.build(items.map((item) => this.toSearchDocument(item)));
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
    if (changed.length + removed.length > 0) this.scheduleCacheWrite();
    return true;
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
    const files: Record<string, FileStat> = {};
    for (const item of this.items.values()) files[item.path] = { size: item.size, mtime_ms: item.mtime_ms };
    try {
      const bytes = await writeIndexCache(this.cachePath, this.cacheVersion, {
        files,
        items: [...this.items.values()],
        diagnostics: this.fileDiagnostics.filter((d) => d.code !== 'cache_rebuilt'),
        index: await this.index.serialize(),
      });
      this.cacheInfo = { ...this.cacheInfo, bytes };
    } catch (err) {
      // A read-only folder only costs the next start its speed; say so once and stop trying.
      this.fileDiagnostics.push({
        level: 'warning',
        path: relativeCachePath(this.dir, this.cachePath),
        line: null,
        code: 'cache_unwritable',
        message: `persisted index not written: ${(err as Error).message}`,
      });
      this.cachePath = null;
    }
  }

  /** Writes pending persisted-index and embedding-cache updates now; call before the process exits. */
  async flush(): Promise<void> {
    await this.semantic.flush();
    if (this.cacheTimer) {
      clearTimeout(this.cacheTimer);
      this.cacheTimer = null;
      this.cacheWrite = this.writeCache();
    }
    await this.cacheWrite;
  }

  /** Writes what is pending and stops the embedding workers. */
  async close(): Promise<void> {
    await this.flush();
    await this.semantic.close();
  }

  /** How the last start used the persisted index. */
  cacheStatus(): CacheInfo {
    return { ...this.cacheInfo };
  }

  private setItems(items: BacklogItem[]): void {
    this.items = new Map(items.map((i) => [i.id, i]));
    this.plainBodies = new Map();
    this.warmPlainBodies();
    this.rebuildLinks();
  }

  /** Lookup maps and parent -> children links, derived from `items`. */
  private rebuildLinks(): void {
    this.graph = null;
    const items = [...this.items.values()];
    this.byKey = new Map(items.map((i) => [idKey(i.id), i.id]));
    this.byPath = new Map(items.map((i) => [i.path, i.id]));
    this.children = new Map();
    for (const item of items) this.linkToParent(item);
  }

  private linkToParent(item: BacklogItem): void {
    const parent = item.parent_id ? this.byKey.get(idKey(item.parent_id)) : undefined;
    if (parent && parent !== item.id)
      this.children.set(parent, [...(this.children.get(parent) ?? []), item.id]);
  }

  /** Adds one item to the lookup maps (one file changed: no full rebuild, so a burst of changes stays linear). */
  private linkItem(item: BacklogItem): void {
    this.graph = null;
    const key = idKey(item.id);
    this.byKey.set(key, item.id);
    this.byPath.set(item.path, item.id);
    this.linkToParent(item);
    // Items written before their parent existed find it now.
    for (const other of this.items.values()) {
      if (
        other.parent_id &&
        other !== item &&
        idKey(other.parent_id) === key &&
        !this.children.get(item.id)?.includes(other.id)
      )
        this.linkToParent(other);
    }
  }

  private unlinkItem(item: BacklogItem): void {
    this.graph = null;
    if (this.byKey.get(idKey(item.id)) === item.id) this.byKey.delete(idKey(item.id));
    if (this.byPath.get(item.path) === item.id) this.byPath.delete(item.path);
    const parent = item.parent_id ? this.byKey.get(idKey(item.parent_id)) : undefined;
    if (parent)
      this.children.set(
        parent,
        (this.children.get(parent) ?? []).filter((c) => c !== item.id),
      );
  }

  /**
   * Re-reads one file (path relative to the root) and updates the index before returning: added,
   * changed, or gone. Descendants are re-indexed too when the item's place in the tree changed.
   */
  async applyFile(relPath: string): Promise<BacklogItem | null> {
    const generation = this.touch(relPath);
    const { item, diagnostics } = await loadFile(this.dir, relPath);
    // A later apply or remove of this path started while this one read: the later one decides.
    if (this.generations.get(relPath) !== generation) {
      const current = this.byPath.get(relPath);
      return current ? this.items.get(current)! : null;
    }
    if (item) this.applyWordBudget(item, diagnostics);
    this.fileDiagnostics = [...this.fileDiagnostics.filter((d) => d.path !== relPath), ...diagnostics];
    const previous = this.byPath.get(relPath);
    if (!item) {
      if (previous) this.removeItem(previous);
      if (previous) this.emitChange({ kind: 'remove', path: relPath, id: previous });
      return null;
    }
    if (previous && previous !== item.id) this.removeItem(previous);
    const owner = this.byKey.get(idKey(item.id));
    if (owner && this.items.get(owner)?.path !== relPath) {
      this.fileDiagnostics.push({
        level: 'warning',
        path: relPath,
        line: null,
        code: 'duplicate_id',
        message: `id ${item.id} is already used by ${this.items.get(owner)?.path}; this file is addressed as ${resourceUri(relPath)}`,
      });
      item.id = resourceUri(relPath);
    }
    const before = this.items.get(item.id);
    if (before) this.unlinkItem(before);
    this.items.set(item.id, item);
    this.plainBodies.set(item.id, toPlainText(searchableBody(item)));
    this.linkItem(item);
    this.index.upsert(this.toSearchDocument(item));
    this.indexedAt.set(item.id, Date.now());
    if (!before || before.parent_id !== item.parent_id || before.id !== item.id)
      this.reindexDescendants(item.id);
    this.semantic.upsert(item).catch(() => undefined);
    this.emitChange({ kind: 'upsert', path: relPath, id: item.id });
    return item;
  }

  /** Forgets the file at `relPath` (deleted or renamed away). Returns whether an item was there. */
  removeFile(relPath: string): boolean {
    this.touch(relPath);
    this.fileDiagnostics = this.fileDiagnostics.filter((d) => d.path !== relPath);
    const id = this.byPath.get(relPath);
    if (!id) return false;
    this.removeItem(id);
    this.emitChange({ kind: 'remove', path: relPath, id });
    return true;
  }

  private removeItem(id: string): void {
    const kids = this.children.get(id) ?? [];
    const item = this.items.get(id);
    if (item) this.unlinkItem(item);
    this.children.delete(id);
    this.items.delete(id);
    this.plainBodies.delete(id);
    this.indexedAt.delete(id);
    this.index.remove(id);
    this.semantic.remove(id);
    for (const kid of kids) this.reindexDescendants(kid, true);
  }

  private reindexDescendants(id: string, includeSelf = false): void {
    const queue = includeSelf ? [id] : [...(this.children.get(id) ?? [])];
    const seen = new Set<string>();
    while (queue.length) {
      const next = queue.shift()!;
      if (seen.has(next)) continue;
      seen.add(next);
      const item = this.items.get(next);
      if (item) this.index.upsert(this.toSearchDocument(item));
      queue.push(...(this.children.get(next) ?? []));
    }
  }

  /** Parent, grandparent, ... (stops at a missing parent or a cycle). */
  private ancestors(item: BacklogItem): string[] {
    const out: string[] = [];
    const seen = new Set([item.id]);
    let parent = item.parent_id;
    while (parent) {
      const id = this.byKey.get(idKey(parent)) ?? parent;
      if (seen.has(id)) break;
      seen.add(id);
      out.push(id);
      parent = this.items.get(id)?.parent_id ?? null;
    }
    return out;
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

  private toSearchDocument(item: BacklogItem): SearchDocument {
    const known = new Set(['id', 'title', 'type', 'status', 'parent_id', 'tags', 'author']);
    const extra = [item.assignee, item.priority, ...item.references];
    for (const [k, v] of Object.entries(item.frontmatter)) {
      if (!known.has(k) && v !== null && v !== undefined && typeof v !== 'object') extra.push(String(v));
    }
    const updated = updatedMsOf(item);
    return {
      id: item.id,
      type: item.type,
      title: item.title,
      body: searchableBody(item),
      tags: item.tags,
      author: item.author,
      status: item.status,
      parent_id: item.parent_id,
      ancestors: this.ancestors(item),
      path: item.path,
      folder: item.folder,
      file_type: item.file_type,
      updated_ms: updated,
      extra: extra.filter(Boolean).join('\n'),
    };
  }

  /**
   * Makes the plain-text bodies in the background, a batch per tick (about 70 ms in all for 700
   * files): the first snippet of a long body would otherwise cost a query several ms, and doing it
   * before the first result would delay the start.
   */
  private warmPlainBodies(): void {
    const pending = [...this.items.values()];
    const step = () => {
      for (const item of pending.splice(0, 50)) this.plainBody(item);
      if (pending.length) setTimeout(step, 0).unref();
    };
    setTimeout(step, 0).unref();
  }

  private plainBody(item: BacklogItem): string {
    let plain = this.plainBodies.get(item.id);
    if (plain === undefined) {
      plain = toPlainText(searchableBody(item));
      this.plainBodies.set(item.id, plain);
    }
    return plain;
  }

  /** Bumps the path's generation (see applyFile) and returns it. */
  private touch(relPath: string): number {
    const generation = (this.generations.get(relPath) ?? 0) + 1;
    this.generations.set(relPath, generation);
    return generation;
  }

  /** Number of items in the backlog. */
  get size(): number {
    return this.items.size;
  }

  /** The one search path. Throws BacklogError (INVALID_QUERY, INVALID_FILTER). */
  async searchUnified(
    query: string,
    options: Omit<SearchOptionsInput, 'query'> = {},
  ): Promise<SearchResponse> {
    const started = performance.now();
    const parsed = searchOptionsSchema.safeParse({ ...options, query });
    if (!parsed.success) throw toBacklogError(parsed.error, SEARCH_KEYS);
    const opts = parsed.data;
    const text = opts.query.trim();
    if (!text)
      throw errors.invalidQuery(
        'query is empty',
        'Pass at least one word; use list() to browse without a query.',
      );
    if (text.length > MAX_QUERY_CHARS)
      throw errors.invalidQuery(
        `query is ${text.length} characters, over the ${MAX_QUERY_CHARS} limit`,
        'Shorten the query to its key words.',
      );
    this.checkFilterValues(opts);
    const positive = opts.match_mode === 'raw' ? positiveText(parseRawQuery(text)) : text;
    const terms = this.index.analyzer.queryTerms(text).length;
    if (terms > this.limits.maxQueryTerms)
      throw errors.inputTooLarge(
        'query',
        `${terms} distinct terms, over the budget of ${this.limits.maxQueryTerms} (limits.maxQueryTerms)`,
        'Search with the key words only; paste long text into a file instead.',
        { limit: this.limits.maxQueryTerms },
      );

    const warnings: string[] = [];
    const ready = this.semantic.state === 'ready';
    let mode: SearchMode = opts.mode ?? (ready ? 'hybrid' : 'bm25');
    if (mode !== 'bm25' && !ready) {
      warnings.push(
        `mode "${mode}" needs embeddings; the semantic index is ${this.semanticProgress()}; ran bm25`,
      );
      mode = 'bm25';
    } else if (mode !== 'bm25' && !this.semantic.supports(positive)) {
      if (opts.mode) warnings.push('the embedding model is English-only and this query is not; ran bm25');
      mode = 'bm25';
    }
    const request = {
      query: text,
      filters: this.filtersOf(opts),
      sort: opts.sort,
      conjunctive: opts.conjunctive,
      matchMode: opts.match_mode,
    };
    let ranked: RankedHit[];
    let total: number;
    let indexGroups: SearchGroup[] | undefined;
    if (mode === 'bm25') {
      // The index counts the groups and ranks each in the same pass as the page.
      const found = this.index.search({
        ...request,
        limit: opts.limit,
        offset: opts.offset,
        groupBy: opts.group_by,
      });
      ranked = found.hits.map(lexicalHit);
      indexGroups = found.groups;
      total = found.total;
      // Too few words in common: fill from the nearest meanings, marked as such.
      if (ready && found.total < FALLBACK_BELOW && opts.offset === 0) {
        const seen = new Set(ranked.map((h) => h.id));
        const vector = await this.semantic.search(positive, opts.limit, this.allowedIds(request.filters));
        for (const v of vector) {
          if (seen.has(v.id) || ranked.length >= opts.limit) continue;
          ranked.push(semanticHit(v));
          indexGroups = undefined; // regrouped below, with the semantic hits
          total++;
        }
      }
    } else {
      const depth = Math.max(HYBRID_CANDIDATES, opts.offset + opts.limit);
      const allowed = this.allowedIds(request.filters);
      // The query is embedded in a worker thread: search the words while it runs.
      const nearest = this.semantic.search(positive, depth, allowed);
      let lexical: { hits: SearchHit[]; total: number } = { hits: [], total: 0 };
      try {
        if (mode === 'hybrid')
          lexical = this.index.search({ ...request, sort: 'relevant', limit: depth, offset: 0 });
      } catch (err) {
        nearest.catch(() => undefined);
        throw err;
      }
      let vector = await nearest;
      // A boolean question (raw syntax, or every word required) is answered by the words; meaning
      // only re-ranks those answers, it does not add documents the query excludes.
      if (mode === 'hybrid' && (opts.match_mode === 'raw' || opts.conjunctive)) {
        const matched = new Set(lexical.hits.map((h) => h.id));
        vector = vector.filter((v) => matched.has(v.id));
      }
      ranked = this.fuse(mode, text, positive, lexical.hits, vector);
      total =
        mode === 'semantic'
          ? ranked.length
          : lexical.total + ranked.filter((h) => h.match === 'semantic').length;
      if (opts.sort === 'recent') ranked.sort((a, b) => this.updatedMs(b.id) - this.updatedMs(a.id));
      const routed = this.index.resolveId(text);
      const at = routed ? ranked.findIndex((h) => h.id === routed) : -1;
      if (at > 0 && opts.sort !== 'recent') ranked.unshift(...ranked.splice(at, 1));
    }
    // bm25 asked the index for the page itself.
    const page = mode === 'bm25' ? ranked : ranked.slice(opts.offset, opts.offset + opts.limit);
    if (opts.include_content) {
      const chars = page.reduce((n, h) => n + this.items.get(h.id)!.body.length, 0);
      if (chars > this.limits.maxResponseChars)
        throw errors.inputTooLarge(
          'include_content',
          `the page's content is ${chars} characters, over the budget of ${this.limits.maxResponseChars} (limits.maxResponseChars)`,
          'Ask for fewer results (limit), or read the items you need with get.',
          { limit: this.limits.maxResponseChars },
        );
    }
    const queryTerms = new Set(this.index.analyzer.queryTerms(positive));
    const toResult = (hit: RankedHit) => this.toResult(hit, queryTerms, opts);

    const response: SearchResponse = {
      results: page.map(toResult),
      total,
      query: text,
      search_mode: mode,
      took_ms: 0,
    };
    if (opts.offset + page.length < total) response.next_offset = opts.offset + page.length;
    if (opts.group_by)
      response.groups = indexGroups
        ? indexGroups.map((g) => ({
            key: g.key,
            count: g.count,
            results: g.hits.map((h) => toResult(lexicalHit(h))),
          }))
        : groupByType(ranked, (id) => this.items.get(id)!.type, opts.limit, toResult);
    if (opts.include_related) {
      const relations = new Set<Relation>(opts.relations ?? RELATIONS);
      // At most max(limit, 10): enough context for a short page, bounded for an agent's budget.
      const related = findRelated(page, this.linkGraph(), opts.max_hops, relations).slice(
        0,
        Math.max(opts.limit, 10),
      );
      response.related = related.map((r) => ({
        ...this.toResult(
          { id: r.id, score: r.score, matched_fields: [], lexical: null, vector: null, match: 'related' },
          queryTerms,
          opts,
        ),
        distance: r.distance,
        via: r.via,
        source: r.source,
        relation: r.relation,
      }));
    }
    if (warnings.length) response.warnings = warnings;
    response.took_ms = Number((performance.now() - started).toFixed(2));
    return response;
  }

  /** Hybrid: both lists normalized, fused and multiplied (search/hybrid.ts); semantic: the vector list alone. */
  private fuse(
    mode: 'hybrid' | 'semantic',
    text: string,
    positive: string,
    lexical: SearchHit[],
    vector: Scored[],
  ): RankedHit[] {
    if (mode === 'semantic') {
      return vector.map(semanticHit);
    }
    const fields = new Map(lexical.map((h) => [h.id, h.matched_fields]));
    const routed = this.index.resolveId(text);
    const fused = hybridRank(
      {
        lexical: lexical.map((h) => ({ id: h.id, score: h.score })),
        vector,
        lexicalUpperBound: this.index.upperBound(positive),
        queryTerms: this.index.analyzer.queryTerms(positive),
        queryIdKey: routed ? idKey(routed) : undefined,
        facts: (id) => {
          const item = this.items.get(id)!;
          return {
            titleTerms: this.index.analyzer.queryTerms(item.title),
            idKey: idKey(item.id),
            type: item.type,
            updatedMs: this.updatedMs(id),
          };
        },
      },
      this.hybridSettings,
    );
    return fused.map((h) => ({
      id: h.id,
      score: h.score,
      matched_fields: fields.get(h.id) ?? [],
      lexical: h.lexical,
      vector: h.vector,
      match: h.lexical === null ? 'semantic' : h.vector === null ? 'lexical' : 'both',
    }));
  }

  /** The filters as a predicate on ids for the vector retriever (undefined: everything passes). */
  private allowedIds(filters: SearchFilters): ((id: string) => boolean) | undefined {
    const ids = this.index.matchingIds(filters);
    return ids ? (id) => ids.has(id) : undefined;
  }

  private updatedMs(id: string): number {
    const item = this.items.get(id);
    return item ? updatedMsOf(item) : 0;
  }

  private semanticProgress(): string {
    const s = this.semantic.info();
    if (s.state === 'indexing') return `still being built (${s.done}/${s.total} chunks embedded)`;
    if (s.state === 'loading') return 'loading its model';
    return s.state === 'failed' ? 'unavailable (failed to load)' : 'off (no embedding provider)';
  }

  private toResult(hit: RankedHit, queryTerms: ReadonlySet<string>, opts: SearchOptions): SearchResult {
    const item = this.items.get(hit.id)!;
    const result: SearchResult = {
      id: item.id,
      type: item.type,
      title: item.title,
      status: item.status,
      parent_id: item.parent_id,
      path: item.path,
      snippet: buildSnippet(
        {
          title: item.title,
          body: this.plainBody(item),
          tags: item.tags.join(', '),
          author: item.author ?? '',
        },
        this.index.analyzer,
        queryTerms,
        hit.matched_fields,
      ),
      matched_fields: hit.matched_fields,
      match: hit.match,
    };
    if (opts.include_scores) {
      const round = (n: number | null) => (n === null ? null : Number(n.toFixed(4)));
      result.score = round(hit.score)!;
      result.scores = { lexical: round(hit.lexical), vector: round(hit.vector), final: round(hit.score)! };
    }
    if (opts.include_content) result.content = item.body;
    return result;
  }

  /** Links between items, built on first use after a change. */
  private linkGraph(): LinkGraph {
    this.graph ??= new LinkGraph(this.items.values(), (ref) => this.resolve(ref));
    return this.graph;
  }

  private filtersOf(opts: Partial<Record<keyof SearchFilters, string[]>>): SearchFilters {
    return {
      types: opts.types as ItemType[] | undefined,
      status: opts.status,
      parent_id: opts.parent_id,
      tags: opts.tags,
      author: opts.author,
      path: opts.path,
      folder: opts.folder,
      file_type: opts.file_type,
    };
  }

  /** Filter values that can never match are errors, not silent empty results. */
  private checkFilterValues(opts: { status?: string[]; parent_id?: string[] }): void {
    if (opts.status?.length) {
      const known = new Set<string>(STATUSES);
      for (const item of this.items.values()) if (item.status) known.add(item.status.toLowerCase());
      const bad = opts.status.find((s) => !known.has(s.toLowerCase()));
      if (bad)
        throw errors.invalidFilter(
          'status',
          `"${bad}" is not a status of this backlog`,
          `Use one of: ${[...known].join(', ')}.`,
        );
    }
    for (const id of opts.parent_id ?? []) {
      if (!this.byKey.has(idKey(id)))
        throw errors.invalidFilter(
          'parent_id',
          `no item with id "${id}"`,
          'Pass the id of an existing task or epic, e.g. EPIC-0001.',
        );
    }
  }

  /** Items matching filters, without a query; most recently updated first. */
  list(filters: ListOptionsInput = {}): ListResponse {
    const parsed = listOptionsSchema.safeParse(filters);
    if (!parsed.success) throw toBacklogError(parsed.error, LIST_KEYS);
    const opts = parsed.data;
    this.checkFilterValues(opts);
    const found = this.index.search({
      query: '',
      filters: this.filtersOf(opts),
      limit: Number.MAX_SAFE_INTEGER,
    });
    let items = found.hits.map((h) => this.items.get(h.id)!);
    if (opts.sort === 'id') items = items.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
    const counts: Record<string, number> = {};
    for (const item of items) {
      const key = item.status ?? 'none';
      counts[key] = (counts[key] ?? 0) + 1;
    }
    const page = items.slice(opts.offset, opts.offset + opts.limit);
    const response: ListResponse = {
      results: page.map(summarize),
      total: items.length,
      counts_by_status: counts,
    };
    if (opts.offset + page.length < items.length) response.next_offset = opts.offset + page.length;
    return response;
  }

  /** Resolves an id, resource URI or path to the item's id. */
  resolve(ref: string): string | undefined {
    const r = ref.trim();
    if (this.items.has(r)) return r;
    const byKey = this.byKey.get(idKey(r));
    if (byKey) return byKey;
    const path = r.startsWith(RESOURCE_URI_PREFIX)
      ? r.slice(RESOURCE_URI_PREFIX.length)
      : r.replace(/^\.?\//, '');
    return this.byPath.get(path);
  }

  /** One item (throws NOT_FOUND), or a batch where each unknown id gets its own error entry. */
  get(ref: string): BacklogItem;
  get(refs: string[]): GetEntry[];
  get(refs: string | string[]): BacklogItem | GetEntry[] {
    if (!Array.isArray(refs)) {
      const id = this.resolve(refs);
      if (!id) throw errors.notFound(refs);
      return this.items.get(id)!;
    }
    if (refs.length > this.limits.maxIdsPerGet)
      throw errors.inputTooLarge(
        'ids',
        `${refs.length} ids, over the budget of ${this.limits.maxIdsPerGet} (limits.maxIdsPerGet)`,
        `Ask for at most ${this.limits.maxIdsPerGet} ids at a time.`,
        { limit: this.limits.maxIdsPerGet },
      );
    return refs.map((ref): GetEntry => {
      try {
        return { id: ref, status: 'ok', item: this.get(ref) };
      } catch (err) {
        if (!isBacklogError(err)) throw err;
        return { id: ref, status: 'error', error: { code: err.code, message: err.message, hint: err.hint } };
      }
    });
  }

  getMetadata(ref: string): ItemMetadata {
    const item = this.get(ref);
    const indexed = this.indexedAt.get(item.id);
    const parent = item.parent_id ? (this.byKey.get(idKey(item.parent_id)) ?? item.parent_id) : null;
    return {
      id: item.id,
      type: item.type,
      title: item.title,
      path: item.path,
      file_name: item.path.slice(item.path.lastIndexOf('/') + 1),
      file_type: item.file_type,
      size: item.size,
      modified_at: item.mtime_ms ? new Date(item.mtime_ms).toISOString() : null,
      indexed_at: indexed ? new Date(indexed).toISOString() : null,
      frontmatter: item.frontmatter,
      links: { parent, children: this.children.get(item.id) ?? [], references: item.references },
    };
  }

  /** What did not fit: unparseable frontmatter, values outside the schema, duplicate ids. */
  diagnostics(): {
    items: number;
    by_type: Record<string, number>;
    /** The mode a search runs in when it does not ask for one. */
    search_mode: SearchMode;
    embeddings: SemanticStatus;
    files: Diagnostic[];
  } {
    const byType: Record<string, number> = Object.fromEntries(ITEM_TYPES.map((t) => [t, 0]));
    for (const item of this.items.values()) byType[item.type]++;
    const embeddings = this.semantic.info();
    return {
      items: this.items.size,
      by_type: byType,
      search_mode: embeddings.state === 'ready' ? 'hybrid' : 'bm25',
      embeddings,
      files: this.fileDiagnostics,
    };
  }

  // ----- Writes (logic in ./writes.ts). Each validates strictly, writes atomically, and updates the index before resolving.

  /** Creates a task or epic as `tasks/<ID>-<slug>.md` with the next free id. Throws INVALID_FILTER naming the field. */
  create(input: CreateInput): Promise<WriteResult> {
    return createItem(this, input);
  }

  /** Patches a task or epic: fields, status, body (replace, append, or old_string -> new_string). */
  update(input: UpdateInput): Promise<WriteResult> {
    return updateItem(this, input);
  }

  /** Deletes an item's file. A task or epic with children is refused (CONFLICT) unless `force`. */
  delete(input: DeleteInput): Promise<WriteResult> {
    return deleteItem(this, input);
  }

  /** Creates, overwrites, appends to, or edits (old_string -> new_string) a resource file inside the root. */
  writeResource(input: WriteResourceInput): Promise<WriteResult> {
    return writeResourceFile(this, input);
  }

  /** Every item id (tasks, epics, resource URIs). */
  ids(): string[] {
    return [...this.items.keys()];
  }

  /** Called after each file applied to or removed from the index; returns the unsubscribe function. */
  onChange(listener: (change: BacklogChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changeListeners = new Set<(change: BacklogChange) => void>();

  private emitChange(change: BacklogChange): void {
    this.scheduleCacheWrite();
    for (const listener of this.changeListeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the index is already up to date.
      }
    }
  }
}

/** Groups ranked hits by a key (their order kept inside each group); groups ordered by their best hit. */
function groupByType<H extends SearchHit>(
  hits: H[],
  keyOf: (id: string) => string,
  limit: number,
  toResult: (h: H) => SearchResult,
): ResultGroup[] {
  const groups = new Map<string, H[]>();
  for (const h of hits) {
    const key = keyOf(h.id);
    const group = groups.get(key);
    if (group) group.push(h);
    else groups.set(key, [h]);
  }
  return [...groups].map(([key, list]) => ({
    key,
    count: list.length,
    results: list.slice(0, limit).map(toResult),
  }));
}

/** When an item last changed: `updated_at`, else `created_at`, else the file's mtime (sort `recent`). */
function updatedMsOf(item: BacklogItem): number {
  return Date.parse(item.updated_at ?? '') || Date.parse(item.created_at ?? '') || item.mtime_ms;
}

/** What every cached item must look like before it is used (the cache is checked, not trusted). */
function isCachedItemShape(item: unknown): item is BacklogItem {
  const i = item as Partial<BacklogItem> | null;
  return (
    typeof i === 'object' &&
    i !== null &&
    typeof i.id === 'string' &&
    typeof i.title === 'string' &&
    typeof i.body === 'string' &&
    typeof i.path === 'string' &&
    isRelativeInside(i.path) &&
    !isIgnoredPath(i.path) &&
    Array.isArray(i.tags) &&
    Array.isArray(i.references) &&
    typeof i.frontmatter === 'object'
  );
}

function sameIds(indexed: string[], items: BacklogItem[]): boolean {
  if (indexed.length !== items.length) return false;
  const ids = new Set(items.map((i) => i.id));
  return ids.size === items.length && indexed.every((id) => ids.has(id));
}

function relativeCachePath(dir: string, path: string): string {
  return relative(dir, path).split('\\').join('/');
}

export { BacklogError };
