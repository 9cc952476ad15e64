/**
 * Which item a query names, when it names one: the item then comes first, whatever its score. People
 * write ids many ways, and some "ids" are not ids at all but numbers in titles and file names:
 *
 *   BACK-72, back 72, back-072        the id, any spelling (idKey)
 *   72, 273.05                        a bare number: the task with that number (Backlog.md's CLI reads
 *                                     `task view 72` the same way); the most common prefix wins
 *   task 100.6, TASK-4.9, task-273.03 a kind word and a number: the number, under the backlog's prefix
 *   milestone m-7, doc 2, draft 7     a kind word and an id, or a number under that kind's prefix
 *   ADR 0116, RFC-12, PROMPT 0002     a PREFIX NNNN at the start of a title, or a file NNNN-x.md in a
 *                                     folder named like the prefix (`resources/adr/0116-crdt.md`)
 *
 * A real id always wins over a title or file-name alias with the same key.
 */
import { idKey, normalizeId } from '../storage/ids.js';
import { pack, unpack } from './packed.js';
import { fromBytes } from './typed-arrays.js';

/** Words that name a kind of item rather than a prefix of its own (`task 72`, `milestone m-7`). */
const KIND_WORDS: Record<string, string | null> = {
  task: null,
  tasks: null,
  issue: null,
  ticket: null,
  item: null,
  story: null,
  epic: 'epic',
  doc: 'doc',
  document: 'doc',
  decision: 'decision',
  milestone: 'm',
  draft: 'draft',
};

const ID = /^([A-Za-z]+)[-_\s]*(\d+(?:\.\d+)*)$/;
const NUMBER = /^\d+(?:\.\d+)*$/;
/**
 * `ADR 0116: ...`, `RFC-12 ...`: a prefix in capitals and a number opening a title (`Windows 10 support`
 * is not an id: its prefix is a word).
 */
// Made on first use, as the other Unicode property escapes (search/tokenizer.ts: compiled when first evaluated).
let titleId: RegExp | undefined;

/** `273.05` -> `273.5`: the number part of an id key. */
function numberKey(numbers: string): string {
  return numbers
    .split('.')
    .map((n) => String(Number.parseInt(n, 10)))
    .join('.');
}

export interface RoutableDocument {
  id: string;
  title?: string;
  path?: string;
}

/**
 * An IdRouter's maps as sorted columns (the persisted index keeps them: `saveRoutes`): a one-shot looks a
 * key up by binary search instead of routing every document at its start (issue #23). Ids are positions
 * in the documents' id column (binary: no string per id to parse).
 */
interface SavedRoutes {
  /** idKey of each real id, ascending, and the position of its id. */
  idKeys: string[];
  idAt: Uint32Array;
  /** Title and file-name keys, ascending, and the position of the id each names. */
  aliasKeys: string[];
  aliasAt: Uint32Array;
  /** Number keys, ascending; number `i`'s ids are `numberAt[numberEnds[i - 1]..numberEnds[i]]`, in the order they were added. */
  numbers: string[];
  numberEnds: Uint32Array;
  numberAt: Uint32Array;
  prefixes: [string, number][];
}

/** Where `key` is in `keys` (ascending), or -1. */
function find(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] === key) return mid;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export class IdRouter {
  /** idKey of each real id -> the id. */
  private readonly ids = new Map<string, string>();
  /** Keys from titles and file names -> the id (used only when no real id has the key). */
  private readonly aliases = new Map<string, string>();
  private readonly aliasesOf = new Map<string, string[]>();
  /** Number -> ids with that number, and how many ids each prefix has. */
  private readonly byNumber = new Map<string, Set<string>>();
  private readonly prefixCounts = new Map<string, number>();
  /** Routes restored from the persisted index (restoreRoutes), read in place until the first change. */
  private saved: (SavedRoutes & { column: readonly string[]; prefixCount: Map<string, number> }) | null =
    null;

  /**
   * The routes of `docs` added in this order, as bytes for the persisted index (restoreRoutes reads
   * them back with the documents' ids in the same order): the maps a restore that adds each in turn makes.
   */
  static saveRoutes(docs: readonly RoutableDocument[]): Uint8Array {
    const router = new IdRouter();
    const at = new Map<string, number>();
    docs.forEach((doc, i) => {
      if (!at.has(doc.id)) at.set(doc.id, i);
      router.add(doc);
    });
    const sorted = <T>(map: Map<string, T>) => [...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const positions = (ids: Iterable<string>) => Uint32Array.from(ids, (id) => at.get(id)!);
    const ids = sorted(router.ids);
    const aliases = sorted(router.aliases);
    const numbers = sorted(router.byNumber);
    let end = 0;
    return pack({
      idKeys: ids.map(([k]) => k),
      idAt: positions(ids.map(([, id]) => id)),
      aliasKeys: aliases.map(([k]) => k),
      aliasAt: positions(aliases.map(([, id]) => id)),
      numbers: numbers.map(([k]) => k),
      numberEnds: Uint32Array.from(numbers, ([, set]) => (end += set.size)),
      numberAt: positions(numbers.flatMap(([, set]) => [...set])),
      prefixes: [...router.prefixCounts.entries()],
    } satisfies SavedRoutes);
  }

  /**
   * Replaces every route by saveRoutes' bytes (`ids`: the documents' ids, in the order they were saved
   * in), looked up where they are until the first change, which makes the maps from them. Throws on bytes
   * that are not (the caller builds from the documents then).
   */
  restoreRoutes(bytes: Uint8Array, ids: readonly string[]): void {
    const saved = unpack(bytes) as Record<keyof SavedRoutes, unknown> | null;
    const strings = (list: unknown): list is string[] =>
      Array.isArray(list) && list.every((s) => typeof s === 'string');
    const ascending = (list: string[]) => list.every((k, i) => i === 0 || list[i - 1] < k);
    const positions = (leaf: unknown, n: number) =>
      leaf instanceof Uint8Array && leaf.byteLength === 4 * n ? fromBytes(leaf, Uint32Array) : undefined;
    if (!saved || !strings(saved.idKeys) || !strings(saved.aliasKeys) || !strings(saved.numbers))
      throw new Error("the persisted index's id routes are malformed");
    const idAt = positions(saved.idAt, saved.idKeys.length);
    const aliasAt = positions(saved.aliasAt, saved.aliasKeys.length);
    const numberEnds = positions(saved.numberEnds, saved.numbers.length);
    const last = numberEnds && numberEnds.length > 0 ? numberEnds[numberEnds.length - 1] : 0;
    const numberAt = positions(saved.numberAt, last);
    const inColumn = (at: Uint32Array) => at.every((i) => i < ids.length);
    if (
      !idAt ||
      !aliasAt ||
      !numberEnds ||
      !numberAt ||
      !numberEnds.every((e, i) => e > (i === 0 ? 0 : numberEnds[i - 1])) ||
      !inColumn(idAt) ||
      !inColumn(aliasAt) ||
      !inColumn(numberAt) ||
      !Array.isArray(saved.prefixes) ||
      !saved.prefixes.every(
        (p) => Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'number',
      ) ||
      !ascending(saved.idKeys) ||
      !ascending(saved.aliasKeys) ||
      !ascending(saved.numbers)
    )
      throw new Error("the persisted index's id routes are malformed");
    this.clear();
    this.saved = {
      idKeys: saved.idKeys,
      idAt,
      aliasKeys: saved.aliasKeys,
      aliasAt,
      numbers: saved.numbers,
      numberEnds,
      numberAt,
      prefixes: saved.prefixes as [string, number][],
      column: ids,
      prefixCount: new Map(saved.prefixes as [string, number][]),
    };
  }

  /** The ids of number `i` of the saved routes. */
  private savedNumber(i: number): string[] {
    const saved = this.saved!;
    const from = i === 0 ? 0 : saved.numberEnds[i - 1];
    return Array.from(saved.numberAt.subarray(from, saved.numberEnds[i]), (at) => saved.column[at]);
  }

  /** The saved routes made into the maps (before a change). */
  private thaw(): void {
    const saved = this.saved;
    if (!saved) return;
    const { column } = saved;
    saved.idKeys.forEach((k, i) => this.ids.set(k, column[saved.idAt[i]]));
    saved.aliasKeys.forEach((k, i) => {
      const id = column[saved.aliasAt[i]];
      this.aliases.set(k, id);
      const of = this.aliasesOf.get(id);
      if (of) of.push(k);
      else this.aliasesOf.set(id, [k]);
    });
    saved.numbers.forEach((k, i) => this.byNumber.set(k, new Set(this.savedNumber(i))));
    for (const [prefix, count] of saved.prefixes) this.prefixCounts.set(prefix, count);
    this.saved = null;
  }

  add(doc: RoutableDocument): void {
    this.thaw();
    // One idKey per document (a restore routes every one: 50,000 at a large start).
    const own = idKey(doc.id);
    if (this.ids.has(own)) this.remove(doc.id);
    this.ids.set(own, doc.id);
    const m = ID.exec(doc.id);
    if (m) {
      const prefix = m[1].toLowerCase();
      this.prefixCounts.set(prefix, (this.prefixCounts.get(prefix) ?? 0) + 1);
      const key = numberKey(m[2]);
      const set = this.byNumber.get(key) ?? new Set<string>();
      set.add(doc.id);
      this.byNumber.set(key, set);
    }
    const aliases = aliasKeys(doc, own).filter((k) => !this.aliases.has(k));
    for (const k of aliases) this.aliases.set(k, doc.id);
    if (aliases.length) this.aliasesOf.set(doc.id, aliases);
  }

  remove(id: string): void {
    this.thaw();
    const key = idKey(id);
    if (this.ids.get(key) !== id) return;
    this.ids.delete(key);
    const m = ID.exec(id);
    if (m) {
      const prefix = m[1].toLowerCase();
      this.prefixCounts.set(prefix, (this.prefixCounts.get(prefix) ?? 1) - 1);
      this.byNumber.get(numberKey(m[2]))?.delete(id);
    }
    for (const k of this.aliasesOf.get(id) ?? []) if (this.aliases.get(k) === id) this.aliases.delete(k);
    this.aliasesOf.delete(id);
  }

  clear(): void {
    this.saved = null;
    for (const map of [this.ids, this.aliases, this.aliasesOf, this.byNumber, this.prefixCounts]) map.clear();
  }

  /** The id `query` names, or undefined (see the module comment for what counts). */
  resolve(query: string): string | undefined {
    const q = query.trim().replace(/^#/, '');
    if (!q || q.length > 64) return undefined;
    const direct = this.lookup(q);
    if (direct) return direct;
    if (NUMBER.test(q)) return this.byNumberOf(numberKey(q), null);
    const kind = /^([A-Za-z]+)s?\b[\s:#-]*(.+)$/.exec(q);
    if (kind && Object.hasOwn(KIND_WORDS, kind[1].toLowerCase())) {
      const rest = kind[2].trim();
      const prefix = KIND_WORDS[kind[1].toLowerCase()];
      if (NUMBER.test(rest)) return this.byNumberOf(numberKey(rest), prefix);
      return this.lookup(rest);
    }
    return undefined;
  }

  private lookup(text: string): string | undefined {
    const key = idKey(text);
    const saved = this.saved;
    if (saved) {
      const i = find(saved.idKeys, key);
      if (i >= 0) return saved.column[saved.idAt[i]];
      const j = find(saved.aliasKeys, key);
      return j >= 0 ? saved.column[saved.aliasAt[j]] : undefined;
    }
    return this.ids.get(key) ?? this.aliases.get(key);
  }

  private numbered(number: string): Iterable<string> {
    const saved = this.saved;
    if (!saved) return this.byNumber.get(number) ?? [];
    const i = find(saved.numbers, number);
    return i >= 0 ? this.savedNumber(i) : [];
  }

  private prefixCount(prefix: string): number {
    const saved = this.saved;
    if (!saved) return this.prefixCounts.get(prefix) ?? 0;
    return saved.prefixCount.get(prefix) ?? 0;
  }

  /** The id with this number: under `prefix` when given and present, else under the most common prefix. */
  private byNumberOf(number: string, prefix: string | null): string | undefined {
    if (prefix) {
      const own = this.lookup(normalizeId(prefix, number));
      if (own) return own;
    }
    let best: string | undefined;
    let bestCount = -1;
    for (const id of this.numbered(number)) {
      const count = this.prefixCount(ID.exec(id)![1].toLowerCase());
      if (count > bestCount) [best, bestCount] = [id, count];
    }
    return best;
  }
}

/** Keys a document answers to besides its id: `ADR 0116` opening its title, `adr/0116-x.md` as its file. */
function aliasKeys(doc: RoutableDocument, own: string): string[] {
  const keys: string[] = [];
  const title = doc.title
    ? (titleId ??= /^([A-Z]{2,})[-\s]?(\d+(?:\.\d+)*)(?![\p{L}\p{N}])/u).exec(doc.title.trim())
    : null;
  if (title) keys.push(normalizeId(title[1], title[2]));
  const file = doc.path ? /(?:^|\/)([A-Za-z]{2,})\/(\d+(?:\.\d+)*)[-_ .][^/]*$/.exec(doc.path) : null;
  if (file) keys.push(normalizeId(file[1], file[2]));
  return [...new Set(keys)].filter((k) => k !== own);
}
