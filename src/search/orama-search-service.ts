/**
 * OramaSearchService: the search, in one place. It indexes documents with BM25F over Orama
 * (lexical-index.ts), asks a vector retriever for meaning (embeddings/semantic-search.ts, through the
 * VectorRetriever interface), fuses the two lists (normalize, then multiply: hybrid.ts, fusion.ts), routes
 * ids, groups, adds related items (related.ts), and builds each result with its snippet from what was kept
 * at index time (result-store.ts). `query()` answers one validated request; BacklogService.searchUnified
 * is the façade every surface calls.
 */
import {
  DEFAULT_HYBRID_SETTINGS,
  hybridRank,
  lexicalWeightFor,
  type HybridInput,
  type HybridSettings,
} from './hybrid.js';
import {
  LexicalIndex,
  DEFAULT_SEARCH_SETTINGS,
  type SavedRouting,
  type SearchSettings,
} from './lexical-index.js';
import { parseRawQuery, positiveText } from './query-parser.js';
import { findRelated } from './related.js';
import { closeEnough, swapDistance } from './suggest.js';
import { Background } from './background.js';
import type { RoutableDocument } from './id-routing.js';
import { pack, unpack, unpackAhead, Unread } from './packed.js';
import { isDamagedPart } from './orama-components.js';
import { UnreadableBytes } from '../storage/unread-bytes.js';
import { ResultStore } from './result-store.js';
import type { QueryBits } from './snippet.js';
import { isIdQuery } from '../storage/ids.js';
import { foldWord, idKey, type TextAnalyzer } from './tokenizer.js';
import type {
  EngineCapabilities,
  Neighbors,
  ResultGroup,
  Scored,
  SearchDocument,
  SearchFilters,
  SearchGroup,
  SearchHit,
  SearchMode,
  SearchOutcome,
  SearchQuery,
  SearchRequest,
  SearchResponse,
  SearchResult,
  SearchEngine,
  VectorRetriever,
} from './types.js';

export { DEFAULT_SEARCH_SETTINGS, type SearchSettings };

/** Candidates each retriever gives hybrid fusion. */
const HYBRID_CANDIDATES = 100;
/**
 * Searches a build or restore rehearses in the background, as many a tick as fit in REHEARSAL_SLICE_MS
 * (bench/warmup.ts: the first 350 real queries' CPU p95 went from 3.2-3.8x the settled p95 to 2.5-2.8x).
 */
const REHEARSALS = 200;
const REHEARSAL_SLICE_MS = 4;

/** A ranked hit on its way to a result: which retriever found it and with what raw scores. */
interface RankedHit extends SearchHit {
  lexical: number | null;
  vector: number | null;
  match: SearchResult['match'];
}

function lexicalHit(h: SearchHit): RankedHit {
  return {
    id: h.id,
    score: h.score,
    matched_fields: h.matched_fields,
    lexical: h.score,
    vector: null,
    match: 'lexical',
  };
}

/** A document only vector search found: its cosine is its score. */
function semanticHit(v: Scored): RankedHit {
  return { id: v.id, score: v.score, matched_fields: [], lexical: null, vector: v.score, match: 'semantic' };
}

export interface OramaSearchServiceOptions {
  /** Fusion and multipliers of hybrid search (DEFAULT_HYBRID_SETTINGS; docs/search.md). */
  hybrid?: Partial<HybridSettings>;
  /** The vector half; without one every search is bm25. */
  vectors?: VectorRetriever;
  /** The links between documents, for related items (built on demand by the caller). */
  neighbors?: () => Neighbors;
  /**
   * Prepare snippet bodies and proximity's word-pair filters in the background after a build or restore
   * (default true): later queries are faster. A process that answers one query and exits turns it off
   * (the CLI): its few results are prepared when asked for, with the same answers.
   */
  background?: boolean;
  /**
   * Prepare every snippet body before a save even with `background` off (`backlog-search index`: its
   * cache keeps every body for the next process, without the warm-up searches and proximity filters).
   */
  saveEveryBody?: boolean;
  /**
   * How the rehearsal runs one of its searches (bm25, 20 results): by default `query`; a service passes
   * its own request path (BacklogService.searchUnified), so that the options' reading and checks a real
   * request goes through are compiled too, not only the search.
   */
  rehearse?: (text: string) => Promise<unknown>;
}

/** A restore put off until something reads the index (see restoreLater). */
interface PendingRestore {
  bytes: Uint8Array;
  /** The documents, made when the restore is carried out (a process that never searches never makes them). */
  docs: () => SearchDocument[];
  unusable: (why: string) => void;
  byPosition?: DocumentsByPosition;
}

/**
 * The documents of a restore by position (in `docs()`'s order), each made when first read: their ids as a
 * column and their id routes as saved (IdRouter.saveRoutes of the same documents in the same order). A
 * restored one-shot makes the documents it shows only.
 */
export interface DocumentsByPosition {
  ids: readonly string[];
  /** Each id's position (the ids are distinct). */
  at: ReadonlyMap<string, number>;
  routes: Uint8Array;
  doc(i: number): SearchDocument;
}

export class OramaSearchService implements SearchEngine {
  readonly settings: SearchSettings;
  private readonly lexicalIndex: LexicalIndex;
  private readonly resultStore: ResultStore;
  private pending: PendingRestore | null = null;
  /**
   * The documents of the last restore, while its index may still hold bytes not read yet (unread-bytes.ts),
   * and whom to tell when those turn out malformed: the index is then built from the documents (fallBack).
   */
  private restoredFrom: { docs: () => SearchDocument[]; unusable: (why: string) => void } | null = null;
  private readonly rehearsal = new Background();
  private readonly hybridSettings: HybridSettings;
  private vectors: VectorRetriever | undefined;
  private readonly neighbors: (() => Neighbors) | undefined;
  private readonly rehearseOne: (text: string) => Promise<unknown>;

  get capabilities(): EngineCapabilities {
    return {
      lexical: true,
      vectors: this.vectors !== undefined,
      queryLanguage: true,
      grouping: true,
      related: this.neighbors !== undefined,
      persistence: true,
    };
  }

  constructor(settings: Partial<SearchSettings> = {}, options: OramaSearchServiceOptions = {}) {
    this.lexicalIndex = new LexicalIndex(settings);
    this.settings = this.lexicalIndex.settings;
    this.resultStore = new ResultStore(
      this.lexicalIndex.analyzer,
      (id) => this.lexical.languageOf(id),
      (term) => this.lexical.hasTerm(term),
    );
    this.lexical.background = this.results.background = options.background !== false;
    this.results.saveEvery = options.saveEveryBody === true;
    this.lexical.onReanalyzed = () => this.results.unprepare();
    this.hybridSettings = {
      ...DEFAULT_HYBRID_SETTINGS,
      ...options.hybrid,
      multipliers: { ...DEFAULT_HYBRID_SETTINGS.multipliers, ...options.hybrid?.multipliers },
    };
    this.vectors = options.vectors;
    this.neighbors = options.neighbors;
    this.rehearseOne =
      options.rehearse ??
      ((text) =>
        this.query({
          text,
          matchMode: 'simple',
          filters: {},
          sort: 'relevant',
          conjunctive: false,
          mode: 'bm25',
          limit: 20,
          offset: 0,
          includeScores: false,
        }));
  }

  // ----- The index: documents in, documents out.

  /** The lexical index, restored first if its restore was put off (restoreLater). */
  private get lexical(): LexicalIndex {
    this.settle();
    return this.lexicalIndex;
  }

  private get results(): ResultStore {
    this.settle();
    return this.resultStore;
  }

  /** The text analyzer; its languages are those of the restored index (so it restores a pending one). */
  get analyzer(): TextAnalyzer {
    return this.lexical.analyzer;
  }

  /** Number of indexed documents. */
  get size(): number {
    return this.lexical.size;
  }

  /** Replaces the whole index with `docs`, yielding to the event loop between batches. */
  async build(
    docs: Iterable<SearchDocument>,
    opts: { onProgress?: (done: number, total: number) => void } = {},
  ): Promise<void> {
    const all = [...docs];
    this.pending = null;
    this.restoredFrom = null;
    this.results.clear();
    for (const doc of all) this.results.put(doc);
    await this.lexical.build(all, opts);
    this.results.warm();
    this.rehearse();
  }

  /** Adds or replaces one document. */
  upsert(doc: SearchDocument): void {
    this.readRestored();
    this.lexical.upsert(doc);
    this.results.put(doc);
  }

  /** Removes a document; returns whether it was there. */
  remove(id: string): boolean {
    this.readRestored();
    this.results.remove(id);
    return this.lexical.remove(id);
  }

  /**
   * Before the first change to a restored index: the rest of its bytes read and checked, its saved parts
   * decoded (or the fallback).
   */
  private readRestored(): void {
    if (!this.restoredFrom) return;
    this.orFallBack(() => {
      this.lexicalIndex.readAll();
      this.lexicalIndex.decodeSaved();
    });
    this.restoredFrom = null;
  }

  /**
   * `run()`, or, when it meets bytes of the restored index that are malformed (UnreadableBytes: postings
   * read and checked when first looked up), the index built from the restore's documents and `run()` again.
   */
  private orFallBack<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      if (!this.fallBack(err)) throw err;
      return run();
    }
  }

  /** Builds the index from the last restore's documents when `err` is its bytes' fault; whether it did. */
  private fallBack(err: unknown): boolean {
    const from = this.restoredFrom;
    if (!(err instanceof UnreadableBytes || isDamagedPart(err)) || !from) return false;
    this.restoredFrom = null;
    const docs = from.docs();
    this.resultStore.clear();
    for (const doc of docs) this.resultStore.put(doc);
    this.lexicalIndex.buildNow(docs);
    from.unusable((err as Error).message);
    return true;
  }

  /**
   * The lexical index as bytes (see LexicalIndex.serialize) with the bodies prepared for snippets
   * (ResultStore.savePrepared: a restored process's first queries read them instead of making them);
   * the rest of the results is rebuilt from the documents.
   */
  async serialize(): Promise<Uint8Array> {
    this.settle();
    this.orFallBack(() => this.lexicalIndex.readAll());
    const lexical = await this.lexical.serialize();
    // Left unread by a restore (packed.ts Unread): its own parts say what to read.
    return pack({ lexical: new Unread(lexical), snippets: await this.resultStore.savePrepared() });
  }

  /**
   * Loads bytes from `serialize()`; `docs` are the same documents, for their result fields. `unusable`: told
   * when bytes of the index read later (a term's postings) are malformed, after the index was built from
   * `docs` instead.
   */
  restore(bytes: Uint8Array, docs: Iterable<SearchDocument> = [], unusable?: (why: string) => void): void {
    const all = [...docs];
    this.restoreFrom(
      bytes,
      all,
      () => {
        for (const doc of all) this.resultStore.put(doc);
      },
      () => all,
      unusable,
    );
  }

  /** `restore`'s steps; `put` fills the result store, `docs` makes the documents for a fallback. */
  private restoreFrom(
    bytes: Uint8Array,
    routable: readonly RoutableDocument[] | SavedRouting,
    put: () => void,
    docs: () => SearchDocument[],
    unusable?: (why: string) => void,
  ): void {
    this.pending = null;
    this.restoredFrom = null;
    const saved = unpack(bytes) as { lexical?: unknown; snippets?: unknown };
    // Bytes of the lexical index alone (an older layout) are handed over as they are: it refuses them.
    const lexical = saved.lexical instanceof Uint8Array ? saved.lexical : bytes;
    this.lexicalIndex.restore(lexical, 'routes' in routable || routable.length > 0 ? routable : undefined);
    this.resultStore.clear();
    put();
    if (lexical !== bytes) this.resultStore.restorePrepared(saved.snippets);
    if (unusable) {
      let made: SearchDocument[] | undefined;
      this.restoredFrom = { docs: () => (made ??= docs()), unusable };
    }
    this.resultStore.warm();
    this.rehearse();
  }

  /**
   * `restore`, put off until the index is first read: a process that only reads items (`get`) never
   * decodes it (issue #23). The restore then also checks that the index holds exactly `docs`; when it
   * throws or does not, the index is built from `docs` at once (the answer comes from the same
   * documents) and `unusable` is told why (the caller drops the cache).
   */
  restoreLater(
    bytes: Uint8Array,
    docs: () => SearchDocument[],
    unusable: (why: string) => void,
    /** The same documents by position, made when first read (the restore then makes none of them). */
    byPosition?: DocumentsByPosition,
  ): void {
    this.pending = { bytes, docs, unusable, byPosition };
  }

  /**
   * Parses what a restore of `bytes` (serialize's) and of saved id routes will parse, ahead of it, while
   * the process waits for something else (a one-shot's stat of its files): the restore takes the values.
   */
  readAhead(bytes: Uint8Array, routes?: Uint8Array): void {
    const saved = unpackAhead(bytes) as { lexical?: unknown } | undefined;
    if (saved?.lexical instanceof Uint8Array) unpackAhead(saved.lexical);
    if (routes) unpackAhead(routes);
  }

  /** Whether a restore put off by restoreLater is still to be carried out (nothing has read the index). */
  get restorePending(): boolean {
    return this.pending !== null;
  }

  /** Carries out a restore put off by restoreLater now (so that a query's time does not count it). */
  settle(): void {
    if (!this.pending) return;
    const pending = this.pending;
    const { bytes, unusable, byPosition } = pending;
    let made: SearchDocument[] | undefined;
    const docs = () => (made ??= pending.docs());
    this.pending = null;
    let why: string | null = null;
    try {
      let ids: readonly string[];
      if (byPosition) {
        ids = byPosition.ids;
        this.restoreFrom(
          bytes,
          { routes: byPosition.routes, ids },
          () => this.resultStore.putAllLater(byPosition.at, (i) => byPosition.doc(i)),
          docs,
          unusable,
        );
      } else {
        const all = docs();
        ids = all.map((d) => d.id);
        this.restore(bytes, all, unusable);
      }
      const unique: ReadonlySet<string> | ReadonlyMap<string, number> = byPosition?.at ?? new Set(ids);
      const indexed = this.lexicalIndex.documentIds();
      if (
        unique.size !== ids.length ||
        indexed.length !== unique.size ||
        !indexed.every((id) => unique.has(id))
      )
        why = 'its index and its items disagree';
    } catch (err) {
      why = (err as Error).message;
    }
    if (why === null) return;
    this.restoredFrom = null;
    const all = docs();
    this.resultStore.clear();
    for (const doc of all) this.resultStore.put(doc);
    this.lexicalIndex.buildNow(all);
    unusable(why);
  }

  /**
   * Runs searches made of the index's own titles in the background after a build or restore. The engine
   * compiles a function well only after it has run it many times: without this, the first few hundred
   * searches of a new process ran at 3-4x the settled p95 (issue #23). Answers do not change:
   * these searches keep nothing but what a search prepares anyway (snippet bodies, memoized analysis).
   */
  private rehearse(): void {
    if (!this.lexical.background || this.rehearsal.running) return;
    const ids = this.documentIds().filter((id) => this.results.has(id));
    const n = Math.min(REHEARSALS, ids.length);
    const texts: string[] = [];
    for (let i = 0; i < n; i++) {
      const words = this.results
        .fields(ids[Math.floor((i * ids.length) / n)])
        .title.split(/\s+/)
        .filter((w) => /\p{L}{2}/u.test(w));
      // Two to four words from the first or the second, as people type them.
      const text = words.slice(i % 2, (i % 2) + 2 + (i % 3)).join(' ');
      if (text) texts.push(text);
    }
    let next = 0;
    // A few milliseconds a tick: a real search waits for one slice at most.
    this.rehearsal.start(() => {
      const until = performance.now() + REHEARSAL_SLICE_MS;
      while (next < texts.length && performance.now() < until)
        void this.rehearseOne(texts[next++]).catch(() => undefined);
      return next >= texts.length;
    });
  }

  /**
   * Resolves when the languages of the last build are settled: a small backlog is searchable before the
   * language detector answered, in each script's default language (evaluations wait; searches never do).
   */
  languagesSettled(): Promise<void> {
    return this.lexical.languagesSettled();
  }

  /** Whether the restored index kept only some bodies prepared (a one-shot wrote it): the next save completes it. */
  get snippetsPartial(): boolean {
    return this.results.partial;
  }

  /** Resolves when the bodies are prepared for snippets after a build (benchmarks wait; searches never do). */
  snippetsReady(): Promise<void> {
    return this.results.whenWarm();
  }

  /**
   * Resolves when what a build or restore starts in the background is done: the languages settled, the
   * bodies prepared for snippets, the word-pair filters of proximity filled. A server gets there a
   * second or so after it opens; benchmarks of its steady state wait for it, searches never do.
   */
  async warmedUp(): Promise<void> {
    await this.languagesSettled();
    await Promise.all([this.results.whenWarm(), this.lexical.adjacencyReady(), this.rehearsal.done()]);
  }

  /** Every indexed document's id. */
  documentIds(): string[] {
    return this.lexical.documentIds();
  }

  /** External id for `TASK-42`, `task 0042`, ... when such an item is indexed. */
  resolveId(query: string): string | undefined {
    return this.lexical.resolveId(query);
  }

  /** Ids of the documents passing `filters`; null when the filters are empty (everything passes). */
  matchingIds(filters: SearchFilters): Set<string> | null {
    return this.lexical.matchingIds(filters);
  }

  /** The best BM25F score any document could reach for this query (see LexicalIndex.upperBound). */
  upperBound(query: string): number {
    return this.lexical.upperBound(query);
  }

  /** Whether some field indexes the term. */
  hasTerm(term: string): boolean {
    return this.lexical.hasTerm(term);
  }

  /** Documents with the term, as the scorer counts them (LexicalIndex.docFreq). */
  docFreq(term: string, fields: number | undefined): number {
    return this.orFallBack(() => this.lexical.docFreq(term, fields));
  }

  /** The lexical retriever alone: ranked ids and BM25F scores (evaluations and benchmarks use it). */
  search(req: SearchRequest): SearchResponse {
    return this.orFallBack(() => this.lexical.search(req));
  }

  /** Sets (or clears) the vector retriever. */
  setVectors(vectors: VectorRetriever | undefined): void {
    this.vectors = vectors;
  }

  // ----- The whole search.

  /**
   * The query with each word the index does not have replaced by the nearest word it has (as a
   * document writes it), when that query finds something under the same filters.
   */
  private didYouMean(request: SearchRequest): string[] {
    const spelled = new Map<string, string>();
    for (const c of this.lexical.corrections(request.query)) {
      // The spelling nearest to what was typed (`sequnece` -> sequence, not sequences), checked again
      // as written: a stem can be near a word its spellings are not (`medicine` and `median`).
      const spelling = this.results
        .spellingsOf(c.doc ?? '', c.term ?? '')
        .filter((s) => closeEnough(c.word, s) || s.startsWith(c.word))
        .sort((a, b) => swapDistance(c.word, a) - swapDistance(c.word, b))[0];
      // A word the backlog has nothing near: the query is about something else, not misspelt.
      if (spelling === undefined) return [];
      spelled.set(c.word, spelling);
    }
    if (spelled.size === 0) return [];
    let text = '';
    let at = 0;
    for (const run of this.analyzer.runs(request.query)) {
      const replacement = spelled.get(foldWord(request.query.slice(run.start, run.end)));
      if (replacement === undefined) continue;
      text += request.query.slice(at, run.start) + replacement;
      at = run.end;
    }
    text += request.query.slice(at);
    return this.lexical.search({ ...request, query: text, limit: 1, offset: 0 }).total > 0 ? [text] : [];
  }

  /** The mode a search runs in when it does not ask for one. */
  defaultMode(): SearchMode {
    return this.vectors?.state === 'ready' ? 'hybrid' : 'bm25';
  }

  /**
   * One search: picks the mode (bm25 until the vectors are ready, and for queries the model cannot
   * read), retrieves, fuses, routes ids, pages, groups, adds related items, and builds the results.
   */
  async query(q: SearchQuery): Promise<SearchOutcome> {
    try {
      return await this.answer(q);
    } catch (err) {
      // A term's postings in the restored bytes were malformed: answered from the index built anew.
      if (!this.fallBack(err)) throw err;
      return this.answer(q);
    }
  }

  private async answer(q: SearchQuery): Promise<SearchOutcome> {
    const positive = q.matchMode === 'raw' ? positiveText(parseRawQuery(q.text)) : q.text;
    const warnings: string[] = [];
    const vectors = this.vectors?.state === 'ready' ? this.vectors : undefined;
    let mode: SearchMode = q.mode ?? (vectors ? 'hybrid' : 'bm25');
    // Hybrid is the default once the vectors are ready; until then every answer says why it is bm25.
    if (!q.mode && !vectors && this.vectors && this.vectors.state !== 'off')
      warnings.push(`ran bm25: the semantic index is ${this.vectors.progress()}`);
    if (mode !== 'bm25' && !vectors) {
      warnings.push(
        `mode "${mode}" needs embeddings; the semantic index is ${this.vectors?.progress() ?? 'off (no embedding provider)'}; ran bm25`,
      );
      mode = 'bm25';
    } else if (mode !== 'bm25' && !(await vectors!.supports(positive))) {
      // Said also when hybrid was only the default: the answer is not what the caller would expect.
      warnings.push('the embedding model is English-only and this query is not; ran bm25');
      mode = 'bm25';
    }
    // Words that carry no meaning of their own (stop-words, punctuation) find nothing, by words or by
    // meaning: a model asked for "the of and" would answer with whatever is nearest.
    const terms = this.analyzer.queryTerms(positive);
    if (terms.length === 0 && q.matchMode === 'simple')
      return {
        results: [],
        total: 0,
        mode,
        warnings: [...warnings, `nothing to search for: "${q.text}" has only stop-words or punctuation`],
        ...(q.groupBy ? { groups: [] } : {}),
      };
    const request: SearchRequest = {
      query: q.text,
      filters: q.filters,
      sort: q.sort,
      conjunctive: q.conjunctive,
      matchMode: q.matchMode,
      outside: q.outside,
      knownElsewhere: q.knownElsewhere,
    };
    let ranked: RankedHit[];
    let total: number;
    let indexGroups: SearchGroup[] | undefined;
    let vectorWeight: number | undefined;

    if (mode === 'bm25') {
      // The index counts the groups and ranks each in the same pass as the page.
      const found = this.lexical.search({ ...request, limit: q.limit, offset: q.offset, groupBy: q.groupBy });
      // bm25 is words only: never a result by meaning, however few the words found.
      ranked = found.hits.map(lexicalHit);
      total = found.total;
      indexGroups = found.groups;
    } else {
      const depth = Math.max(HYBRID_CANDIDATES, q.offset + q.limit);
      // The query is embedded in a worker thread: search the words while it runs.
      const nearest = vectors!.search(positive, depth, this.allowed(q.filters));
      let lexical: SearchResponse = { hits: [], total: 0 };
      try {
        if (mode === 'hybrid')
          lexical = this.lexical.search({
            ...request,
            sort: 'relevant',
            limit: depth,
            offset: 0,
            demoteArchived: false,
          });
      } catch (err) {
        nearest.catch(() => undefined);
        throw err;
      }
      let vector = await nearest;
      const partial = vectors!.partial?.();
      if (partial) warnings.push(partial);
      // An id that no item has is near nothing. Otherwise nearest in meaning is a match only when it is
      // near enough: in semantic mode every hit is found by meaning alone; hybrid.ts applies the same
      // floor (semanticOnlyFloor) to the hits no word matched.
      if (isIdQuery(q.text) && !this.lexical.resolveId(q.text)) vector = [];
      if (mode === 'semantic')
        vector = vector.filter((v) => v.score >= this.hybridSettings.semanticOnlyFloor);
      // A boolean question (raw syntax, or every word required) is answered by the words; meaning
      // only re-ranks those answers, it does not add documents the query excludes.
      if (mode === 'hybrid' && (q.matchMode === 'raw' || q.conjunctive)) {
        const matched = new Set(lexical.hits.map((h) => h.id));
        vector = vector.filter((v) => matched.has(v.id));
      }
      if (mode === 'semantic') ranked = vector.map(semanticHit);
      else ({ ranked, vectorWeight } = this.fuse(q.text, positive, lexical.hits, vector, q.fixedShare));
      total =
        mode === 'semantic'
          ? ranked.length
          : lexical.total + ranked.filter((h) => h.match === 'semantic').length;
      if (q.sort === 'recent') ranked.sort((a, b) => this.updatedMs(b.id) - this.updatedMs(a.id));
      const routed = this.lexical.resolveId(q.text);
      const at = routed ? ranked.findIndex((h) => h.id === routed) : -1;
      if (at > 0 && q.sort !== 'recent') ranked.unshift(...ranked.splice(at, 1));
    }

    // bm25 asked the index for the page itself.
    const page = mode === 'bm25' ? ranked : ranked.slice(q.offset, q.offset + q.limit);
    let suggestions: string[] = [];
    if (total === 0) {
      suggestions = q.matchMode === 'simple' ? this.didYouMean(request) : [];
      warnings.push(
        `nothing matched "${q.text.length > 60 ? `${q.text.slice(0, 59)}…` : q.text}"${suggestions.length ? `; did you mean ${suggestions.map((t) => `"${t}"`).join(' or ')}?` : ''}`,
      );
    } else if (mode !== 'bm25' && !ranked.some((h) => h.match !== 'semantic'))
      warnings.push('no item contains these words; the results are nearest in meaning (match: "semantic")');
    const queryTerms = new Set(this.analyzer.matchTerms(positive));
    // From here on, synchronous: the snippets read the query's terms marked once for the whole answer.
    return this.results.withQuery(queryTerms, (bits) => {
      const toResult = (hit: RankedHit) => this.toResult(hit, bits, queryTerms, q.includeScores);
      const outcome: SearchOutcome = { results: page.map(toResult), total, mode, warnings };
      if (vectorWeight !== undefined) outcome.vector_weight = Number(vectorWeight.toFixed(4));
      if (suggestions.length) outcome.suggestions = suggestions;
      if (q.offset + page.length < total) outcome.next_offset = q.offset + page.length;
      if (q.groupBy)
        outcome.groups = indexGroups
          ? indexGroups.map((g) => ({
              key: g.key,
              count: g.count,
              results: g.hits.map((h) => toResult(lexicalHit(h))),
            }))
          : this.groupByType(ranked, q.limit, toResult);
      if (q.related && this.neighbors) {
        // At most max(limit, 10): enough context for a short page, bounded for an agent's budget.
        const related = findRelated(page, this.neighbors(), q.related.maxHops, new Set(q.related.relations));
        outcome.related = related.slice(0, Math.max(q.limit, 10)).map((r) => ({
          ...toResult({
            id: r.id,
            score: r.score,
            matched_fields: [],
            lexical: null,
            vector: null,
            match: 'related',
          }),
          distance: r.distance,
          via: r.via,
          source: r.source,
          relation: r.relation,
        }));
      }
      return outcome;
    });
  }

  /**
   * What `query` answers in bm25 for hits `search` already ranked with the same text, match mode and
   * filters: their results (snippets and all) and the warnings, without ranking again. A workspace ranks
   * every backlog, merges the lists, then builds only the page's results (src/workspace/workspace.ts).
   */
  resultsFor(
    q: Pick<SearchQuery, 'text' | 'matchMode' | 'mode' | 'includeScores'>,
    hits: SearchHit[],
  ): { results: SearchResult[]; warnings: string[] } {
    const warnings: string[] = [];
    // As query: a search that asked for no mode says why it ran bm25.
    if (!q.mode && this.vectors && this.vectors.state !== 'ready' && this.vectors.state !== 'off')
      warnings.push(`ran bm25: the semantic index is ${this.vectors.progress()}`);
    const positive = q.matchMode === 'raw' ? positiveText(parseRawQuery(q.text)) : q.text;
    if (q.matchMode === 'simple' && this.analyzer.queryTerms(positive).length === 0)
      return {
        results: [],
        warnings: [...warnings, `nothing to search for: "${q.text}" has only stop-words or punctuation`],
      };
    const queryTerms = new Set(this.analyzer.matchTerms(positive));
    const results = this.results.withQuery(queryTerms, (bits) =>
      hits.map((h) => this.toResult(lexicalHit(h), bits, queryTerms, q.includeScores)),
    );
    return { results, warnings };
  }

  /** Hybrid: both lists normalized, fused and multiplied (hybrid.ts); and the vector list's share for this query. */
  private fuse(
    text: string,
    positive: string,
    lexical: SearchHit[],
    vector: Scored[],
    fixedShare = false,
  ): { ranked: RankedHit[]; vectorWeight: number } {
    const fields = new Map(lexical.map((h) => [h.id, h.matched_fields]));
    const routed = this.lexical.resolveId(text);
    const input: HybridInput = {
      lexical: lexical.map((h) => ({ id: h.id, score: h.score })),
      vector,
      lexicalUpperBound: this.lexical.upperBound(positive),
      queryTerms: this.analyzer.queryTerms(positive),
      queryIdKey: routed ? idKey(routed) : undefined,
      facts: (id) => this.results.facts(id, idKey),
      archivedWeight: this.lexical.settings.archivedWeight,
    };
    const settings: HybridSettings = fixedShare
      ? { ...this.hybridSettings, adaptive: 'fixed' }
      : this.hybridSettings;
    const fused = hybridRank(input, settings);
    const ranked: RankedHit[] = fused.map((h) => ({
      id: h.id,
      score: h.score,
      matched_fields: fields.get(h.id) ?? [],
      lexical: h.lexical,
      vector: h.vector,
      match: h.lexical === null ? 'semantic' : h.vector === null ? 'lexical' : 'both',
    }));
    return { ranked, vectorWeight: 1 - lexicalWeightFor(input, settings) };
  }

  /** The filters as a predicate on ids for the vector retriever (undefined: everything passes). */
  private allowed(filters: SearchFilters): ((id: string) => boolean) | undefined {
    const ids = this.lexical.matchingIds(filters);
    return ids ? (id) => ids.has(id) : undefined;
  }

  private updatedMs(id: string): number {
    return this.results.has(id) ? this.results.fields(id).updatedMs : 0;
  }

  /** Groups ranked hits by type (their order kept inside each group); groups ordered by their best hit. */
  private groupByType(
    hits: RankedHit[],
    limit: number,
    toResult: (h: RankedHit) => SearchResult,
  ): ResultGroup[] {
    const groups = new Map<string, RankedHit[]>();
    for (const h of hits) {
      const key = this.results.fields(h.id).type;
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

  private toResult(
    hit: RankedHit,
    bits: QueryBits,
    queryTerms: ReadonlySet<string>,
    includeScores: boolean,
  ): SearchResult {
    const f = this.results.fields(hit.id);
    const result: SearchResult = {
      id: f.id,
      type: f.type,
      title: f.title,
      status: f.status,
      state: f.state,
      parent_id: f.parent_id,
      path: f.path,
      snippet: this.results.snippet(hit.id, bits, queryTerms, hit.matched_fields),
      matched_fields: hit.matched_fields,
      match: hit.match,
    };
    if (includeScores) {
      const round = (n: number | null) => (n === null ? null : Number(n.toFixed(4)));
      result.score = round(hit.score)!;
      result.scores = { lexical: round(hit.lexical), vector: round(hit.vector), final: round(hit.score)! };
    }
    return result;
  }
}
