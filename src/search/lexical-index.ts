import { create, insert, remove, count, getByID, load, save, type AnyOrama } from '@orama/orama';
import { BacklogError } from '../errors.js';
import {
  createBm25fIndex,
  createDocumentsStore,
  createOramaTokenizer,
  fieldTree,
  internalDocumentIDStore,
  internalIdCapacity,
  runBm25f,
  storedInternalIds,
  documentsDecoded,
  type Bm25fIndexStore,
  type Bm25fState,
} from './orama-components.js';
import { prefixGroup, termGroup, type Vocabulary } from './expand.js';
import { phraseDocs, rewardProximity } from './phrase.js';
import { idf } from './bm25.js';
import { Background } from './background.js';
import { grownUint8 } from './typed-arrays.js';
import { IdRouter, type RoutableDocument } from './id-routing.js';
import { SCHEMA, toIndexed, type IndexedDocument } from './indexed-document.js';
import { indexVocabulary } from './vocabulary.js';
import { correctWords, type Correction, type SuggestVocabulary } from './suggest.js';
import { TopK, topKIndices, type Keep } from './top-k.js';

export { topKIndices };
import { buildWhere } from './filters.js';
import { evaluateQuery, type QueryContext } from './query-eval.js';
import { parseRawQuery } from './query-parser.js';
import type { OutsideStats, QueryTermGroup } from './score.js';
import { TextAnalyzer, type Language, type TokenizerSettings } from './tokenizer.js';
import { statusKey } from '../storage/ids.js';
import { languageSample, type LanguagePlanState } from './language-mix.js';
import { pack, unpack } from './packed.js';
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
  /**
   * Coordination: a document's score is multiplied by (query words it matched / query words)^coordination,
   * so one that has every word of a multi-word query beats one that repeats a single word (0: off;
   * MiniSearch's own scoring is 1). Measured in docs/search.md, "Ranking long documents".
   */
  coordination: number;
  /** Up to this share more for a document whose title holds the query's words (all of them: the full share). */
  titleCoverage: number;
  /**
   * Score times this for an archived item (Backlog.md's archive/): search covers archived work but ranks
   * it after live items of similar relevance (1: no difference). docs/formats.md has the measurement.
   */
  archivedWeight: number;
  /**
   * Up to this share more for a document in whose title or body the query's words stand next to each
   * other, as in the query (each adjacent pair counts its part); applied to the best 100 matches.
   */
  proximity: number;
}

/** Textbook BM25 parameters (k1 1.2, b 0.75 on the body) and title > tags > headings > author > body; docs/search.md has their measured effect. */
export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  tokenizer: {},
  fieldWeights: { title: 2, tags: 1.5, author: 1.2, body: 1, extra: 0.5, headings: 1.5 },
  k1: 1.2,
  b: { title: 0.5, tags: 0.3, author: 0.3, body: 0.75, extra: 0.5, headings: 0.5 },
  coordination: 0,
  titleCoverage: 0.75,
  proximity: 0.25,
  archivedWeight: 0.8,
};

/** The best matches that the proximity bonus re-ranks (the rest keep their BM25F order below them). */
const PROXIMITY_CANDIDATES = 100;

/** Bit mask of text fields (bit i = TEXT_FIELDS[i]), as the scorer reports matched fields. */
function fieldBits(fields: TextField[]): number {
  return fields.reduce((mask, f) => mask | (1 << TEXT_FIELDS.indexOf(f)), 0);
}

/**
 * The lexical retriever: Orama holds the documents' filter keys, the term dictionary and the filter
 * indexes; ranking is BM25F over raw term frequencies (see orama-components.ts for why).
 * OramaSearchService (orama-search-service.ts) composes it with the vector retriever and the results.
 */
/** The documents' id routes as IdRouter.saveRoutes wrote them (the same documents, in the same order). */
export interface SavedRouting {
  routes: Uint8Array;
  ids: readonly string[];
}

export class LexicalIndex {
  readonly settings: SearchSettings;
  readonly analyzer: TextAnalyzer;
  private db!: AnyOrama;
  /** Which document a query names (ids, numbers, `ADR 0116`): it is ranked first. */
  readonly router = new IdRouter();
  /** The language of the document being inserted (the index component analyzes its fields in it). */
  private inserting: Language | undefined;
  /** While the detector's answer on the last build is awaited: that answer, and the documents to index again. */
  private pending: Promise<void> | null = null;
  private pendingDocs: Map<string, SearchDocument> | null = null;
  /** Called when the documents were indexed again in other languages (snippets prepared before are stale). */
  onReanalyzed: () => void = () => undefined;
  /** Filling the adjacency filters of the fields proximity reads (field-index.ts), after builds and changes. */
  private readonly adjacencyWork = new Background();
  private readonly treeWork = new Background();
  /** Each restored document's language and date (restoredColumns), read while the stored documents are undecoded. */
  private columns: {
    languages: Language[];
    language: Uint8Array;
    /** Packed, decoded when first sorted by (then a list). */
    updated: Uint8Array | number[];
  } | null = null;
  /** 1 at the internal id of an archived document (its score is times `archivedWeight`). */
  private archived: Uint8Array = new Uint8Array(0);

  /** Fill the adjacency filters in the background; off, proximity reads the postings (same answers). */
  background = true;

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
        documentsStore: createDocumentsStore(),
        tokenizer: createOramaTokenizer(this.analyzer),
        index: createBm25fIndex(
          this.analyzer,
          [...TEXT_FIELDS],
          { k1: this.settings.k1, b: this.settings.b, weights: this.settings.fieldWeights },
          () => this.inserting,
        ),
      },
    });
    this.router.clear();
    this.archived = new Uint8Array(0);
    this.columns = null;
  }

  /** Number of indexed documents. */
  get size(): number {
    return count(this.db);
  }

  /**
   * The index as bytes: Orama's `save()` (what @orama/plugin-data-persistence's formats write) with our
   * BM25F fields (typed arrays as binary) inside the saved index component, packed (packed.ts: read by
   * the native JSON.parse, where the plugin's msgpack decoder ran cold in a one-shot command).
   */
  async serialize(): Promise<Uint8Array> {
    await this.languagesSettled();
    const saved = (await save(this.db)) as unknown as Record<string, unknown>;
    // The analyzer's run caches too: a restored process's first snippets then analyze their bodies'
    // words from them instead of stemming each anew (docs/performance.md, branch snipcold).
    return pack({
      ...saved,
      languagePlan: this.analyzer.languages.state(),
      runs: this.analyzer.savedRuns(),
      restored: this.restoredColumns(),
    });
  }

  /**
   * Loads bytes from `serialize()` into a database made by our own `create()`; `routable`: the
   * documents' ids, paths and titles for id routing, or their routes as saved (else the saved ids and paths). The plugin's
   * `restore()` builds a database with Orama's default components, which would drop our tokenizer
   * and BM25F index (Orama issues #640, #934), so only its format is used here.
   */
  restore(bytes: Uint8Array, routable?: readonly RoutableDocument[] | SavedRouting): void {
    this.pending = null;
    this.pendingDocs = null;
    this.reset();
    const raw = unpack(bytes) as { languagePlan?: LanguagePlanState; runs?: unknown };
    load(this.db, raw as never);
    // A server decodes the vocabulary trees in the background (orama-components.ts): the open does not
    // wait for them, and only a query that walks one before then (prefix, typos) decodes it itself.
    this.decodeTrees();
    const languages = this.analyzer.languages;
    languages.restoreState(raw.languagePlan);
    this.analyzer.restoreRuns(raw.runs);
    // What a restore counts from the stored documents is saved apart (restoredColumns), so a one-shot
    // search never decodes them; id routing without the caller's documents still reads them.
    const columns = routable ? this.readColumns((raw as { restored?: unknown }).restored) : null;
    this.columns = null;
    if (columns) {
      for (let internal = 0; internal < columns.language.length; internal++) {
        const code = columns.language[internal];
        if (code > 0) languages.count(columns.languages[code - 1], 1);
      }
      // A copy: marks change with the documents, and the saved bytes are the cache file's.
      if (columns.archived.includes(1)) this.archived = columns.archived.slice();
      this.columns = columns;
    } else {
      const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
      for (const [internal, doc] of Object.entries(all)) {
        if (!routable) this.router.add({ id: doc.id, path: doc.path });
        languages.count(doc.lang, 1);
        this.markArchived(Number(internal), doc.state === 'archived');
      }
    }
    // The caller's documents name themselves by their titles too (`ADR 0116: ...`): routed once, in order,
    // or their routes as the persisted index saved them (IdRouter.saveRoutes), read where they lie.
    if (routable && 'routes' in routable) this.router.restoreRoutes(routable.routes, routable.ids);
    else for (const doc of routable ?? []) this.router.add(doc);
    this.fillAdjacency();
  }

  /**
   * What a restore reads from every stored document, by internal id: its language (0 for none, else
   * 1 + its index in `languages`) and whether it is archived (1); and its date, for a sort by date.
   */
  private restoredColumns(): {
    languages: string[];
    language: Uint8Array;
    archived: Uint8Array;
    updated: Uint8Array;
  } {
    const languages: string[] = [];
    const size = internalIdCapacity(this.store);
    const language = new Uint8Array(size);
    const archived = new Uint8Array(size);
    const updated: number[] = new Array<number>(size).fill(0);
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
    for (const [key, doc] of Object.entries(all)) {
      const internal = Number(key);
      if (doc.lang) {
        let code = languages.indexOf(doc.lang) + 1;
        if (code === 0) code = languages.push(doc.lang);
        language[internal] = code;
      }
      if (doc.state === 'archived') archived[internal] = 1;
      updated[internal] = doc.updated_ms ?? 0;
    }
    // More languages than a byte counts: the documents are read at restore instead (never in practice).
    return languages.length > 255
      ? { languages: [], language: new Uint8Array(0), archived, updated: pack(updated) }
      : { languages, language, archived, updated: pack(updated) };
  }

  /** restoredColumns as saved, or null when they are not as this version writes them (the documents are read then). */
  private readColumns(
    saved: unknown,
  ): { languages: Language[]; language: Uint8Array; archived: Uint8Array; updated: Uint8Array } | null {
    const { languages, language, archived, updated } = (saved ?? {}) as Record<string, unknown>;
    const size = internalIdCapacity(this.store);
    if (
      !Array.isArray(languages) ||
      !languages.every((l) => typeof l === 'string') ||
      !(language instanceof Uint8Array) ||
      !(archived instanceof Uint8Array) ||
      !(updated instanceof Uint8Array) ||
      language.length !== size ||
      archived.length !== size ||
      language.some((code) => code > languages.length) ||
      archived.some((a) => a > 1)
    )
      return null;
    return { languages: languages as Language[], language, archived, updated };
  }

  /** Reads what a restore left unread (field-index.ts); throws UnreadableBytes when it is malformed. */
  readAll(): void {
    for (const field of this.store.bm25f.fields) field.readAll();
  }

  /**
   * Decodes the stored documents and filter trees a restore left as bytes (orama-components.ts), which a
   * change decodes anyway; throws a damaged part's error when one does not decode.
   */
  decodeSaved(): void {
    void (this.db.data.docs as { docs?: unknown }).docs;
    for (const index of Object.values(this.store.indexes)) void (index as { node?: unknown }).node;
  }

  /** Replaces the whole index with `docs`, yielding to the event loop between batches. */
  async build(
    docs: Iterable<SearchDocument>,
    opts: { onProgress?: (done: number, total: number) => void } = {},
  ): Promise<void> {
    this.reset();
    const all = [...docs];
    // Which languages the documents are in: a sample goes to the detector (in a worker) while the
    // documents are indexed in each script's default language, and they are indexed again if the
    // answer differs. A small backlog is built before the detector has loaded: it does not wait, and
    // is indexed again when the answer comes (languagesSettled).
    await this.analyzer.languages.ready();
    const planned = this.analyzer.languages.plan(
      all.map((d) => ({ text: languageSample(d), declared: d.language })),
    );
    let answer: boolean | undefined;
    void planned?.then((changed) => (answer = changed));
    const batch = 500;
    const indexAll = async () => {
      for (let i = 0; i < all.length; i += batch) {
        for (const doc of all.slice(i, i + batch)) this.add(doc);
        opts.onProgress?.(Math.min(i + batch, all.length), all.length);
        if (i + batch < all.length) await new Promise((r) => setImmediate(r));
      }
    };
    await indexAll();
    if (planned && answer === undefined) {
      const docsNow = new Map(all.map((d) => [d.id, d]));
      this.pendingDocs = docsNow;
      this.pending = planned.then((changed) => {
        if (this.pendingDocs !== docsNow) return; // another build came first
        this.pendingDocs = null;
        this.pending = null;
        if (changed) this.reindex([...docsNow.values()]);
      });
    } else if (answer) {
      this.reset();
      this.analyzer.languages.clearCounts();
      await indexAll();
    }
    if (all.length === 0) opts.onProgress?.(0, 0);
    // The postings and sequences grew with room to spare; a built index keeps exactly its size.
    for (const field of this.store.bm25f.fields) field.compact();
    this.fillAdjacency();
  }

  /** Resolves when the languages of the last build are settled (the detector answered, documents re-indexed). */
  languagesSettled(): Promise<void> {
    return this.pending ?? Promise.resolve();
  }

  /**
   * Replaces the whole index with `docs` at once, in the languages the analyzer has now (no detector):
   * the fallback of a restore that failed after the process had started answering.
   */
  buildNow(docs: SearchDocument[]): void {
    this.pending = null;
    this.pendingDocs = null;
    this.reindex(docs);
  }

  /** Indexes `docs` again, at once, in the languages the detector decided. */
  private reindex(docs: SearchDocument[]): void {
    this.reset();
    this.analyzer.languages.clearCounts();
    for (const doc of docs) this.add(doc);
    for (const field of this.store.bm25f.fields) field.compact();
    this.fillAdjacency();
    this.onReanalyzed();
  }

  /** The fields whose word pairs the proximity bonus reads: title, then body. */
  private proximityFields() {
    const { fields, fieldNames } = this.store.bm25f;
    return fields.filter((_, f) => fieldNames[f] === 'title' || fieldNames[f] === 'body');
  }

  /**
   * Fills the proximity fields' adjacency filters in the background, a slice of about 100,000 tokens
   * per tick (Backlog.md's 700 files: 3 slices). Until a document is in, its postings say whether it
   * may hold a pair (both words), as before the filters.
   */
  private fillAdjacency(): void {
    if (!this.background) return;
    this.adjacencyWork.start(() => {
      let budget = 100_000;
      for (const field of this.proximityFields())
        if ((budget = field.fillAdjacency(budget)) <= 0) return false;
      return true;
    });
  }

  /** Resolves when the adjacency filters are filled and the trees decoded (benchmarks wait; searches never do). */
  adjacencyReady(): Promise<void> {
    return Promise.all([this.adjacencyWork.done(), this.treeWork.done()]).then(() => undefined);
  }

  /** Decodes the restored text fields' vocabulary trees in the background, one a tick. */
  private decodeTrees(): void {
    if (!this.background) return;
    const store = this.store;
    let next = 0;
    this.treeWork.start(() => {
      if (store === this.store) fieldTree(store, TEXT_FIELDS[next]);
      return ++next >= TEXT_FIELDS.length || store !== this.store;
    });
  }

  /** Adds or replaces one document. */
  upsert(doc: SearchDocument): void {
    this.add(doc);
    // A filter that had no room left for the document's pairs is made anew.
    if (this.proximityFields().some((f) => !f.adjacencyReady)) this.fillAdjacency();
  }

  /** `upsert` without the filters' upkeep: a build or re-index fills them once it is done. */
  private add(doc: SearchDocument): void {
    this.pendingDocs?.set(doc.id, doc);
    if (getByID(this.db, doc.id)) this.remove(doc.id);
    const indexed = toIndexed(doc);
    const language = this.analyzer.languages.languageOf(languageSample(doc), doc.language);
    if (language) indexed.lang = language;
    this.inserting = language;
    try {
      insert(this.db, indexed as never);
    } finally {
      this.inserting = undefined;
    }
    this.analyzer.languages.count(language, 1);
    this.markArchived(this.internalId(doc.id), doc.state === 'archived');
    // Orama keeps the inserted object as the stored document. Once the text is in the postings, the
    // stored copy needs only the filter keys: the text lives in BacklogService, not twice in memory
    // and in the persisted index (removal reads the forward index, not the text).
    for (const f of TEXT_FIELDS) indexed[f] = '';
    this.router.add(doc);
  }

  /** Removes a document; returns whether it was there. */
  remove(id: string): boolean {
    this.pendingDocs?.delete(id);
    const doc = getByID(this.db, id) as IndexedDocument | undefined;
    const existed = Boolean(doc);
    if (doc) {
      this.analyzer.languages.count(doc.lang, -1);
      this.markArchived(this.internalId(id), false);
      remove(this.db, id);
    }
    this.router.remove(id);
    return existed;
  }

  /** Every indexed document's id. */
  documentIds(): string[] {
    // By the internal ids (as stored, ascending): a restored index's documents stay undecoded.
    return storedInternalIds(this.db.data.docs).map((internal) => this.externalId(internal));
  }

  /** The document a query names (`TASK-42`, `task 0042`, `72`, `ADR 0116`; id-routing.ts), if any. */
  resolveId(query: string): string | undefined {
    return this.router.resolve(query);
  }

  /** Whether some field indexes the term. */
  hasTerm(term: string): boolean {
    return this.store.bm25f.fields.some((f) => f.hasTerm(term));
  }

  /** The language a document was analyzed in (undefined: each word by its script, or not indexed). */
  languageOf(id: string): Language | undefined {
    // While the restored documents are undecoded (nothing changed since), the saved column answers.
    const column = this.columns;
    if (column && !documentsDecoded(this.db.data.docs)) {
      const internal = this.internalId(id);
      const code = internal >= 0 && internal < column.language.length ? column.language[internal] : 0;
      return code > 0 ? column.languages[code - 1] : undefined;
    }
    return (getByID(this.db, id) as IndexedDocument | undefined)?.lang;
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
    const column = this.columns;
    if (column && !documentsDecoded(this.db.data.docs)) {
      if (column.updated instanceof Uint8Array) {
        const list = unpack(column.updated);
        const size = column.language.length;
        // Not a list of dates, one per document (a bug: the file is signed): the documents are read.
        if (!Array.isArray(list) || list.length !== size || !list.every((n) => typeof n === 'number'))
          this.columns = null;
        else column.updated = list as number[];
      }
      if (this.columns) return (column.updated as number[])[internalId] ?? 0;
    }
    return (
      (this.db.documentsStore.get(this.db.data.docs, internalId as never) as IndexedDocument | undefined)
        ?.updated_ms ?? 0
    );
  }

  private markArchived(internalId: number, archived: boolean): void {
    if (!archived && internalId >= this.archived.length) return;
    this.archived = grownUint8(this.archived, internalId + 1);
    this.archived[internalId] = archived ? 1 : 0;
  }

  /** The archived documents and their weight, for the scorer; undefined when none is archived or it is off. */
  private demoted(): { ids: Uint8Array; weight: number } | undefined {
    const weight = this.settings.archivedWeight;
    return weight !== 1 && this.archived.length > 0 ? { ids: this.archived, weight } : undefined;
  }

  private score(
    groups: QueryTermGroup[],
    conjunctive: boolean,
    filter: Set<number> | undefined,
    keep?: Keep,
    demote = true,
    outside?: OutsideStats,
  ) {
    const { k1, b, fieldWeights, coordination, titleCoverage } = this.settings;
    return runBm25f(
      this.store,
      groups,
      { k1, b, weights: fieldWeights, coordination, titleCoverage },
      this.size,
      conjunctive,
      filter,
      keep,
      demote ? this.demoted() : undefined,
      outside,
    );
  }

  /**
   * Documents with `term` in a field of the bit mask `fields` (every field: undefined) that has a
   * weight: what the scorer counts as the term's document frequency, for another index's idf.
   */
  docFreq(term: string, fields: number | undefined): number {
    const state = this.store.bm25f;
    const lists = state.fields
      .map((f, i) => {
        const weighted = (this.settings.fieldWeights[state.fieldNames[i] as TextField] ?? 1) > 0;
        const allowed = fields === undefined || (fields & (1 << i)) !== 0;
        return { f, id: weighted && allowed ? f.termId(term) : -1 };
      })
      .filter((l) => l.id >= 0);
    if (lists.length <= 1) return lists.length ? lists[0].f.postCount[lists[0].id] : 0;
    const docs = new Set<number>();
    for (const { f, id } of lists)
      for (let j = f.postStart[id], end = j + 2 * f.postCount[id]; j < end; j += 2) docs.add(f.postData[j]);
    return docs.size;
  }

  /** Fields in which a word that begins an indexed word counts (tags and author names). */
  private readonly partialFields = fieldBits(['tags', 'author']);

  /**
   * "Did you mean": the query words no field indexes, each with the indexed term nearest to it (or
   * null) and one document holding that term (where the caller finds the word as it is written).
   */
  corrections(query: string): (Correction & { doc?: string })[] {
    return correctWords(this.analyzer.queryWords(query), this.vocabulary()).map((c) => {
      const field = c.term === null ? undefined : this.store.bm25f.fields.find((f) => f.hasTerm(c.term!));
      const id = field ? field.termId(c.term!) : -1;
      return field && id >= 0 && field.postCount[id] > 0
        ? { ...c, doc: this.externalId(field.postData[field.postStart[id]]) }
        : { ...c, term: null };
    });
  }

  /** Made once per index state (a restore or rebuild makes a new one); it remembers its tree walks. */
  private vocab?: { store: Bm25fIndexStore; state: Bm25fState; vocab: Vocabulary & SuggestVocabulary };

  private vocabulary(): Vocabulary & SuggestVocabulary {
    const store = this.store;
    const state = store.bm25f;
    if (this.vocab?.state !== state || this.vocab.store !== store)
      this.vocab = {
        store,
        state,
        vocab: indexVocabulary(
          state.fields,
          (i) => fieldTree(store, TEXT_FIELDS[i]),
          () => state.version,
        ),
      };
    return this.vocab.vocab;
  }

  private queryContext(
    filter: Set<number> | undefined,
    outside?: OutsideStats,
    knownElsewhere?: (term: string) => boolean,
  ): QueryContext {
    const vocab = this.vocabulary();
    const inFilter = (ids: Iterable<number>) => (filter ? [...ids].filter((d) => filter.has(d)) : [...ids]);
    return {
      words: (text) => this.analyzer.queryWords(text),
      sequences: (text) => this.analyzer.sequences(text),
      fieldMask: (field) =>
        field === undefined ? undefined : fieldBits([field === 'tags' ? 'tags' : (field as TextField)]),
      termGroup: (word, fields) => termGroup(word, fields, this.partialFields, vocab, knownElsewhere),
      prefixGroup: (prefix, fields) => prefixGroup(this.analyzer.fold(prefix), fields, vocab),
      // Undemoted: search() demotes the raw query's final scores once.
      score: (groups, conjunctive) => this.score(groups, conjunctive, filter, undefined, false, outside),
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
    for (const word of this.analyzer.queryWords(query)) {
      // A word in several languages counts once, as its best alternative.
      let best = 0;
      for (const term of word.alternatives) {
        const df = Math.max(0, ...state.fields.map((f) => f.docFreq(term)));
        if (df > 0) best = Math.max(best, idf(this.size, df));
      }
      sum += best * (this.settings.k1 + 1);
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
    const sortRecent = req.sort === 'recent' || !query;
    const routed = query && !sortRecent ? this.resolveId(query) : undefined;
    let docs: number[];
    let scores: number[];
    let masks: number[];
    let total: number | undefined;
    if (!query) {
      docs = filter ? [...filter] : this.allInternalIds();
      scores = docs.map(() => 0);
      masks = docs.map(() => 0);
    } else if (req.matchMode === 'raw') {
      const matches =
        evaluateQuery(
          parseRawQuery(query),
          this.queryContext(filter, req.outside, req.knownElsewhere),
          req.conjunctive ?? false,
        ) ?? new Map();
      docs = [...matches.keys()];
      const demoted = req.demoteArchived === false ? undefined : this.demoted();
      scores = docs.map((d) => matches.get(d)!.score * (demoted?.ids[d] === 1 ? demoted.weight : 1));
      masks = docs.map((d) => matches.get(d)!.mask);
    } else {
      const vocab = this.vocabulary();
      const groups = this.analyzer
        .queryWords(query)
        .map((word) => termGroup(word, undefined, this.partialFields, vocab, req.knownElsewhere));
      const proximity = this.settings.proximity > 0 && !sortRecent && groups.length > 1;
      // The page and the matches the proximity bonus could lift into it are all that can be shown,
      // unless every match is grouped, ordered by date, or joined by a routed id.
      const keep: Keep | undefined =
        sortRecent || req.groupBy || routed
          ? undefined
          : {
              best: offset + limit,
              slack: proximity ? 1 + this.settings.proximity : 1,
              atMost: Math.max(offset + limit, PROXIMITY_CANDIDATES),
            };
      const scored = this.score(
        groups,
        req.conjunctive ?? false,
        filter,
        keep,
        req.demoteArchived !== false,
        req.outside,
      );
      const plain = (a: number[] | ArrayLike<number>) => (Array.isArray(a) ? a : Array.from(a));
      docs = plain(scored.docs);
      scores = plain(scored.scores);
      masks = plain(scored.fieldMasks);
      total = scored.total;
      if (proximity) {
        rewardProximity(this.proximityFields(), this.analyzer.sequence(query), docs, scores, {
          weight: this.settings.proximity,
          candidates: PROXIMITY_CANDIDATES,
          shown: req.groupBy ? Infinity : offset + limit,
          sorted: keep !== undefined,
        });
      }
    }

    const updated = sortRecent ? docs.map((d) => this.updatedMs(d)) : undefined;
    // `a` ranks below `b`: by recency then score, or by score; ties by internal id (a stable order).
    const worse = (a: number, b: number) =>
      updated !== undefined && updated[a] !== updated[b]
        ? updated[a] < updated[b]
        : scores[a] < scores[b] || (scores[a] === scores[b] && docs[a] > docs[b]);
    total ??= docs.length;
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
    if (routed) {
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
    return storedInternalIds(this.db.data.docs);
  }

  private *knownPaths(): Iterable<string> {
    const all = this.db.documentsStore.getAll(this.db.data.docs) as Record<string, IndexedDocument>;
    for (const doc of Object.values(all)) if (doc.path) yield doc.path;
  }
}
