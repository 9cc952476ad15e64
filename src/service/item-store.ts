/**
 * The backlog's items in memory: each parsed file by id, the lookups from any spelling of an id, a
 * resource URI or a path, and the tree (parent -> children, ancestors) and link graph derived from them.
 * Changed one item at a time (a burst of file changes stays linear); the link graph is rebuilt on demand.
 */
import type { FilterKeys } from '../search/filters.js';
import { filterKey } from '../search/indexed-document.js';
import { LinkGraph } from '../search/related.js';
import type { SearchDocument } from '../search/types.js';
import { idKey, statusKey } from '../storage/ids.js';
import { RESOURCE_URI_PREFIX, pathOfUri } from '../storage/parse.js';
import { lazyObject, lazyPrototype } from '../storage/lazy.js';
import { searchableBody, type BacklogItem, type TaskState } from '../storage/types.js';

/** When an item last changed: `updated_at`, else `created_at`, else the file's mtime (sort `recent`). */
export function updatedMsOf(item: BacklogItem): number {
  return Date.parse(item.updated_at ?? '') || Date.parse(item.created_at ?? '') || item.mtime_ms;
}

const FILTER_FIELDS = new Set([
  'id',
  'title',
  'type',
  'status',
  'parent_id',
  'tags',
  'author',
  'lang',
  'language',
]);

/** The language a file declares (`lang: ja` or `language: Japanese`), for the analyzer (docs/search.md). */
function languageField(frontmatter: Record<string, unknown>): { language?: string } {
  const v = frontmatter.lang ?? frontmatter.language;
  return typeof v === 'string' && v.trim() ? { language: v.trim() } : {};
}

/**
 * HTML comments are not content (readers never see them), and Backlog.md marks every section with
 * them (`<!-- SECTION:DESCRIPTION:BEGIN -->`): left in, their words would match every task.
 */
/** A search document whose body is made from its item when first read. */
const LAZY_DOCUMENT = lazyPrototype('body', (item: BacklogItem) => withoutComments(searchableBody(item)));

function withoutComments(markdown: string): string {
  let open = markdown.indexOf('<!--');
  if (open < 0) return markdown;
  let out = '';
  let from = 0;
  // indexOf, not a lazy regex: a hostile body of many unclosed `<!--` stays linear.
  while (open >= 0) {
    const close = markdown.indexOf('-->', open + 4);
    if (close < 0) break;
    out += markdown.slice(from, open);
    from = close + 3;
    open = markdown.indexOf('<!--', from);
  }
  return out + markdown.slice(from);
}

/**
 * Items by position, each read when first asked for (the persisted index's ItemTable): ids and paths as
 * columns. `item(i)` throws when the item cannot be read.
 */
export interface ItemSource {
  readonly ids: readonly string[];
  /** Each id's position, when the caller has it (else made from the ids). */
  readonly at?: ReadonlyMap<string, number>;
  readonly paths: readonly string[];
  /** Each item's status (the filter vocabulary: statusVocabulary). */
  readonly statuses: readonly (string | null)[];
  /** Each item's state, and its date (updatedMsOf): what a `list` without other filters reads. */
  readonly states: readonly (TaskState | null)[];
  readonly updated: ArrayLike<number>;
  item(i: number): BacklogItem;
}

/**
 * An item as `list` reads it (ItemStore.filterable): its state, status and date, and its key of each
 * filter field, the item itself read only when something else is asked for.
 */
export interface FilterableItem {
  readonly item: BacklogItem;
  readonly state: TaskState | null;
  readonly status: string | null;
  /** updatedMsOf(item). */
  readonly updatedMs: number;
  keyOf(field: keyof FilterKeys): string | string[] | undefined;
}

/** An ItemStore's items while they are still a source (replaceLater): each decoded once, when asked for. */
interface LaterItems {
  source: ItemSource;
  /** Position of each id. */
  at: ReadonlyMap<string, number>;
  decoded: (BacklogItem | undefined)[];
  /** When they were put (indexedTime). */
  since: number;
  /** byKey and byPath made from the columns. */
  lookups: boolean;
}

export class ItemStore {
  private items = new Map<string, BacklogItem>();
  /** Set by replaceLater until something needs every item (materialize). */
  private later: LaterItems | null = null;
  private byKey = new Map<string, string>();
  private byPath = new Map<string, string>();
  private kids = new Map<string, string[]>();
  /** The parent each item was linked under (parentOf may answer otherwise once another file arrives). */
  private linkedParent = new Map<string, string>();
  private readonly indexedAt = new Map<string, number>();
  /** Items per status key (statusKey: any case and spacing), for the filter vocabulary. */
  private readonly statusCounts = new Map<string, { count: number; spelling: string }>();
  private graph: LinkGraph | null = null;

  /**
   * @param taskPrefix the backlog's task id prefix (`BACK`) when a parent written with another prefix is the
   * task with that number (older Backlog.md files say `parent_task_id: task-76`); null: no such rule.
   */
  constructor(private readonly taskPrefix: () => string | null = () => null) {}

  get size(): number {
    return this.later ? this.later.at.size : this.items.size;
  }

  values(): IterableIterator<BacklogItem> {
    this.materialize();
    return this.items.values();
  }

  ids(): string[] {
    return this.later ? [...this.later.at.keys()] : [...this.items.keys()];
  }

  byId(id: string): BacklogItem | undefined {
    const later = this.later;
    if (!later) return this.items.get(id);
    const i = later.at.get(id);
    return i === undefined ? undefined : this.decoded(later, i);
  }

  /** The id of the item at a path relative to the root. */
  atPath(path: string): string | undefined {
    this.lookups();
    return this.byPath.get(path);
  }

  /**
   * Replaces every item by `source`'s (no id twice: the caller checked), each read when first asked for:
   * a one-shot search reads the items it shows. Whatever needs every item (values, the tree, a change)
   * reads them all first.
   */
  replaceLater(source: ItemSource): void {
    this.replaceAll([]);
    let at = source.at;
    if (!at) {
      const made = new Map<string, number>();
      source.ids.forEach((id, i) => made.set(id, i));
      at = made;
    }
    this.later = { source, at, decoded: [], since: Date.now(), lookups: false };
  }

  private decoded(later: LaterItems, i: number): BacklogItem {
    return (later.decoded[i] ??= later.source.item(i));
  }

  /** byKey and byPath, made from the columns while the items are still a source. */
  private lookups(): void {
    const later = this.later;
    if (!later || later.lookups) return;
    later.lookups = true;
    const { ids, paths } = later.source;
    for (let i = 0; i < ids.length; i++) {
      this.byKey.set(idKey(ids[i]), ids[i]);
      this.byPath.set(paths[i], ids[i]);
    }
  }

  /** Every item read, and the store as replaceAll makes it (the tree, the status counts). */
  private materialize(): void {
    const later = this.later;
    if (!later) return;
    const items = later.source.ids.map((_, i) => this.decoded(later, i));
    this.later = null;
    this.replaceAll(items, later.since);
  }

  /**
   * The id an id (any spelling: `TASK-42`, `task 0042`), resource URI or path refers to. URIs and paths
   * are taken as written and %-decoded (`mcp://backlog/a%20b.md`, `a b.md` and `a%20b.md` all name
   * `a b.md`), and `mcp://backlog/<id>` names the item with that id.
   */
  resolve(ref: string): string | undefined {
    const r = ref.trim();
    if (this.later ? this.later.at.has(r) : this.items.has(r)) return r;
    this.lookups();
    const byKey = this.byKey.get(idKey(r));
    if (byKey) return byKey;
    const raw = r.startsWith(RESOURCE_URI_PREFIX)
      ? r.slice(RESOURCE_URI_PREFIX.length)
      : r.replace(/^\.?\//, '');
    const decoded = pathOfUri(raw);
    return (
      this.byPath.get(raw) ??
      this.byPath.get(decoded) ??
      // An id %-encoded as a URI path segment is (`BACK-569%40archived`).
      (decoded !== raw || r.startsWith(RESOURCE_URI_PREFIX) ? this.byKey.get(idKey(decoded)) : undefined)
    );
  }

  /** The id that owns this id's key (duplicates are addressed by path), if any. */
  ownerOfKey(id: string): string | undefined {
    this.lookups();
    return this.byKey.get(idKey(id));
  }

  children(id: string): string[] {
    this.materialize();
    return this.kids.get(id) ?? [];
  }

  /** Parent, grandparent, ... (stops at a missing parent or a cycle). */
  ancestors(item: BacklogItem): string[] {
    const out: string[] = [];
    const seen = new Set([item.id]);
    let child: Pick<BacklogItem, 'parent_id' | 'state'> | undefined = item;
    while (child?.parent_id) {
      const id = this.parentOf(child) ?? child.parent_id;
      if (seen.has(id)) break;
      seen.add(id);
      out.push(id);
      child = this.byId(id);
    }
    return out;
  }

  /** `configured` statuses, then every other status an item has (in the spelling first seen). */
  statusVocabulary(configured: readonly string[]): string[] {
    const vocabulary = new Map(configured.map((s) => [statusKey(s), s]));
    // While the items are a source, counted from its column (a one-shot's status filter reads no item).
    if (this.later && this.statusCounts.size === 0)
      for (const status of this.later.source.statuses) this.countStatus({ status }, 1);
    for (const [key, n] of this.statusCounts)
      if (n.count > 0 && !vocabulary.has(key)) vocabulary.set(key, n.spelling);
    return [...vocabulary.values()];
  }

  /** When the item was last put in the index (ms since the epoch). */
  indexedTime(id: string): number | undefined {
    if (this.later) return this.later.at.has(id) ? this.later.since : undefined;
    return this.indexedAt.get(id);
  }

  /** Links between items (parent, children, references, mentioned ids), built on first use after a change. */
  linkGraph(): LinkGraph {
    this.materialize();
    this.graph ??= new LinkGraph(this.items.values(), (ref) => this.resolve(ref));
    return this.graph;
  }

  /** Replaces every item; `now`: when they were put (indexedTime). */
  replaceAll(items: BacklogItem[], now = Date.now()): void {
    this.later = null;
    this.graph = null;
    // One pass, no [key, value] pair per item per map (a restore's garbage at 50,000 items).
    this.items = new Map();
    this.byKey = new Map();
    this.byPath = new Map();
    for (const i of items) {
      this.items.set(i.id, i);
      this.byKey.set(idKey(i.id), i.id);
      this.byPath.set(i.path, i.id);
    }
    this.kids = new Map();
    this.linkedParent = new Map();
    this.indexedAt.clear();
    this.statusCounts.clear();
    for (const item of items) {
      this.linkToParent(item);
      this.countStatus(item, 1);
      this.indexedAt.set(item.id, now);
    }
  }

  /** Adds or replaces one item (its id is already settled: duplicates were renamed by the caller). */
  put(item: BacklogItem): BacklogItem | undefined {
    this.materialize();
    const before = this.items.get(item.id);
    if (before) this.unlink(before);
    this.items.set(item.id, item);
    this.countStatus(item, 1);
    this.indexedAt.set(item.id, Date.now());
    this.graph = null;
    const key = idKey(item.id);
    this.byKey.set(key, item.id);
    this.byPath.set(item.path, item.id);
    this.linkToParent(item);
    // Items written before their parent existed find it now.
    for (const other of this.items.values()) {
      if (other !== item && this.linkedParent.get(other.id) !== item.id && this.parentOf(other) === item.id)
        this.linkToParent(other);
    }
    return before;
  }

  /** Removes one item; returns its children (their lineage changed). */
  remove(id: string): string[] {
    this.materialize();
    const kids = this.kids.get(id) ?? [];
    const item = this.items.get(id);
    if (item) this.unlink(item);
    this.kids.delete(id);
    this.items.delete(id);
    this.indexedAt.delete(id);
    return kids;
  }

  /** Ids of the item and everything beneath it, breadth first (`includeSelf` false: beneath only). */
  descendants(id: string, includeSelf: boolean): string[] {
    this.materialize();
    const queue = includeSelf ? [id] : [...this.children(id)];
    const seen = new Set<string>();
    const out: string[] = [];
    while (queue.length) {
      const next = queue.shift()!;
      if (seen.has(next)) continue;
      seen.add(next);
      if (this.items.has(next)) out.push(next);
      queue.push(...this.children(next));
    }
    return out;
  }

  /**
   * Every item in order, with its key of each filter field as its search document gives it (the index's
   * `where`). While the items are a source (replaceLater) the state, status and date come from its
   * columns and an item is read only when another field is asked for: a one-shot `list` reads the items
   * it shows, not the index, nor the tree unless it filters by parent (BacklogService.list).
   */
  filterable(): FilterableItem[] {
    const later = this.later;
    return this.ids().map((id, i): FilterableItem => {
      let item: BacklogItem | undefined;
      const read = () => (item ??= this.byId(id)!);
      const keyOf = (field: keyof FilterKeys) => {
        if (later && field === 'state') return later.source.states[i] ?? 'none';
        if (later && field === 'path') return later.source.paths[i] || undefined;
        const it = read();
        return filterKey(field === 'lineage' ? { ...it, ancestors: this.ancestors(it) } : it, field);
      };
      return later
        ? {
            get item() {
              return read();
            },
            state: later.source.states[i],
            status: later.source.statuses[i],
            updatedMs: later.source.updated[i],
            keyOf,
          }
        : {
            item: read(),
            state: read().state ?? null,
            status: read().status ?? null,
            updatedMs: updatedMsOf(read()),
            keyOf,
          };
    });
  }

  /** The item as the search index takes it: text fields, filter keys, ancestors for `parent_id` filters. */
  toSearchDocument(item: BacklogItem): SearchDocument {
    const extra = [item.assignee, item.priority, ...item.references];
    for (const [k, v] of Object.entries(item.frontmatter)) {
      if (!FILTER_FIELDS.has(k) && v !== null && v !== undefined && typeof v !== 'object')
        extra.push(String(v));
    }
    // Its body made when read: indexing reads it, a restored index does not (a one-shot reads a few).
    return Object.assign(lazyObject<SearchDocument>(LAZY_DOCUMENT, item), {
      id: item.id,
      type: item.type,
      state: item.state,
      title: item.title,
      tags: item.tags,
      author: item.author,
      status: item.status,
      parent_id: item.parent_id,
      ancestors: this.ancestors(item),
      path: item.path,
      folder: item.folder,
      file_type: item.file_type,
      updated_ms: updatedMsOf(item),
      extra: extra.filter(Boolean).join('\n'),
      ...languageField(item.frontmatter),
    });
  }

  /**
   * The id of the item's parent: the copy in the item's own state when its parent id has several files
   * (an archived sub-task under the archived `BACK-76@archived`, not the completed BACK-76), else the owner.
   */
  parentOf(item: { parent_id: string | null; state: BacklogItem['state'] }): string | undefined {
    if (!item.parent_id) return undefined;
    const prefix = this.taskPrefix();
    const number = prefix ? /^task[-_\s]*(\d+(?:\.\d+)*)$/i.exec(item.parent_id.trim())?.[1] : undefined;
    for (const id of [item.parent_id, ...(number ? [`${prefix}-${number}`] : [])]) {
      // An active item's parent is the owner of the id (the livelier copy), never a renamed duplicate.
      this.lookups();
      const sameState =
        item.state && item.state !== 'active' ? this.byKey.get(idKey(`${id}@${item.state}`)) : undefined;
      const found = sameState ?? this.byKey.get(idKey(id));
      if (found) return found;
    }
    return undefined;
  }

  private linkToParent(item: BacklogItem): void {
    this.unlinkFromParent(item.id);
    const parent = this.parentOf(item);
    if (!parent || parent === item.id) return;
    this.linkedParent.set(item.id, parent);
    this.kids.set(parent, [...(this.kids.get(parent) ?? []), item.id]);
  }

  private countStatus(item: Pick<BacklogItem, 'status'>, delta: number): void {
    if (!item.status) return;
    const key = statusKey(item.status);
    const entry = this.statusCounts.get(key) ?? { count: 0, spelling: item.status };
    entry.count += delta;
    this.statusCounts.set(key, entry);
  }

  /** Takes an item out of the lookups, the tree and the status counts (not out of `items`). */
  private unlink(item: BacklogItem): void {
    this.graph = null;
    this.countStatus(item, -1);
    if (this.byKey.get(idKey(item.id)) === item.id) this.byKey.delete(idKey(item.id));
    if (this.byPath.get(item.path) === item.id) this.byPath.delete(item.path);
    this.unlinkFromParent(item.id);
  }

  /** Takes the item out of the children of the parent it was linked under. */
  private unlinkFromParent(id: string): void {
    const parent = this.linkedParent.get(id);
    if (parent === undefined) return;
    this.linkedParent.delete(id);
    this.kids.set(
      parent,
      (this.kids.get(parent) ?? []).filter((c) => c !== id),
    );
  }
}
