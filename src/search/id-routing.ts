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

export class IdRouter {
  /** idKey of each real id -> the id. */
  private readonly ids = new Map<string, string>();
  /** Keys from titles and file names -> the id (used only when no real id has the key). */
  private readonly aliases = new Map<string, string>();
  private readonly aliasesOf = new Map<string, string[]>();
  /** Number -> ids with that number, and how many ids each prefix has. */
  private readonly byNumber = new Map<string, Set<string>>();
  private readonly prefixCounts = new Map<string, number>();

  add(doc: RoutableDocument): void {
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
    return this.ids.get(key) ?? this.aliases.get(key);
  }

  /** The id with this number: under `prefix` when given and present, else under the most common prefix. */
  private byNumberOf(number: string, prefix: string | null): string | undefined {
    if (prefix) {
      const own = this.lookup(normalizeId(prefix, number));
      if (own) return own;
    }
    let best: string | undefined;
    let bestCount = -1;
    for (const id of this.byNumber.get(number) ?? []) {
      const count = this.prefixCounts.get(ID.exec(id)![1].toLowerCase()) ?? 0;
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
