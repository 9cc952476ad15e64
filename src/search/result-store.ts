/**
 * What a result shows, kept at index time: each document's result fields, its title's terms (for the
 * hybrid multipliers) and its body prepared for snippets (plain text with its word runs as term ids).
 * Building a result is then lookups and integer comparisons, never re-reading or re-tokenizing a body.
 *
 * Preparing a body costs about as much as indexing it, so it is done once per document, lazily, and
 * in the background after a build (a batch per tick): a search never waits for all of them. At most
 * MAX_PREPARED bodies are kept prepared (the least recently used is let go), so a very large index does
 * not hold its text twice; past that, a result whose body was let go prepares it again.
 */
import { Background } from './background.js';
import type { DocFacts } from './hybrid.js';
import { SavedSnippets, encodeSnippets, type SavableBody } from './saved-snippets.js';
import { SnippetText, TermIds, plainBody, snippetOf, type QueryBits, type Snippet } from './snippet.js';
import type { Language, TextAnalyzer } from './tokenizer.js';
import type { SearchDocument, TextField } from './types.js';
import type { ItemType, TaskState } from '../storage/types.js';
import { isLazy, lazyObject, lazyPrototype } from '../storage/lazy.js';

/** A stored document whose body is read from its search document when first needed. */
const LAZY_STORED = lazyPrototype('body', (doc: SearchDocument) => doc.body);

/** A stored document's search document, or what makes it (putLater). */
const SOURCE_DOC = Symbol('search document');
type Later = Stored & { [SOURCE_DOC]: SearchDocument | (() => SearchDocument) };

function sourceOf(entry: Later): SearchDocument {
  const source = entry[SOURCE_DOC];
  if (typeof source !== 'function') return source;
  const doc = source();
  entry[SOURCE_DOC] = doc;
  return doc;
}

function settle(entry: object, key: string, value: unknown): void {
  Object.defineProperty(entry, key, { value, writable: true, configurable: true, enumerable: true });
}

/**
 * A stored document made from its search document when one of its fields is first read (putLater): its
 * fields as `put` makes them, its body (like LAZY_STORED's) read from the search document when needed.
 */
const LATER_STORED: object = Object.create(Object.prototype, {
  ...Object.fromEntries(
    (['fields', 'tags', 'author'] as const).map((key) => [
      key,
      {
        get(this: Later) {
          const made = storedFields(sourceOf(this));
          for (const k of ['fields', 'tags', 'author'] as const) settle(this, k, made[k]);
          return made[key];
        },
        set(this: Later, value: unknown) {
          settle(this, key, value);
        },
      },
    ]),
  ),
  body: {
    get(this: Later) {
      const body = sourceOf(this).body;
      settle(this, 'body', body);
      return body;
    },
    set(this: Later, value: unknown) {
      settle(this, 'body', value);
    },
  },
}) as object;

/** A stored document made by `make` when first read (LATER_STORED). */
function laterEntry(make: () => SearchDocument): Stored {
  const entry = Object.create(LATER_STORED) as Later;
  entry[SOURCE_DOC] = make;
  return entry;
}

/** What `put` keeps of a document besides its body. */
function storedFields(doc: SearchDocument): Pick<Stored, 'fields' | 'tags' | 'author'> {
  return {
    fields: {
      id: doc.id,
      type: doc.type ?? 'resource',
      title: doc.title,
      status: doc.status ?? null,
      state: doc.state ?? null,
      parent_id: doc.parent_id ?? null,
      path: doc.path ?? doc.id,
      updatedMs: doc.updated_ms ?? 0,
    },
    tags: (doc.tags ?? []).join(', '),
    author: doc.author ?? '',
  };
}

/** The fields of a result, as the document was indexed. */
export interface ResultFields {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  state: TaskState | null;
  parent_id: string | null;
  path: string;
  updatedMs: number;
}

interface Stored {
  fields: ResultFields;
  /** The searchable body (markdown); made into `snippet` on first use. */
  body: string;
  tags: string;
  author: string;
  titleTerms?: string[];
  facts?: DocFacts;
  snippet?: SnippetText;
}

/** Bodies kept prepared for snippets at most (about 5 KB each for a 3 KB body). */
export const MAX_PREPARED = 20_000;
/** Documents whose prepared bodies the persisted index keeps at most (and MAX_SAVED_TEXT_BYTES of text). */
export const MAX_SAVED = 5_000;
/** A background slice of `warm` goes past 50 bodies while it has run less than this. */
const WARM_SLICE_MS = 8;

export class ResultStore {
  private docs = new Map<string, Stored>();
  /** Documents put by position (putAllLater), each entry made when first asked for. */
  private later: { at: ReadonlyMap<string, number>; doc: (i: number) => SearchDocument } | null = null;
  /** The prepared documents, least recently used first. */
  private readonly prepared = new Map<string, Stored>();
  private readonly termIds = new TermIds();
  private readonly warming = new Background();
  /** Prepared bodies from a persisted index (restorePrepared), decoded when a body is first prepared. */
  private saved: SavedSnippets | null = null;
  /** Counts `clear` and `unprepare`: prepared bodies made before a change are not saved after it. */
  private generation = 0;

  /** Prepare bodies in the background (`warm`); off, each is prepared when a result first needs it. */
  background = true;
  /** Prepare every body before a save even with background work off (`backlog-search index`). */
  saveEvery = false;

  constructor(
    private readonly analyzer: TextAnalyzer,
    /** The language a document was indexed in: its snippet's terms must be the index's. */
    private readonly languageOf: (id: string) => Language | undefined = () => undefined,
    /** Whether the index holds a term: only such query terms get a snippet id (see TermIds.withQuery). */
    private readonly indexed: (term: string) => boolean = () => true,
  ) {}

  put(doc: SearchDocument): void {
    this.materialize();
    const lazy = isLazy(doc, 'body');
    // The body as the document gives it, read when first needed (a restored one-shot reads only its results').
    const entry: Stored = Object.assign(
      lazy ? lazyObject<Stored>(LAZY_STORED, doc) : ({} as Stored),
      storedFields(doc),
      lazy ? {} : { body: doc.body },
    );
    this.docs.set(doc.id, entry);
    this.saved?.forget(doc.id);
  }

  /**
   * `put(make())`, with `make` called when the document's fields or body are first read: a restored
   * one-shot makes the search documents of the results it shows only (issue #23).
   */
  putLater(id: string, make: () => SearchDocument): void {
    this.materialize();
    this.docs.set(id, laterEntry(make));
    this.saved?.forget(id);
  }

  /**
   * `putLater` of every document of a restore, by position (`at`: each id's, `doc(i)`: its document), the
   * entry itself made when the document is first asked for: a restored one-shot makes the entries of
   * the results it shows only (50,000 entries were a twentieth of a large start). Whatever changes the
   * store or reads every entry makes them all first (materialize).
   */
  putAllLater(at: ReadonlyMap<string, number>, doc: (i: number) => SearchDocument): void {
    this.materialize();
    this.later = { at, doc };
  }

  /** The entry of `id`, made now if it was put by position (putAllLater). */
  private entry(id: string): Stored | undefined {
    const made = this.docs.get(id);
    const later = this.later;
    if (made || !later) return made;
    const i = later.at.get(id);
    if (i === undefined) return undefined;
    const entry = laterEntry(() => later.doc(i));
    this.docs.set(id, entry);
    return entry;
  }

  /** Every entry put by position made, in their order (the store as putLater of each would have it). */
  private materialize(): void {
    const later = this.later;
    if (!later) return;
    this.later = null;
    const made = this.docs;
    this.docs = new Map();
    for (const [id, i] of later.at) this.docs.set(id, made.get(id) ?? laterEntry(() => later.doc(i)));
    for (const [id, entry] of made) if (!this.docs.has(id)) this.docs.set(id, entry);
  }

  /**
   * How the document writes the words indexed as `term` (lower-cased, at most 20 spellings): a "did
   * you mean" reads as the backlog spells it. Words inside a compound or an id are not counted.
   */
  spellingsOf(id: string, term: string): string[] {
    const doc = this.entry(id);
    if (!doc) return [];
    const language = this.languageOf(id);
    const found = new Set<string>();
    for (const text of [doc.fields.title, doc.tags, doc.body]) {
      for (const run of this.analyzer.runs(text, language)) {
        if (run.span === 1 && run.terms[0] === term) found.add(text.slice(run.start, run.end).toLowerCase());
        if (found.size >= 20) return [...found];
      }
    }
    return [...found];
  }

  remove(id: string): void {
    this.materialize();
    this.docs.delete(id);
    this.prepared.delete(id);
  }

  clear(): void {
    this.later = null;
    this.docs.clear();
    this.prepared.clear();
    this.saved = null;
    this.generation++;
  }

  /** Drops every prepared body (their terms changed) and prepares them again in the background. */
  unprepare(): void {
    for (const doc of this.prepared.values()) doc.snippet = undefined;
    this.prepared.clear();
    this.saved = null;
    this.generation++;
    this.warm();
  }

  /**
   * The prepared bodies as bytes for the persisted index (saved-snippets.ts), every body prepared first
   * (a batch per tick); undefined for a backlog over MAX_SAVED documents or MAX_SAVED_TEXT_BYTES of text,
   * or when the bodies changed meanwhile (the next save has them). With background work off (a one-shot
   * command that had to build) only the bodies already prepared, marked partial: preparing the rest cost
   * its first build about a fifth more CPU, and the next long-lived open writes them (`partial`).
   */
  async savePrepared(): Promise<Uint8Array | undefined> {
    this.materialize();
    const all = [...this.docs.values()];
    if (all.length > MAX_SAVED) return undefined;
    const entries = this.background || this.saveEvery ? all : all.filter((doc) => doc.snippet);
    const generation = this.generation;
    const current = (doc: Stored) => this.docs.get(doc.fields.id) === doc;
    for (let i = 0; i < entries.length; i += 50) {
      for (const doc of entries.slice(i, i + 50)) if (current(doc)) this.prepare(doc);
      await new Promise((resolve) => setImmediate(resolve));
      if (this.generation !== generation) return undefined;
    }
    const bodies: SavableBody[] = [];
    for (const doc of entries) {
      if (!current(doc)) continue;
      const id = doc.fields.id;
      bodies.push({ id, body: doc.body, language: this.languageOf(id) ?? '', snippet: this.prepare(doc) });
    }
    return encodeSnippets(bodies, this.termIds, { partial: entries.length < all.length });
  }

  /** Whether the persisted index this store was restored from kept only some of the bodies (savePrepared). */
  get partial(): boolean {
    return this.saved?.partial === true;
  }

  /**
   * Takes savePrepared()'s bytes of a persisted index whose documents were just put (anything else is
   * ignored). Its terms get their ids now, before a query gives its own terms theirs (see mapTerms).
   */
  restorePrepared(bytes: unknown): void {
    this.saved = SavedSnippets.decode(bytes) ?? null;
    this.saved?.mapTerms(this.termIds);
  }

  has(id: string): boolean {
    return this.docs.has(id) || this.later?.at.has(id) === true;
  }

  fields(id: string): ResultFields {
    return this.stored(id).fields;
  }

  /** The title's distinct query-side terms (the hybrid title multiplier compares them with the query's). */
  titleTerms(id: string): string[] {
    const doc = this.stored(id);
    doc.titleTerms ??= this.analyzer.queryTerms(doc.fields.title);
    return doc.titleTerms;
  }

  /**
   * What the hybrid multipliers read of a document, made once per version of it (a fused list holds up
   * to 200 documents a query: making their id keys again each time was a third of fusing).
   */
  facts(id: string, idKeyOf: (id: string) => string): DocFacts {
    const doc = this.stored(id);
    doc.facts ??= {
      titleTerms: this.titleTerms(id),
      idKey: idKeyOf(doc.fields.id),
      type: doc.fields.type,
      updatedMs: doc.fields.updatedMs,
      archived: doc.fields.state === 'archived',
    };
    return doc.facts;
  }

  /** Runs `fn` (synchronously) with the query's terms marked for `snippet` (see TermIds.withQuery). */
  withQuery<T>(queryTerms: Iterable<string>, fn: (bits: QueryBits) => T): T {
    return this.termIds.withQuery([...queryTerms].filter(this.indexed), fn);
  }

  snippet(id: string, bits: QueryBits, queryTerms: ReadonlySet<string>, matchedFields: TextField[]): Snippet {
    const doc = this.stored(id);
    return snippetOf(
      this.prepare(doc),
      bits,
      { title: doc.fields.title, tags: doc.tags, author: doc.author },
      this.analyzer,
      queryTerms,
      matchedFields,
    );
  }

  /**
   * Prepares every body not yet prepared, a batch per tick, in the background (about as long as the
   * build took): the first snippet of a long body would otherwise cost a query several ms.
   */
  warm(): void {
    if (this.warming.running || !this.background) return;
    this.materialize();
    const pending = [...this.docs.values()].slice(0, MAX_PREPARED).reverse();
    this.warming.start(() => {
      // 50 bodies, and more while the slice is under WARM_SLICE_MS: a body the persisted index kept
      // prepared costs a twentieth of one prepared from its markdown, and a query that meets a body not
      // yet prepared prepares it itself.
      const until = performance.now() + WARM_SLICE_MS;
      // The saved bodies are checked first, all in one loop (see SavedSnippets.checkUntil).
      if (this.saved && !this.saved.checkUntil(until)) return false;
      for (let n = 0; pending.length > 0 && (n < 50 || performance.now() < until); n++)
        this.prepare(pending.pop()!);
      return pending.length === 0;
    });
  }

  /** Resolves when the bodies `warm` started on are prepared (benchmarks wait for it; searches never do). */
  whenWarm(): Promise<void> {
    return this.warming.done();
  }

  private prepare(doc: Stored): SnippetText {
    const id = doc.fields.id;
    if (doc.snippet) {
      // Most recently used goes last.
      this.prepared.delete(id);
      this.prepared.set(id, doc);
      return doc.snippet;
    }
    doc.snippet = this.fromSaved(doc) ?? this.prepareBody(doc);
    this.prepared.set(id, doc);
    if (this.prepared.size > MAX_PREPARED) {
      const [oldest, evicted] = this.prepared.entries().next().value!;
      this.prepared.delete(oldest);
      evicted.snippet = undefined;
    }
    return doc.snippet;
  }

  private prepareBody(doc: Stored): SnippetText {
    const { text, lead } = plainBody(doc.body);
    return SnippetText.prepare(text, this.analyzer, this.termIds, this.languageOf(doc.fields.id), lead);
  }

  /**
   * The body as the persisted index kept it prepared, if it did for this markdown and language. A body
   * not read yet is not read to compare its length (decoding it was a third of taking a saved body): it
   * is the one restored with the table, or put again since (`put` forgets it).
   */
  private fromSaved(doc: Stored): SnippetText | undefined {
    if (!this.saved) return undefined;
    const id = doc.fields.id;
    const length = isLazy(doc, 'body') ? undefined : doc.body.length;
    return this.saved.take(id, length, this.languageOf(id) ?? '', this.termIds);
  }

  private stored(id: string): Stored {
    const doc = this.entry(id);
    if (!doc) throw new Error(`result store: no document ${id}`);
    return doc;
  }
}
