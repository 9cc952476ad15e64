import { create, insert, remove, count, getByID, load, save, type AnyOrama } from '@orama/orama';
import { decode, encode } from '@msgpack/msgpack';
import { BacklogError } from '../errors.js';
import {
  createBm25fIndex,
  createOramaTokenizer,
  internalDocumentIDStore,
  runBm25f,
  type Bm25fIndexStore,
} from './orama-components.js';
import { boundedLevenshtein } from '@orama/orama/internals';
import type { radix } from '@orama/orama/trees';
import { prefixGroup, termGroup, type Vocabulary } from './expand.js';
import { phraseDocs } from './field-index.js';
import { idf } from './bm25.js';
import { IdRouter } from './id-routing.js';
import { TopK } from './top-k.js';
import { buildWhere, folderChain } from './filters.js';
import { evaluateQuery, type QueryContext } from './query-eval.js';
import { parseRawQuery } from './query-parser.js';
import type { QueryTermGroup } from './score.js';
import { TextAnalyzer, idKey, type TokenizerSettings } from './tokenizer.js';
import { statusKey } from '../storage/ids.js';
import {
  TEXT_FIELDS,
  type SearchDocument,
  type SearchFilters,
  type SearchHit,
  type SearchRequest,
  type SearchResponse,
  type TextField,
} from './types.js';

export interface SearchSettings {
  /** Languages, stemming and stop-words; see TokenizerSettings. */
  tokenizer: Partial<TokenizerSettings>;
  /** BM25F weight of each text field: a word in the title counts this many times a word in the body. */
  fieldWeights: Record<TextField, number>;
  /** BM25 term-frequency saturation. */
  k1: number;
  /** BM25 length normalization per field (0 = none, 1 = full). */
  b: Record<TextField, number>;
}

/** Textbook BM25 parameters (k1 1.2, b 0.75 on the body) and title > tags > author > body; docs/search.md has their measured effect. */
export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  tokenizer: {},
  fieldWeights: { title: 2, tags: 1.5, author: 1.2, body: 1, extra: 0.5 },
  k1: 1.2,
  b: { title: 0.5, tags: 0.3, author: 0.3, body: 0.75, extra: 0.5 },
};

const SCHEMA = {
  title: 'string',
  tags: 'string',
  author: 'string',
  body: 'string',
  extra: 'string',
  type: 'enum',
  status_key: 'enum',
  state: 'enum',
  tag_keys: 'enum[]',
  author_key: 'enum',
  lineage: 'enum[]',
  path: 'enum',
  folders: 'enum[]',
  file_type: 'enum',
} as const;

/** What Orama is given per document: the searchable text (emptied once indexed) and the keys the filters match on. */
interface IndexedDocument {
  id: string;
  title: string;
  tags: string;
  author: string;
  body: string;
  extra: string;
  type?: string;
  status_key?: string;
  state?: string;
  tag_keys: string[];
  author_key?: string;
  lineage: string[];
  path?: string;
  folders: string[];
  file_type?: string;
  updated_ms: number;
}

function toIndexed(doc: SearchDocument): IndexedDocument {
  const lineage = [idKey(doc.id), ...(doc.ancestors ?? (doc.parent_id ? [doc.parent_id] : [])).map(idKey)];
  const out: IndexedDocument = {
    id: doc.id,
    title: doc.title ?? '',
    tags: (doc.tags ?? []).join(' \n '),
    author: doc.author ?? '',
    body: doc.body ?? '',
    extra: doc.extra ?? '',
    tag_keys: (doc.tags ?? []).map((t) => t.toLowerCase()),
    lineage,
    folders: folderChain(doc.folder ?? ''),
    updated_ms: doc.updated_ms ?? 0,
  };
  if (doc.type) out.type = doc.type;
  if (doc.status) out.status_key = statusKey(doc.status);
  if (doc.state) out.state = doc.state;
  if (doc.author) out.author_key = doc.author.toLowerCase();
  if (doc.path) out.path = doc.path;
  if (doc.file_type) out.file_type = doc.file_type.toLowerCase();
  return out;
}

/** Bit mask of text fields (bit i = TEXT_FIELDS[i]), as the scorer reports matched fields. */
function fieldBits(fields: TextField[]): number {
  return fields.reduce((mask, f) => mask | (1 << TEXT_FIELDS.indexOf(f)), 0);
}

/**
 * Indices of the `k` best scores, best first (ties: the lower internal id first, as the full sort
 * orders them): a bounded min-heap in typed arrays, O(n log k), and a match that cannot beat the
 * heap's worst is dismissed with one comparison.
 */
export function topKIndices(scores: number[], docs: number[], k: number): number[] {
  if (k <= 0) return [];
  const heap = new Int32Array(k);
  let size = 0;
  // `a` ranks below `b`.
  const worse = (a: number, b: number) =>
    scores[a] < scores[b] || (scores[a] === scores[b] && docs[a] > docs[b]);
  for (let i = 0; i < scores.length; i++) {
    if (size < k) {
      let c = size++;
      heap[c] = i;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!worse(heap[c], heap[p])) break;
        [heap[c], heap[p]] = [heap[p], heap[c]];
        c = p;
      }
      continue;
    }
    const top = heap[0];
    if (scores[i] < scores[top] || !worse(top, i)) continue;
    heap[0] = i;
    for (let j = 0; ;) {
      const l = 2 * j + 1;
      const r = l + 1;
      let m = j;
      if (l < size && worse(heap[l], heap[m])) m = l;
      if (r < size && worse(heap[r], heap[m])) m = r;
      if (m === j) break;
      [heap[j], heap[m]] = [heap[m], heap[j]];
      j = m;
    }
  }
  return Array.from(heap.subarray(0, size)).sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
}

/**
 * The lexical retriever: Orama holds the documents' filter keys, the term dictionary and the filter
 * indexes; ranking is BM25F over raw term frequencies (see orama-components.ts for why).
 * OramaSearchService (orama-search-service.ts) composes it with the vector retriever and the results.
 */
export class LexicalIndex {
  readonly settings: SearchSettings;
  readonly analyzer: TextAnalyzer;
  private db!: AnyOrama;
  /** Which document a query names (ids, numbers, `ADR 0116`): it is ranked first. */
  readonly router = new IdRouter();

  constructor(settings: Partial<SearchSettings> = {}) {
    this.settings = {
      ...DEFAULT_SEARCH_SETTINGS,
      ...settings,
      fieldWeights: { ...DEFAULT_SEARCH_SETTINGS.fieldWeights, ...settings.fieldWeights },
      b: { ...DEFAULT_SEARCH_SETTINGS.b, ...settings.b },
    };
    this.analyzer = new TextAnalyzer(this.settings.tokenizer);
    this.reset();
  }

  private reset(): void {
    this.db = create({
      schema: SCHEMA,
      sort: { enabled: false },
      components: {
        tokenizer: createOramaTokenizer(this.analyzer),
        index: createBm25fIndex(this.analyzer, [...TEXT_FIELDS], {
          k1: this.settings.k1,
          b: this.settings.b,
          weights: this.settings.fieldWeights,
        }),
      },
    });
    this.router.clear();
  }

  /** Number of indexed documents. */
  get size(): number {
    return count(this.db);
  }

  /**
   * The index as bytes: the msgpack of Orama's `save()`, the bytes @orama/plugin-data-persistence's
   * `binary` format writes as hex text (encoded here directly, without the hex round trip), with our
   * BM25F fields (typed arrays as binary) inside the saved index component.
   */
  async serialize(): Promise<Uint8Array> {
    return encode(await save(this.db));
  }

  /**
   * Loads bytes from `serialize()` into a database made by our own `create()`. The plugin's
   * `restore()` builds a database with Orama's default components, which would drop our tokenizer
   * and BM25F index (Orama issues #640, #934), so only its format is used here.
   */
  restore(bytes: Uint8Array): void {
    this.reset();
    load(this.db, decode(bytes) as never);
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
    for (const doc of Object.values(all)) this.router.add({ id: doc.id, path: doc.path });
  }

  /** Replaces the whole index with `docs`, yielding to the event loop between batches. */
  async build(
    docs: Iterable<SearchDocument>,
    opts: { onProgress?: (done: number, total: number) => void } = {},
  ): Promise<void> {
    this.reset();
    const all = [...docs];
    const batch = 500;
    for (let i = 0; i < all.length; i += batch) {
      for (const doc of all.slice(i, i + batch)) this.upsert(doc);
      opts.onProgress?.(Math.min(i + batch, all.length), all.length);
      if (i + batch < all.length) await new Promise((r) => setImmediate(r));
    }
    if (all.length === 0) opts.onProgress?.(0, 0);
    // The postings and sequences grew with room to spare; a built index keeps exactly its size.
    for (const field of this.store.bm25f.fields) field.compact();
  }

  /** Adds or replaces one document. */
  upsert(doc: SearchDocument): void {
    if (getByID(this.db, doc.id)) this.remove(doc.id);
    const indexed = toIndexed(doc);
    insert(this.db, indexed as never);
    // Orama keeps the inserted object as the stored document. Once the text is in the postings, the
    // stored copy needs only the filter keys: the text lives in BacklogService, not twice in memory
    // and in the persisted index (removal reads the forward index, not the text).
    for (const f of TEXT_FIELDS) indexed[f] = '';
    this.router.add(doc);
  }

  /** Removes a document; returns whether it was there. */
  remove(id: string): boolean {
    const existed = Boolean(getByID(this.db, id));
    if (existed) remove(this.db, id);
    this.router.remove(id);
    return existed;
  }

  /** Every indexed document's id. */
  documentIds(): string[] {
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
    return Object.values(all).map((doc) => doc.id);
  }

  /** The document a query names (`TASK-42`, `task 0042`, `72`, `ADR 0116`; id-routing.ts), if any. */
  resolveId(query: string): string | undefined {
    return this.router.resolve(query);
  }

  private get store(): Bm25fIndexStore {
    return this.db.data.index as Bm25fIndexStore;
  }

  private externalId(internalId: number): string {
    return internalDocumentIDStore.getDocumentIdFromInternalId(this.db.internalDocumentIDStore, internalId);
  }

  private internalId(id: string): number {
    return internalDocumentIDStore.getInternalDocumentId(this.db.internalDocumentIDStore, id);
  }

  private updatedMs(internalId: number): number {
    return (
      (this.db.documentsStore.get(this.db.data.docs, internalId as never) as IndexedDocument | undefined)
        ?.updated_ms ?? 0
    );
  }

  private score(groups: QueryTermGroup[], conjunctive: boolean, filter: Set<number> | undefined) {
    const { k1, b, fieldWeights } = this.settings;
    return runBm25f(this.store, groups, { k1, b, weights: fieldWeights }, this.size, conjunctive, filter);
  }

  /** Fields in which a word that begins an indexed word counts (tags and author names). */
  private readonly partialFields = fieldBits(['tags', 'author']);

  private vocabulary(): Vocabulary {
    const state = this.store.bm25f;
    const trees = TEXT_FIELDS.map((f) => this.store.indexes[f].node as radix.RadixTree);
    const inFields = (mask: number | undefined) =>
      TEXT_FIELDS.map((_, i) => i).filter((i) => mask === undefined || (mask & (1 << i)) !== 0);
    return {
      has: (term) => state.fields.some((f) => f.hasTerm(term)),
      docFreq: (term) => Math.max(0, ...state.fields.map((f) => f.docFreq(term))),
      startingWith: (prefix, mask) => {
        const words = new Set<string>();
        for (const i of inFields(mask))
          for (const w of Object.keys(trees[i].find({ term: prefix, exact: false }))) words.add(w);
        return [...words];
      },
      withinOneEdit: (term) => {
        const words = new Set<string>();
        for (const tree of trees) {
          for (const w of Object.keys(tree.find({ term, exact: false, tolerance: 1 }))) {
            // Orama's fuzzy find also returns every word the term is a prefix of; keep true edits only.
            if (
              w !== term &&
              Math.abs(w.length - term.length) <= 1 &&
              boundedLevenshtein(term, w, 1).isBounded
            )
              words.add(w);
          }
        }
        return [...words];
      },
    };
  }

  private queryContext(filter: Set<number> | undefined): QueryContext {
    const vocab = this.vocabulary();
    const inFilter = (ids: Iterable<number>) => (filter ? [...ids].filter((d) => filter.has(d)) : [...ids]);
    return {
      sequence: (text) => this.analyzer.sequence(text),
      fieldMask: (field) =>
        field === undefined ? undefined : fieldBits([field === 'tags' ? 'tags' : (field as TextField)]),
      termGroup: (term, fields) => termGroup(term, undefined, fields, this.partialFields, vocab),
      prefixGroup: (prefix, fields) => prefixGroup(this.analyzer.fold(prefix), fields, vocab),
      score: (groups, conjunctive) => this.score(groups, conjunctive, filter),
      phraseFilter: (candidates, terms, fields) => {
        const keep = new Set<number>();
        this.store.bm25f.fields.forEach((f, i) => {
          if (fields !== undefined && (fields & (1 << i)) === 0) return;
          for (const d of phraseDocs(f, terms, candidates)) keep.add(d);
        });
        return keep;
      },
      docsWithValue: (field, value) => {
        const where =
          field === 'status'
            ? { status_key: { in: [statusKey(value)] } }
            : { type: { in: [value.toLowerCase()] } };
        return new Set(
          inFilter(
            this.db.index.searchByWhereClause(
              this.store,
              this.db.tokenizer,
              where as never,
              'english',
            ) as Set<number>,
          ),
        );
      },
      universe: () => inFilter(filter ?? this.allInternalIds()),
    };
  }

  /** Ids of the documents passing `filters`; null when the filters are empty (everything passes). */
  matchingIds(filters: SearchFilters): Set<string> | null {
    const where = buildWhere(filters, () => this.knownPaths());
    if (where === null) return new Set();
    if (Object.keys(where).length === 0) return null;
    const internal = this.db.index.searchByWhereClause(
      this.store,
      this.db.tokenizer,
      where as never,
      'english',
    ) as Set<number>;
    return new Set([...internal].map((d) => this.externalId(d)));
  }

  /**
   * The best BM25F score any document could reach for this query: every term's saturation at its
   * limit, Σ idf(t) · (k1 + 1). Hybrid fusion divides by it, so a weak best match stays weak.
   */
  upperBound(query: string): number {
    const state = this.store.bm25f;
    let sum = 0;
    for (const term of this.analyzer.queryTerms(query)) {
      const df = Math.max(0, ...state.fields.map((f) => f.docFreq(term)));
      if (df > 0) sum += idf(this.size, df) * (this.settings.k1 + 1);
    }
    return sum;
  }

  /** Ranked search. An empty query lists the filtered documents (most recent first). */
  search(req: SearchRequest): SearchResponse {
    const limit = req.limit ?? 20;
    const offset = req.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 0)
      throw new BacklogError(
        'INVALID_FILTER',
        `limit: ${limit} is not a non-negative integer`,
        'Pass limit between 1 and 100.',
        { field: 'limit' },
      );
    if (!Number.isInteger(offset) || offset < 0)
      throw new BacklogError(
        'INVALID_FILTER',
        `offset: ${offset} is not a non-negative integer`,
        'Pass offset >= 0.',
        { field: 'offset' },
      );

    let filter: Set<number> | undefined;
    if (req.filters) {
      const where = buildWhere(req.filters, () => this.knownPaths());
      if (where === null) return { hits: [], total: 0 };
      if (Object.keys(where).length > 0) {
        filter = this.db.index.searchByWhereClause(
          this.store,
          this.db.tokenizer,
          where as never,
          'english',
        ) as Set<number>;
      }
    }

    const query = req.query.trim();
    let docs: number[];
    let scores: number[];
    let masks: number[];
    if (!query) {
      docs = filter ? [...filter] : this.allInternalIds();
      scores = docs.map(() => 0);
      masks = docs.map(() => 0);
    } else if (req.matchMode === 'raw') {
      const matches =
        evaluateQuery(parseRawQuery(query), this.queryContext(filter), req.conjunctive ?? false) ?? new Map();
      docs = [...matches.keys()];
      scores = docs.map((d) => matches.get(d)!.score);
      masks = docs.map((d) => matches.get(d)!.mask);
    } else {
      const vocab = this.vocabulary();
      const groups = this.analyzer
        .queryWords(query)
        .map(({ term, surface }) => termGroup(term, surface, undefined, this.partialFields, vocab));
      ({ docs, scores, fieldMasks: masks } = this.score(groups, req.conjunctive ?? false, filter));
    }

    const sortRecent = req.sort === 'recent' || !query;
    const updated = sortRecent ? docs.map((d) => this.updatedMs(d)) : undefined;
    // `a` ranks below `b`: by recency then score, or by score; ties by internal id (a stable order).
    const worse = (a: number, b: number) =>
      updated !== undefined && updated[a] !== updated[b]
        ? updated[a] < updated[b]
        : scores[a] < scores[b] || (scores[a] === scores[b] && docs[a] > docs[b]);
    let total = docs.length;
    let order: number[];
    if (!sortRecent && (offset + limit) * 4 < docs.length) {
      // A page of a large result: select the best instead of sorting every match.
      order = topKIndices(scores, docs, offset + limit);
    } else {
      order = docs.map((_, i) => i);
      order.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
    }

    // Id routing: a query that names an item puts that item first.
    let routedAt = -1;
    const routed = query ? this.resolveId(query) : undefined;
    if (routed && !sortRecent) {
      const internal = this.internalId(routed);
      if (!filter || filter.has(internal)) {
        const at = order.findIndex((i) => docs[i] === internal);
        const top = order.length ? scores[order[0]] : 0;
        if (at > 0) order.unshift(...order.splice(at, 1));
        if (at < 0) {
          let j = docs.indexOf(internal);
          if (j < 0) {
            docs.push(internal);
            scores.push(top);
            masks.push(0);
            j = docs.length - 1;
            total++;
          }
          order.unshift(j);
        }
        routedAt = order[0];
        scores[routedAt] = Math.max(top, scores[routedAt]);
      }
    }

    const hit = (i: number): SearchHit => ({
      id: this.externalId(docs[i]),
      score: scores[i],
      matched_fields: TEXT_FIELDS.filter((_, f) => (masks[i] & (1 << f)) !== 0),
    });
    const response: SearchResponse = { total, hits: order.slice(offset, offset + limit).map(hit) };
    if (req.groupBy) {
      const ranksBelow = (a: number, b: number) => a !== routedAt && (b === routedAt || worse(a, b));
      response.groups = this.groupTop(docs, limit, ranksBelow).map((g) => ({
        key: g.key,
        count: g.count,
        hits: g.top.map(hit),
      }));
    }
    return response;
  }

  /**
   * Every match counted by type, and each type's best `limit` (bounded heaps: one pass, no sort of the
   * matches); groups ordered by their best match.
   */
  private groupTop(
    docs: number[],
    limit: number,
    worse: (a: number, b: number) => boolean,
  ): { key: string; count: number; top: number[] }[] {
    const groups = new Map<string, { count: number; heap: TopK<number> }>();
    for (let i = 0; i < docs.length; i++) {
      const key = this.typeOf(docs[i]);
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { count: 0, heap: new TopK<number>(limit, worse) }));
      group.count++;
      group.heap.offer(i);
    }
    const out = [...groups].map(([key, g]) => ({ key, count: g.count, top: g.heap.sorted() }));
    return out.sort((a, b) => (worse(a.top[0], b.top[0]) ? 1 : worse(b.top[0], a.top[0]) ? -1 : 0));
  }

  private typeOf(internalId: number): string {
    return (
      (this.db.documentsStore.get(this.db.data.docs, internalId as never) as IndexedDocument | undefined)
        ?.type ?? 'resource'
    );
  }

  private allInternalIds(): number[] {
    const ids: number[] = [];
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, unknown>;
    for (const k of Object.keys(all)) ids.push(Number(k));
    return ids;
  }

  private *knownPaths(): Iterable<string> {
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
    for (const doc of Object.values(all)) if (doc.path) yield doc.path;
  }
}
