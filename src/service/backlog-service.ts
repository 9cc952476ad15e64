/**
 * BacklogService: the façade every surface calls (library, CLI, MCP, HTTP, viewer). It validates
 * options with the one zod schema, asks OramaSearchService for the search, and shapes the answer; the
 * items live in an ItemStore, the Indexer keeps them and the indexes in step with the files, and the
 * writes are in writes.ts.
 */
import { join } from 'node:path';
import { SemanticSearch, type SemanticOptions, type SemanticStatus } from '../embeddings/semantic-search.js';
import { BacklogError, droppedCacheReason, errors, isBacklogError } from '../errors.js';
import type { HybridSettings } from '../search/hybrid.js';
import { buildWhere, matchesWhere } from '../search/filters.js';
import { OramaSearchService, type SearchSettings } from '../search/orama-search-service.js';
import type { OutsideStats } from '../search/score.js';
import type { SearchFilters, SearchHit, SearchResult } from '../search/types.js';
import type { BacklogFormat, FormatName } from '../storage/formats/detect.js';
import { statusKey } from '../storage/ids.js';
import { TASK_STATES, type BacklogItem, type TaskState } from '../storage/types.js';
import { diagnosticsReport, type DiagnosticsReport } from './diagnostics.js';
import { CACHE_FILE, defaultCacheDir } from './cache-file.js';
import { serviceCacheVersion } from './index-cache.js';
import { Indexer, type BacklogChange, type CacheInfo, type LoadProgress } from './indexer.js';
import { ItemStore, type FilterableItem } from './item-store.js';
import { isDemoFolder, projectNameOf } from './describe-backlog.js';
import { MAX_QUERY_CHARS, resolveLimits, type Limits } from './limits.js';
import type { ListOptions, ListOptionsInput, SearchOptions, SearchOptionsInput } from './options.js';
import {
  LIST_KEYS,
  SEARCH_KEYS,
  plainListError,
  plainListOptions,
  plainSearchOptions,
} from './plain-options.js';
import { RELATIONS } from '../search/types.js';
import type { BacklogVocabulary, GetEntry, ItemMetadata, ListResponse, SearchResponse } from './responses.js';
import { sortItems } from './list-sort.js';
import { summarize } from './summary.js';
import type {
  CreateInput,
  DeleteInput,
  UpdateInput,
  WriteResourceInput,
  WriteResult,
} from './write-inputs.js';
import { loadTaskSchema } from '../storage/schema.js';

/**
 * The search and list options' schemas (options.ts, with zod): loaded with the open, or, when the open was
 * told it would need none (`optionSchemas: false`: the CLI's one-shots; issue #23), by the first search
 * whose options are not plain (plain-options.ts reads the rest without zod).
 */
let schemas: typeof import('./options.js') | undefined;
async function loadSchemas(): Promise<typeof import('./options.js')> {
  return (schemas ??= await import('./options.js'));
}

/** The writes, loaded by the first one (issue #23: with zod and the YAML writer, no reader needs them). */
async function writes(): Promise<typeof import('./writes.js')> {
  const [w] = await Promise.all([import('./writes.js'), loadTaskSchema()]);
  return w;
}

export type {
  CreateInput,
  DeleteInput,
  UpdateInput,
  WriteResourceInput,
  WriteResult,
} from './write-inputs.js';
export type { BacklogChange, CacheInfo } from './indexer.js';
export type { ItemSummary } from './summary.js';
export type { BacklogVocabulary, GetEntry, ItemMetadata, ListResponse, SearchResponse } from './responses.js';
export type { SearchResult, RelatedResult, ResultGroup } from '../search/types.js';

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
  /** Read the folder as this format (`native`, `backlog-md`) instead of detecting it (docs/formats.md). */
  format?: FormatName;
  /**
   * Background preparation after a build or restore (default true; see OramaSearchServiceOptions). False
   * (a one-shot process) also restores the persisted index when it is first read (Indexer's deferIndex).
   */
  background?: boolean;
  /** Prepare every snippet body before a save even with `background` off (OramaSearchServiceOptions). */
  saveEveryBody?: boolean;
  /** A search follows the open (a one-shot `search`): see the Indexer's `searchSoon`. */
  searchSoon?: boolean;
  /**
   * Load the search and list options' schemas (zod) with the open (default true). False: a one-shot
   * process whose options are plain (plain-options.ts) never loads them; `searchUnified` loads them for
   * options that are not; `list` refuses those (plainListError: INVALID_FILTER, INPUT_TOO_LARGE).
   */
  optionSchemas?: boolean;
}

export class BacklogService {
  readonly dir: string;
  readonly limits: Limits;
  readonly index: OramaSearchService;
  // In a Backlog.md folder a parent id written with the prefix of older files (`parent_task_id: task-76`,
  // from before `task_prefix: back`) is read as the task with that number (BACK-76).
  private readonly store = new ItemStore(() =>
    this.format.name === 'backlog-md' ? this.format.config.taskPrefix : null,
  );
  private readonly semantic: SemanticSearch;
  private readonly indexer: Indexer;
  private readonly schemasLoaded: Promise<unknown> | undefined;

  constructor(options: BacklogServiceOptions) {
    this.dir = options.dir;
    this.schemasLoaded = options.optionSchemas === false ? undefined : loadSchemas();
    this.limits = resolveLimits(options.limits);
    const cacheDir = options.cacheDir ?? defaultCacheDir(this.dir);
    this.semantic = new SemanticSearch({
      provider: 'none',
      embedMissing: 'background',
      ...options.embeddings,
      cacheDir: cacheDir === false ? null : cacheDir,
    });
    this.index = new OramaSearchService(options.search, {
      hybrid: options.hybrid,
      vectors: this.semantic,
      neighbors: () => this.store.linkGraph(),
      background: options.background,
      saveEveryBody: options.saveEveryBody,
      // The whole request path, as a caller's search takes it (bm25: the rehearsal never embeds).
      rehearse: (text) => this.searchUnified(text, { limit: 20, mode: 'bm25' }),
    });
    this.indexer = new Indexer({
      dir: this.dir,
      store: this.store,
      index: this.index,
      semantic: this.semantic,
      limits: this.limits,
      cachePath: cacheDir === false ? null : join(cacheDir, CACHE_FILE),
      cacheVersion: (format) => serviceCacheVersion(this.index.settings, this.limits.maxWordsPerFile, format),
      format: options.format,
      deferIndex: options.background === false,
      searchSoon: options.searchSoon === true,
    });
  }

  // ----- Lifecycle

  /**
   * Brings the index in step with the files: from the persisted index when there is a valid one
   * (reading only the files that changed since), else by reading every file.
   */
  async reload(onProgress?: LoadProgress, options: { rebuild?: boolean } = {}): Promise<void> {
    await Promise.all([this.indexer.reload(onProgress, options), this.schemasLoaded]);
  }

  /**
   * Reads the folder's format and settings (config.yml) before `reload`, so that `format` answers while the
   * files are still being read (the MCP server describes its tools with them).
   */
  detectFormat(): Promise<void> {
    return this.indexer.detectFormat();
  }

  /** Starts the semantic index over the current items (see SemanticOptions.embedMissing). */
  async startSemantic(): Promise<void> {
    // Without a provider the items are not read (a one-shot reads those it shows: ItemStore.replaceLater).
    await this.semantic.start(() => [...this.store.values()]);
  }

  /** Provider and progress of the semantic index. */
  semanticStatus(): SemanticStatus {
    return this.semantic.info();
  }

  /** Waits until the initial embedding is done (or skipped, or failed). */
  async semanticReady(): Promise<void> {
    await this.semantic.ready;
  }

  /** How the last start used the persisted index. */
  cacheStatus(): CacheInfo {
    return this.indexer.cacheStatus();
  }

  /** Writes pending persisted-index and embedding-cache updates now; call before the process exits. */
  async flush(): Promise<void> {
    await this.semantic.flush();
    await this.indexer.flush();
  }

  /**
   * Writes what is pending and stops the embedding workers. An embedding in flight is abandoned, not
   * waited for (what the cache holds is written): `flush` would wait for it.
   */
  async close(): Promise<void> {
    await this.semantic.close();
    await this.indexer.flush();
    this.indexer.close();
  }

  /**
   * Re-reads one file (path relative to the root) and updates the index before returning: added,
   * changed, or gone. Descendants are re-indexed too when the item's place in the tree changed.
   */
  applyFile(relPath: string): Promise<BacklogItem | null> {
    return this.indexer.applyFile(relPath);
  }

  /** Applies every file changed, added or removed since the files were read (see Indexer.catchUp). */
  catchUp(): Promise<number> {
    return this.indexer.catchUp();
  }

  /** Forgets the file at `relPath` (deleted or renamed away). Returns whether an item was there. */
  removeFile(relPath: string): boolean {
    return this.indexer.removeFile(relPath);
  }

  /** Called after each file applied to or removed from the index; returns the unsubscribe function. */
  onChange(listener: (change: BacklogChange) => void): () => void {
    return this.indexer.onChange(listener);
  }

  // ----- Reads

  /** The backlog's format and its settings (statuses in board order, id prefix, ...). */
  get format(): BacklogFormat {
    return this.indexer.format;
  }

  /** The statuses a filter accepts: the configured ones in board order, then any other status in use. */
  statuses(): string[] {
    return this.store.statusVocabulary(this.format.config.statuses);
  }

  /** Number of items in the backlog. */
  get size(): number {
    return this.store.size;
  }

  /** Every item id (tasks, epics, resource URIs). */
  ids(): string[] {
    return this.store.ids();
  }

  /** The one search path. Throws BacklogError (INVALID_QUERY, INVALID_FILTER, QUERY_SYNTAX, INPUT_TOO_LARGE). */
  async searchUnified(
    query: string,
    options: Omit<SearchOptionsInput, 'query'> = {},
    /** A workspace's: other backlogs' corpus statistics in idf, one vector share for all (workspace.ts). */
    internal: {
      outside?: OutsideStats;
      fixedShare?: boolean;
      knownElsewhere?: (term: string) => boolean;
    } = {},
  ): Promise<SearchResponse> {
    const input = { ...options, query };
    // Plain input is read without zod; the schemas read the rest (and word its errors).
    const plain = plainSearchOptions(input) as SearchOptions | undefined;
    const parse = plain ? undefined : (schemas ?? (await loadSchemas())).parseSearchOptions;
    this.index.settle(); // a one-shot's index is read now, not inside the query's took_ms
    const started = nowMs();
    const opts = plain ?? parse!(input, SEARCH_KEYS);
    const text = this.checkSearch(opts);
    const ask = () =>
      this.index.query({
        text,
        matchMode: opts.match_mode,
        filters: filtersOf(opts),
        sort: opts.sort,
        conjunctive: opts.conjunctive,
        mode: opts.mode,
        limit: opts.limit,
        offset: opts.offset,
        groupBy: opts.group_by,
        related: opts.include_related
          ? { maxHops: opts.max_hops, relations: opts.relations ?? RELATIONS }
          : undefined,
        includeScores: opts.include_scores,
        outside: internal.outside,
        fixedShare: internal.fixedShare,
        knownElsewhere: internal.knownElsewhere,
      });
    const answer = async () => {
      const outcome = await ask();
      if (opts.include_content) this.addContent(outcome.results);
      return outcome;
    };
    const { mode, warnings, ...found } = await answer().catch(async (err: unknown) => {
      if (droppedCacheReason(err) === undefined) throw err;
      // A one-shot's cached item turned out malformed (the cache is dropped): the files read, asked again.
      await this.indexer.reload(undefined, { rebuild: true });
      return answer();
    });
    const response: SearchResponse = { ...found, query: text, search_mode: mode, took_ms: 0 };
    if (warnings.length) response.warnings = warnings;
    response.took_ms = Number((nowMs() - started).toFixed(2));
    return response;
  }

  /**
   * What searchUnified answers for bm25 hits that `index.search` already ranked for the same request (`opts`,
   * as the schema gave them): the same checks, results (snippets), warnings and content, without ranking
   * again. A workspace ranks every backlog, merges, then builds only the page's results here.
   */
  resultsFor(opts: SearchOptions, hits: SearchHit[]): { results: SearchResult[]; warnings: string[] } {
    const text = this.checkSearch(opts);
    const built = this.index.resultsFor(
      { text, matchMode: opts.match_mode, mode: opts.mode, includeScores: opts.include_scores },
      hits,
    );
    if (opts.include_content) this.addContent(built.results);
    return built;
  }

  /** A search request's checks after the schema (the query, filter values, the word budget); the query trimmed. */
  private checkSearch(opts: SearchOptions): string {
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
    const terms = this.index.analyzer.queryTerms(text).length;
    if (terms > this.limits.maxQueryTerms)
      throw errors.inputTooLarge(
        'query',
        `${terms} distinct terms, over the budget of ${this.limits.maxQueryTerms} (limits.maxQueryTerms)`,
        'Search with the key words only; paste long text into a file instead.',
        { limit: this.limits.maxQueryTerms },
      );
    return text;
  }

  /** include_content: each result's body, within the answer budget. */
  private addContent(results: SearchResult[]): void {
    const chars = results.reduce((n, r) => n + this.store.byId(r.id)!.body.length, 0);
    if (chars > this.limits.maxResponseChars)
      throw errors.inputTooLarge(
        'include_content',
        `the page's content is ${chars} characters, over the budget of ${this.limits.maxResponseChars} (limits.maxResponseChars)`,
        'Ask for fewer results (limit), or read the items you need with get.',
        { limit: this.limits.maxResponseChars },
      );
    for (const r of results) r.content = this.store.byId(r.id)!.body;
  }

  /** Items matching filters, without a query; most recently updated first, or in another order (LIST_SORTS). */
  list(input: ListOptionsInput = {}): ListResponse {
    const opts = (plainListOptions(input) as ListOptions | undefined) ?? this.parseList(input);
    this.checkFilterValues(opts);
    // Without a `state`, list shows what the backlog's own tool lists: live tasks and the documents.
    const filters = filtersOf(opts);
    const live = opts.state === undefined;
    if (live) filters.state = [...LIVE_STATES];
    const dated = this.index.restorePending ? this.listedItems(filters) : this.indexedItems(filters);
    const sorted =
      opts.sort === 'updated' || opts.sort === 'recent'
        ? dated
        : sortItems(
            dated.map((x) => x.item),
            opts.sort,
            this.statuses(),
          ).map((item) => ({ item, status: item.status ?? null }));
    const counts: Record<string, number> = {};
    for (const { status } of sorted) counts[status ?? 'none'] = (counts[status ?? 'none'] ?? 0) + 1;
    const page = sorted.slice(opts.offset, opts.offset + opts.limit).map((x) => x.item);
    const response: ListResponse = {
      results: page.map(summarize),
      total: sorted.length,
      counts_by_status: counts,
      statuses: this.statuses(),
    };
    if (opts.offset + page.length < sorted.length) response.next_offset = opts.offset + page.length;
    if (live) {
      // What the default left out, so that "nothing in progress" is never said of archived work unseen.
      const state = TASK_STATES.filter((s) => !LIVE_STATES.includes(s));
      const others = this.index.restorePending
        ? this.listedItems({ ...filters, state })
        : this.indexedItems({ ...filters, state });
      const hidden: Partial<Record<TaskState, number>> = {};
      for (const x of others) hidden[x.state!] = (hidden[x.state!] ?? 0) + 1;
      if (others.length > 0) response.not_shown = hidden;
    }
    return response;
  }

  /**
   * The items passing `filters`, most recently updated first, from the index (a long-lived process's,
   * always there): ties in its order.
   */
  private indexedItems(filters: SearchFilters): ListedItem[] {
    const found = this.index.search({ query: '', filters, limit: Number.MAX_SAFE_INTEGER });
    return found.hits.map((h) => {
      const item = this.store.byId(h.id)!;
      return { item, state: item.state ?? null, status: item.status ?? null };
    });
  }

  /**
   * indexedItems while a one-shot's index is not read yet (restoreLater): the items themselves, filtered
   * as the index's `where` would (matchesWhere), so a one-shot `list` never reads the index and reads the
   * items it shows (issue #23). Ties in the items' order, the index's but for an id removed and added
   * again by the process that wrote the cache.
   */
  private listedItems(filters: SearchFilters): ListedItem[] {
    const all = this.store.filterable();
    const where = buildWhere(filters, () => all.flatMap((x) => x.keyOf('path') ?? []));
    const dated = all.filter((x) => where !== null && matchesWhere(x.keyOf, where));
    return dated.sort((a, b) => (a.updatedMs < b.updatedMs ? 1 : b.updatedMs < a.updatedMs ? -1 : 0));
  }

  /** The list options that are not plain (plain-options.ts), read by the schema. */
  private parseList(input: ListOptionsInput): ListOptions {
    if (!schemas) throw plainListError(input);
    const parsed = schemas.listOptionsSchema.safeParse(input);
    if (!parsed.success) throw schemas.toBacklogError(parsed.error, LIST_KEYS);
    return parsed.data;
  }

  /**
   * Resolves an id (any spelling; a bare number is a task number, `74` -> `BACK-74`, as Backlog.md's CLI
   * reads it), a qualified duplicate id (`BACK-569@archived`), a resource URI or a path to the item's id.
   */
  resolve(ref: string): string | undefined {
    const found = this.store.resolve(ref);
    const bare = found === undefined ? /^(?:mcp:\/\/backlog\/)?(\d+(?:\.\d+)*)$/.exec(ref.trim()) : null;
    return bare ? this.store.resolve(`${this.format.config.taskPrefix}-${bare[1]}`) : found;
  }

  /** The backlog's name: Backlog.md's `project_name`, else the folder that holds `backlog/` (or the folder's own). */
  get projectName(): string {
    return projectNameOf(this.format, this.dir);
  }

  /** How this backlog names things (docs/formats.md): the surfaces' labels, filters, examples and hints. */
  vocabulary(): BacklogVocabulary {
    return {
      project: this.projectName,
      format: this.format.name,
      ...this.format.vocabulary,
      example_ids: this.exampleIds(),
    };
  }

  /** An id of each kind this backlog has (a live one where it can), in the vocabulary's order; resources by URI are left out. */
  private exampleIds(): string[] {
    const out = new Map<string, string>();
    const live = (state: TaskState | null | undefined) => state === 'active' || state === null;
    for (const item of this.store.values()) {
      if (item.type === 'resource' || item.id.includes('://')) continue;
      const seen = out.get(item.type);
      if (seen === undefined || (live(item.state) && !live(this.store.byId(seen)?.state)))
        out.set(item.type, item.id);
    }
    const order = this.format.vocabulary.kinds.map((k) => k.type as string);
    return [...out].sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0])).map(([, id]) => id);
  }

  /** One item (throws NOT_FOUND), or a batch where each unknown id gets its own error entry. */
  get(ref: string): BacklogItem;
  get(refs: string[]): GetEntry[];
  get(refs: string | string[]): BacklogItem | GetEntry[] {
    if (!Array.isArray(refs)) {
      const id = this.resolve(refs);
      if (!id) throw errors.notFound(refs, this.exampleIds());
      return this.store.byId(id)!;
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
        // A dropped cache fails the whole call: the command is run again from the files (cacheDropped).
        if (!isBacklogError(err) || droppedCacheReason(err) !== undefined) throw err;
        return { id: ref, status: 'error', error: { code: err.code, message: err.message, hint: err.hint } };
      }
    });
  }

  /** Ids of the items whose parent is this item. */
  children(id: string): string[] {
    return this.store.children(id);
  }

  getMetadata(ref: string): ItemMetadata {
    const item = this.get(ref);
    const indexed = this.store.indexedTime(item.id);
    const parent = item.parent_id ? (this.store.ownerOfKey(item.parent_id) ?? item.parent_id) : null;
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
      links: { parent, children: this.store.children(item.id), references: item.references },
    };
  }

  /** What did not fit (unparseable front matter, values outside the format's schema, duplicate ids), summarized. */
  diagnostics(): DiagnosticsReport {
    return diagnosticsReport(this.store.values(), this.indexer.diagnostics(), this.format, {
      search_mode: this.index.defaultMode(),
      embeddings: this.semantic.info(),
    });
  }

  // ----- Writes (writes.ts): each validates strictly, writes atomically, and updates the index before resolving.

  /**
   * The built-in demo backlog (shipped inside the package, served when no backlog was found): read-only,
   * so that an agent's write never lands in the installed package.
   */
  get isDemo(): boolean {
    this.demo ??= isDemoFolder(this.dir);
    return this.demo;
  }
  private demo: boolean | undefined;

  /** Creates a task or epic as `tasks/<ID>-<slug>.md` with the next free id. Throws INVALID_FILTER naming the field. */
  create(input: CreateInput): Promise<WriteResult> {
    return this.writable().then(async () => (await writes()).createItem(this, input));
  }

  /** Patches a task or epic: fields, status, body (replace, append, or old_string -> new_string). */
  update(input: UpdateInput): Promise<WriteResult> {
    return this.writable().then(async () => (await writes()).updateItem(this, input));
  }

  /** Deletes an item's file. A task or epic with children is refused (CONFLICT) unless `force`. */
  delete(input: DeleteInput): Promise<WriteResult> {
    return this.writable().then(async () => (await writes()).deleteItem(this, input));
  }

  /** Creates, overwrites, appends to, or edits (old_string -> new_string) a resource file inside the root. */
  writeResource(input: WriteResourceInput): Promise<WriteResult> {
    return this.writable().then(async () => (await writes()).writeResourceFile(this, input));
  }

  /** Rejects with FORBIDDEN on the demo backlog (isDemo). */
  private async writable(): Promise<void> {
    if (this.isDemo)
      throw new BacklogError(
        'FORBIDDEN',
        'this is the built-in demo backlog, which is read-only',
        'Open your own backlog: pass --dir /path/to/backlog (or BACKLOG_DIR), or openBacklog({ dir }).',
        { dir: this.dir },
      );
  }

  /** Filter values that can never match are errors, not silent empty results. */
  private checkFilterValues(opts: { types?: string[]; status?: string[]; parent_id?: string[] }): void {
    const { kinds, parent } = this.format.vocabulary;
    // Only when no type asked for is one this backlog has: `task,epic` stays a fine way to say "tasks".
    const has = (t: string) => kinds.some((k) => k.type === t);
    const badType = opts.types?.length && !opts.types.some(has) ? opts.types[0] : undefined;
    if (badType)
      throw errors.invalidFilter(
        'types',
        `this ${this.format.name === 'backlog-md' ? 'Backlog.md ' : ''}backlog has no ${badType}s`,
        `Use one or more of: ${kinds.map((k) => k.type).join(', ')}${badType === 'epic' ? `; a task's parent is a ${parent}: filter by parent_id` : ''}.`,
      );
    if (opts.status?.length) {
      const known = this.statuses();
      const keys = new Set(known.map(statusKey));
      const bad = opts.status.find((s) => !keys.has(statusKey(s)));
      if (bad)
        throw errors.invalidFilter(
          'status',
          `"${bad}" is not a status of this backlog`,
          `Use one of: ${known.join(', ')} (any case and spacing).`,
        );
    }
    for (const id of opts.parent_id ?? []) {
      if (!this.store.ownerOfKey(id))
        throw errors.invalidFilter(
          'parent_id',
          `no item with id "${id}"`,
          `Pass the id of an existing ${this.format.vocabulary.parent}, e.g. ${this.exampleIds()[0] ?? `${this.format.config.taskPrefix}-1`}.`,
        );
    }
  }
}

/** An item as `list` reads it: itself (read when asked for, ItemStore.filterable), its state and status. */
type ListedItem = Pick<FilterableItem, 'item' | 'state' | 'status'>;

/** The filters of a request, as the search takes them (the one schema has already typed them). */
export function filtersOf(opts: Omit<SearchFilters, 'state'> & { state?: string[] }): SearchFilters {
  const { types, status, parent_id, tags, author, path, folder, file_type } = opts;
  const state = opts.state?.includes('all') ? undefined : (opts.state as TaskState[] | undefined);
  return { types, status, state, parent_id, tags, author, path, folder, file_type };
}

/** Milliseconds from some origin, for `took_ms`: `performance`'s first use loads node:perf_hooks (~3 ms of a one-shot search). */
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** The states `list` shows when none is asked for; `none` is every item without a state (documents). */
const LIVE_STATES: readonly (TaskState | 'none')[] = ['active', 'none'];
