/**
 * Orama components that replace its full-text scoring while keeping Orama as the index: documents,
 * the radix tree of terms, the enum/number indexes behind `where` filters, and serialization.
 *
 * What Orama 3.1.18 does by default, and why each piece here differs (measured in docs/search.md):
 * - its tokenizer drops Cyrillic and deduplicates tokens -> `createOramaTokenizer` over TextAnalyzer;
 * - its index stores `tf / length` with tf always 1 -> `FieldIndex` keeps raw term frequencies;
 * - its search expands every term as a prefix and sums per-field BM25 -> exact terms, BM25F.
 *
 * Each field's radix tree holds that field's vocabulary (a term goes in when its posting is created
 * and out when the posting empties), for prefix and typo expansion; which documents contain a term
 * lives in the FieldIndex postings. Keeping every document id in the tree as well doubled build time.
 */
import {
  documentsStore as oramaDocuments,
  index as oramaIndex,
  internalDocumentIDStore,
} from '@orama/orama/components';
import type { AnyOrama, IDocumentsStore, IIndex, Tokenizer } from '@orama/orama';
import { flat, radix } from '@orama/orama/trees';
import { BacklogError } from '../errors.js';
import { FieldIndex, type SavedFieldIndex } from './field-index.js';
import { LengthNorms, ScoreScratch, scoreBm25f, type OutsideStats, type QueryTermGroup } from './score.js';
import type { Keep } from './top-k.js';
import type { Language, TextAnalyzer } from './tokenizer.js';
import { pack, unpack, Unread } from './packed.js';
import { fromBytes } from './typed-arrays.js';

const defaultIndex = oramaIndex.createIndex();

/**
 * Layout of the saved BM25F fields (FieldIndex.save). 1 (unmarked): postings with word positions as
 * nested arrays; 2: term dictionary and forward index as binary, postings rebuilt on load; 3: the postings
 * saved too, read where they lie (issue #23: rebuilding them was a fifth of a 10,000-document restore); 4:
 * the term ids in the order of their strings, looked up by binary search (no Map made at restore).
 */
export const FIELD_INDEX_FORMAT = 4;
type OramaIndexStore = ReturnType<typeof oramaIndex.create>;

/**
 * A text field's radix tree as the cache holds it (its `toJSON()`, packed), decoded on first use:
 * decoding the trees was most of a restore's time, and a query whose words are all in the index walks
 * only the small tags and author trees (prefix and typo expansion walk the others).
 */
class SavedTree {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * The radix tree of a text field, decoded first if it is still as the cache held it. A tree that does
 * not decode is made again from the field's terms (the same words; a cache is signed, so this is a bug's
 * fallback, never a trusted input).
 */
export function fieldTree(store: OramaIndexStore, prop: string): radix.RadixTree {
  const entry = store.indexes[prop] as { node: unknown };
  if (entry.node instanceof SavedTree) {
    let tree: radix.RadixTree;
    try {
      tree = radix.RadixTree.fromJSON(unpack(entry.node.bytes) as never);
    } catch {
      const s = (store as Bm25fIndexStore).bm25f;
      tree = new radix.RadixTree();
      for (const term of s.fields[s.fieldNames.indexOf(prop)].vocabulary()) tree.insert(term, 0);
    }
    entry.node = tree;
  }
  return entry.node as radix.RadixTree;
}

/**
 * Parts of a restored index kept as the cache's bytes until first read (issue #23: at 50,000 documents the
 * stored documents were 15 MB of JSON and the filters' trees 4.5 MB, a set per document and key, made at
 * every start while a one-shot search reads neither): `obj[key]` is an accessor that decodes `bytes` on
 * first read (or takes a value set first), a plain property from then on. `pendingBytes` tells what is
 * still undecoded, so saving writes those bytes as they came.
 */
const pending = new WeakMap<object, Uint8Array>();

function lazyPart<T>(obj: object, key: string, bytes: Uint8Array, decode: (bytes: Uint8Array) => T): void {
  const settle = (value: T) => {
    pending.delete(obj);
    Object.defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: true });
  };
  pending.set(obj, bytes);
  Object.defineProperty(obj, key, {
    configurable: true,
    enumerable: true,
    get() {
      const value = decode(bytes);
      settle(value);
      return value;
    },
    set: settle,
  });
}

function pendingBytes(obj: object): Uint8Array | undefined {
  return pending.get(obj);
}

/**
 * A restored part that does not decode: the file is signed, so this is a bug. The index is then built from
 * the restore's documents when it still has them (OramaSearchService.fallBack), else reported as a bug.
 */
function damaged(part: string): BacklogError {
  return new BacklogError(
    'INTERNAL',
    `the persisted index's ${part} did not decode`,
    'delete the .cache folder of the backlog: the next start reads the files again',
    { damaged: part },
  );
}

/** Whether `err` is a restored part that did not decode (damaged). */
export function isDamagedPart(err: unknown): boolean {
  return err instanceof BacklogError && typeof err.details.damaged === 'string';
}

type DocumentsStore = ReturnType<typeof oramaDocuments.create> & { ids?: Int32Array };

/**
 * Orama's documents store, saved as bytes of its own (packed) with the internal ids it holds, and
 * restored undecoded: the documents are decoded when first read (a filter's fallback, `get`, sorting
 * by date, removal), the ids answer `storedInternalIds` until then.
 */
export function createDocumentsStore(): IDocumentsStore<DocumentsStore> {
  const base = oramaDocuments.createDocumentsStore();
  return {
    ...base,
    save(store: DocumentsStore) {
      return {
        docs: pendingBytes(store) ?? pack(store.docs),
        count: store.count,
        ids: Int32Array.from(storedInternalIds(store)),
      } as never;
    },
    load(shared: never, raw: unknown) {
      const { docs, count, ids } = (raw ?? {}) as { docs?: unknown; count?: unknown; ids?: unknown };
      if (!(docs instanceof Uint8Array) || !(ids instanceof Uint8Array))
        throw new Error("index: the stored documents are not in this version's layout");
      const store = { sharedInternalDocumentStore: shared, count, ids: fromBytes(ids, Int32Array) };
      if (!Number.isSafeInteger(count) || store.ids.length !== count)
        throw new Error('index: the stored documents do not match their count');
      lazyPart(store, 'docs', docs, (bytes) => {
        let value: unknown;
        try {
          value = unpack(bytes);
        } catch {
          throw damaged('stored documents');
        }
        if (value === null || typeof value !== 'object' || Array.isArray(value))
          throw damaged('stored documents');
        return value as Record<string, unknown>;
      });
      return store as unknown as DocumentsStore;
    },
  } as IDocumentsStore<DocumentsStore>;
}

/** Whether the stored documents are decoded (always, unless restored and read by nothing since). */
export function documentsDecoded(store: unknown): boolean {
  return !pendingBytes(store as object);
}

/** The internal ids of the stored documents, ascending, without decoding the documents. */
export function storedInternalIds(store: unknown): number[] {
  const s = store as DocumentsStore;
  if (pendingBytes(s) && s.ids) return Array.from(s.ids);
  return Object.keys(s.docs).map(Number);
}

/** Our additions to Orama's index store. */
export interface Bm25fIndexStore extends OramaIndexStore {
  bm25f: Bm25fState;
}

export interface Bm25fState {
  /** Text fields in scoring order; each has its own postings. */
  fieldNames: string[];
  fields: FieldIndex[];
  /** Bumped on every change, so cached length norms know when to rebuild. */
  version: number;
  norms: LengthNorms;
  scratch: ScoreScratch;
}

export interface Bm25fConfig {
  k1: number;
  /** Per text field. */
  b: Record<string, number>;
  weights: Record<string, number>;
  /** See SearchSettings.coordination and titleCoverage (0: off). */
  coordination?: number;
  titleCoverage?: number;
}

export function createOramaTokenizer(analyzer: TextAnalyzer): Tokenizer {
  return {
    language: 'english',
    normalizationCache: new Map(),
    tokenize: (raw: string) => analyzer.indexTerms(raw),
  } as Tokenizer;
}

function newState(fieldNames: string[], fields?: FieldIndex[]): Bm25fState {
  return {
    fieldNames,
    fields: fields ?? fieldNames.map(() => new FieldIndex()),
    version: 0,
    norms: new LengthNorms(),
    scratch: new ScoreScratch(),
  };
}

/** Largest internal id in use + 1: the size of per-document arrays. */
export function internalIdCapacity(store: Bm25fIndexStore): number {
  return store.sharedInternalDocumentStore.internalIdToId.length + 1;
}

/** Runs BM25F on the store; `groups` are already analyzed query terms. */
export function runBm25f(
  store: Bm25fIndexStore,
  groups: QueryTermGroup[],
  config: Bm25fConfig,
  docCount: number,
  conjunctive: boolean,
  filter?: Set<number>,
  keep?: Keep,
  demoted?: { ids: Uint8Array; weight: number },
  outside?: OutsideStats,
) {
  const state = store.bm25f;
  const size = internalIdCapacity(store);
  state.scratch.ensure(size);
  const b = state.fieldNames.map((f) => config.b[f] ?? 0.75);
  const norms = state.norms.get(state.fields, b, size, state.version);
  return scoreBm25f(
    state.fields,
    norms,
    groups,
    {
      weights: state.fieldNames.map((f) => config.weights[f] ?? 1),
      b,
      k1: config.k1,
      docCount,
      conjunctive,
      filter,
      coordination: config.coordination ?? 0,
      titleCoverage: config.titleCoverage ?? 0,
      titleField: state.fieldNames.indexOf('title'),
      keep,
      demoted: demoted?.ids,
      demotion: demoted?.weight,
      outside,
    },
    state.scratch,
  );
}

/**
 * The index component. `textFields` are scored with BM25F; every other schema property goes to
 * Orama's default implementation untouched.
 */
export function createBm25fIndex(
  analyzer: TextAnalyzer,
  textFields: string[],
  config: Bm25fConfig,
  /** The language of the document being inserted. */
  documentLanguage: () => Language | undefined = () => undefined,
): IIndex<OramaIndexStore> {
  const isText = (store: OramaIndexStore, prop: string) =>
    (store as Bm25fIndexStore).bm25f.fieldNames.includes(prop);
  const field = (store: OramaIndexStore, prop: string) => {
    const s = (store as Bm25fIndexStore).bm25f;
    return s.fields[s.fieldNames.indexOf(prop)];
  };

  const component = {
    ...defaultIndex,

    create(orama: AnyOrama, sharedStore: unknown, schema: never) {
      const store = defaultIndex.create(orama as never, sharedStore as never, schema) as Bm25fIndexStore;
      store.bm25f = newState(textFields);
      return store;
    },

    insert(
      implementation: unknown,
      store: OramaIndexStore,
      prop: string,
      id: unknown,
      internalId: number,
      value: unknown,
      schemaType: never,
      language: never,
      tokenizer: Tokenizer,
      docsCount: number,
      options: never,
    ) {
      if (!isText(store, prop)) {
        return defaultIndex.insert(
          implementation as never,
          store,
          prop,
          id as never,
          internalId as never,
          value as never,
          schemaType,
          language,
          tokenizer,
          docsCount,
          options,
        );
      }
      const { terms, positions } = analyzer.indexTermsWithPositions(String(value ?? ''), documentLanguage());
      const created = field(store, prop).add(internalId, terms, positions);
      const node = fieldTree(store, prop);
      for (const term of created) node.insert(term, internalId);
      (store as Bm25fIndexStore).bm25f.version++;
    },

    remove(
      implementation: unknown,
      store: OramaIndexStore,
      prop: string,
      id: unknown,
      internalId: number,
      value: unknown,
      schemaType: never,
      language: never,
      tokenizer: Tokenizer,
      docsCount: number,
    ) {
      if (!isText(store, prop)) {
        return defaultIndex.remove(
          implementation as never,
          store,
          prop,
          id as never,
          internalId as never,
          value as never,
          schemaType,
          language,
          tokenizer,
          docsCount,
        );
      }
      const node = fieldTree(store, prop);
      for (const term of field(store, prop).remove(internalId)) node.removeWord(term);
      (store as Bm25fIndexStore).bm25f.version++;
      return true;
    },

    // Orama's own `search(db, { term })` also ranks with BM25F, so a plain Orama call agrees with the service.
    search(
      store: OramaIndexStore,
      term: string,
      _tokenizer: Tokenizer,
      _language: unknown,
      properties: string[],
      _exact: boolean,
      _tolerance: number,
      boost: Record<string, number>,
      _relevance: unknown,
      docsCount: number,
      whereFiltersIDs: Set<number> | undefined,
      threshold = 1,
    ) {
      const groups = analyzer
        .queryWords(term)
        .map((w) => ({ alternatives: w.alternatives.map((t) => ({ term: t, weight: 1 })) }));
      const weights: Record<string, number> = {};
      for (const f of textFields)
        weights[f] = properties.includes(f) ? (boost[f] ?? 1) * (config.weights[f] ?? 1) : 0;
      const scored = runBm25f(
        store as Bm25fIndexStore,
        groups,
        { ...config, weights },
        docsCount,
        threshold === 0,
        whereFiltersIDs,
      );
      return Array.from(scored.docs, (d, i) => [d, scored.scores[i]] as [number, number]).sort(
        (a, b) => b[1] - a[1],
      );
    },

    save(store: OramaIndexStore) {
      // The text fields' trees as bytes of their own (SavedTree), the rest as Orama saves it.
      const filters = Object.keys(store.indexes).filter(
        (p) => !isText(store, p) && (store.indexes[p] as { type: string }).type === 'Flat',
      );
      const others = Object.fromEntries(
        Object.entries(store.indexes).filter(([p]) => !isText(store, p) && !filters.includes(p)),
      );
      const saved = defaultIndex.save({ ...store, indexes: others } as OramaIndexStore) as Record<
        string,
        unknown
      >;
      for (const prop of textFields) {
        const { node, isArray } = store.indexes[prop] as { node: unknown; isArray: boolean };
        const bytes = node instanceof SavedTree ? node.bytes : pack((node as radix.RadixTree).toJSON());
        (saved.indexes as Record<string, unknown>)[prop] = { type: 'SavedRadix', node: bytes, isArray };
      }
      // The filters' trees as bytes of their own too, each decoded when a filter (or a change) first reads it.
      for (const prop of filters) {
        const entry = store.indexes[prop] as unknown as { node: flat.FlatTree; isArray: boolean };
        const bytes = pendingBytes(entry) ?? pack(entry.node.toJSON());
        (saved.indexes as Record<string, unknown>)[prop] = {
          type: 'SavedFlat',
          node: bytes,
          isArray: entry.isArray,
        };
      }
      // Orama's frequency tables are unused by BM25F and would double the file.
      saved.frequencies = {};
      saved.tokenOccurrences = {};
      saved.bm25f = {
        format: FIELD_INDEX_FORMAT,
        fieldNames: (store as Bm25fIndexStore).bm25f.fieldNames,
        // The largest parts, of which a restored search reads a few terms' and documents' (packed.ts Unread).
        fields: (store as Bm25fIndexStore).bm25f.fields.map((f) => {
          const field = f.save();
          return { ...field, seq: new Unread(field.seq), postings: new Unread(field.postings) };
        }),
      };
      return saved;
    },

    load(sharedStore: unknown, raw: Record<string, unknown>) {
      const indexes = raw.indexes as Record<string, { type: string; node: unknown; isArray: boolean }>;
      const trees = textFields.map((prop) => {
        const entry = indexes?.[prop];
        if (entry?.type !== 'SavedRadix' || !(entry.node instanceof Uint8Array))
          throw new Error(`index: the ${prop} field's vocabulary is not in this version's layout`);
        return [prop, entry] as const;
      });
      const filters = Object.entries(indexes ?? {}).filter(([, e]) => e?.type === 'SavedFlat');
      const others = Object.fromEntries(
        Object.entries(indexes).filter(([p, e]) => !textFields.includes(p) && e?.type !== 'SavedFlat'),
      );
      const store = defaultIndex.load(
        sharedStore as never,
        { ...raw, indexes: others } as never,
      ) as Bm25fIndexStore;
      for (const [prop, entry] of trees)
        (store.indexes as Record<string, unknown>)[prop] = {
          type: 'Radix',
          node: new SavedTree(entry.node as Uint8Array),
          isArray: entry.isArray,
        };
      for (const [prop, { node, isArray }] of filters) {
        if (!(node instanceof Uint8Array)) throw new Error(`index: the ${prop} filter is not binary`);
        const entry = { type: 'Flat', isArray };
        lazyPart(entry, 'node', node, (bytes) => {
          try {
            return flat.FlatTree.fromJSON(unpack(bytes));
          } catch {
            throw damaged(`${prop} filter`);
          }
        });
        (store.indexes as Record<string, unknown>)[prop] = entry;
      }
      const saved = raw.bm25f as { format?: number; fieldNames: string[]; fields: SavedFieldIndex[] };
      if (saved?.format !== FIELD_INDEX_FORMAT)
        throw new Error(
          `index saved in field index format ${saved?.format ?? 1}, this version reads ${FIELD_INDEX_FORMAT}`,
        );
      store.bm25f = newState(
        saved.fieldNames,
        saved.fields.map((f) => FieldIndex.load(f)),
      );
      return store;
    },
  };
  return component as unknown as IIndex<OramaIndexStore>;
}

export { internalDocumentIDStore };
