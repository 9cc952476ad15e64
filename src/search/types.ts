import type { ItemType, TaskState } from '../storage/types.js';
import type { OutsideStats } from './score.js';

/** What the search index holds for one item. Everything but id/title/body is optional (BEIR corpora have only those). */
export interface SearchDocument {
  id: string;
  type?: ItemType;
  /** Where a task stands (active, completed, archived, draft); null for documents. */
  state?: TaskState | null;
  title: string;
  body: string;
  tags?: string[];
  author?: string | null;
  status?: string | null;
  parent_id?: string | null;
  /** Ids of the parent chain (parent, grandparent, ...), for `parent_id` filters that include descendants. */
  ancestors?: string[];
  path?: string;
  folder?: string;
  file_type?: string;
  /** ms since epoch; used by sort `recent`. */
  updated_ms?: number;
  /** Other searchable text (unknown frontmatter fields, assignee, references...). */
  extra?: string;
  /** The document's language as declared (frontmatter `lang`/`language`: `de`, `german`, ...); else detected. */
  language?: string;
}

/** Searchable text fields, in the order of their default weight. */
export const TEXT_FIELDS = ['title', 'tags', 'author', 'body', 'extra', 'headings'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** Filters, each taking one value or a list; all combine with AND. Values inside one list combine with OR. */
export interface SearchFilters {
  types?: ItemType[];
  status?: string[];
  /** Task states (active, completed, archived, draft); `none` matches the items that have no state (documents). */
  state?: (TaskState | 'none')[];
  /** The items themselves and all their descendants. */
  parent_id?: string[];
  tags?: string[];
  author?: string[];
  /** File paths or globs relative to the backlog root. */
  path?: string[];
  /** Folders relative to the root; matches everything beneath. */
  folder?: string[];
  file_type?: string[];
}

export interface SearchRequest {
  query: string;
  filters?: SearchFilters;
  sort?: 'relevant' | 'recent';
  limit?: number;
  offset?: number;
  /** Every query term must match (in any field). Default false: more matched terms rank higher. */
  conjunctive?: boolean;
  /**
   * Archived items' scores times SearchSettings.archivedWeight (default true). Hybrid asks for the words'
   * list without it and applies the weight once to the fused score.
   */
  demoteArchived?: boolean;
  /** `simple` (default): plain words, every other character literal. `raw`: the query language (query-parser.ts). */
  matchMode?: 'simple' | 'raw';
  /** Also group every match by this key: each group's count and its best `limit` hits (in one pass, no full sort). */
  groupBy?: 'type';
  /** Corpus statistics of other indexes counted in idf (a workspace search over several backlogs). */
  outside?: OutsideStats;
  /**
   * Whether another index searched with this one (a workspace search over several backlogs) has a term:
   * a query word one of them has is no typo, so it is not completed or typo-expanded here either (as one
   * index over all the files would not).
   */
  knownElsewhere?: (term: string) => boolean;
}

export interface SearchGroup {
  key: string;
  /** Matches in this group (all pages). */
  count: number;
  /** The group's best hits, ranked as the page is, at most `limit`. */
  hits: SearchHit[];
}

export interface SearchHit {
  id: string;
  score: number;
  /** Text fields in which at least one query term matched. */
  matched_fields: TextField[];
}

export interface SearchResponse {
  hits: SearchHit[];
  /** Number of matching documents before limit/offset. */
  total: number;
  /** With `groupBy`: the groups, ordered by their best hit. */
  groups?: SearchGroup[];
}

// ---- The whole search: what OramaSearchService.query takes and gives.

export const SEARCH_MODES = ['hybrid', 'bm25', 'semantic'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export const RELATIONS = ['parent', 'children', 'references'] as const;
export type Relation = (typeof RELATIONS)[number];

/** A document and its score in one retriever's list. */
export interface Scored {
  id: string;
  score: number;
}

/**
 * The vector half of hybrid search, as the search service sees it (embeddings/semantic-search.ts is
 * the implementation): lexical search never waits for it.
 */
export interface VectorRetriever {
  /** `ready` once every document is embedded; until then searches run bm25 and say why. */
  readonly state: 'off' | 'loading' | 'indexing' | 'ready' | 'failed' | 'incomplete';
  /** Why it is not ready, for a warning: "still being built (120/5692 chunks embedded)". */
  progress(): string;
  /**
   * When it is ready but holds part of the chunks (the first pass of a build, or cached vectors only):
   * how far it is, for a warning on each answer that used it; undefined when complete.
   */
  partial?(): string | undefined;
  /** Whether the model reads this query's language (an English-only model: not Russian, not French). */
  supports(query: string): boolean | Promise<boolean>;
  /** The `k` nearest documents by cosine, among those `allowed` passes. */
  search(query: string, k: number, allowed?: (id: string) => boolean): Promise<Scored[]>;
}

/** An item linked to another: its parent, a child, or a reference either way. */
export interface Neighbor {
  id: string;
  relation: Relation;
}

/** The links between documents, for related items (search/related.ts builds one from items). */
export interface Neighbors {
  neighbors(id: string, relations: ReadonlySet<Relation>): Neighbor[];
}

/** One search, validated: the query, filters, mode, paging, grouping and related items. */
export interface SearchQuery {
  /** The query as typed, trimmed, not empty. */
  text: string;
  matchMode: 'simple' | 'raw';
  filters: SearchFilters;
  sort: 'relevant' | 'recent';
  conjunctive: boolean;
  /** The mode asked for; default hybrid when the vector retriever is ready, else bm25. */
  mode?: SearchMode;
  limit: number;
  offset: number;
  groupBy?: 'type';
  /** Add items linked to the page's hits, up to `maxHops` links away. */
  related?: { maxHops: number; relations: readonly Relation[] };
  /** Add each result's lexical, vector and final score. */
  includeScores: boolean;
  /** SearchRequest.outside. */
  outside?: OutsideStats;
  /** SearchRequest.knownElsewhere. */
  knownElsewhere?: (term: string) => boolean;
  /**
   * Hybrid with the fixed vector share (HybridSettings.adaptive 'fixed') whatever the setting: a
   * workspace's search over several backlogs, whose scores are merged and must be on one scale.
   */
  fixedShare?: boolean;
}

export interface Snippet {
  /** The field the text comes from. */
  field: TextField;
  /** About 120 characters (SNIPPET_CHARS) of plain text around the best match. */
  text: string;
  /** Fields in which query terms matched. */
  matched_fields: TextField[];
}

export interface SearchResult {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  /** Where a task stands (active, draft, completed, archived, from its folder); null for documents. */
  state: TaskState | null;
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
  /**
   * In a search over several backlogs: the other versions of this document in other projects (the same
   * type and title, one body the beginning of the other), shown once here (docs/workspace.md).
   */
  also_in?: string[];
}

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

/** What OramaSearchService.query answers: ranked results with snippets, and what ran. */
export interface SearchOutcome {
  results: SearchResult[];
  total: number;
  /** The mode that actually ran. */
  mode: SearchMode;
  /** Offset of the next page, when there is one. */
  next_offset?: number;
  /** Something the caller should know, e.g. a requested mode that is not available. */
  warnings: string[];
  /**
   * Hybrid only: the vector list's share of the fused score for this query, i.e. how much meaning may
   * move a result (0: the words alone decide; HybridSettings.adaptive).
   */
  vector_weight?: number;
  /** When nothing matched: the query spelled as the index spells it ("did you mean"), if that finds something. */
  suggestions?: string[];
  groups?: ResultGroup[];
  related?: RelatedResult[];
}

/** What an engine can answer: the service checks these before it asks (docs/scaling.md maps them onto other engines). */
export interface EngineCapabilities {
  /** BM25-style ranking of words. */
  lexical: true;
  /** Ranking by meaning, and so `hybrid` and `semantic` modes (when a vector retriever is ready). */
  vectors: boolean;
  /** `match_mode: "raw"`: phrases, prefixes, AND/OR/NOT, field:term. */
  queryLanguage: boolean;
  /** Counts and the best results per group over every match. */
  grouping: boolean;
  /** Items linked to the hits, from a link graph. */
  related: boolean;
  /** The index saved as bytes and loaded back (a restart reads only what changed). */
  persistence: boolean;
}

/**
 * The seam between the service and a search engine: documents in, one request out. OramaSearchService
 * is the embedded engine; an engine that serves more documents than one process holds could stand in
 * behind this interface (docs/scaling.md).
 */
export interface SearchEngine {
  readonly capabilities: EngineCapabilities;
  /** Number of indexed documents. */
  readonly size: number;
  /** Replaces the whole index with `docs`. */
  build(
    docs: Iterable<SearchDocument>,
    opts?: { onProgress?: (done: number, total: number) => void },
  ): Promise<void>;
  /** Adds or replaces one document. */
  upsert(doc: SearchDocument): void;
  /** Removes a document; returns whether it was there. */
  remove(id: string): boolean;
  /** One search: ranked results with snippets, and what ran. */
  query(q: SearchQuery): Promise<SearchOutcome>;
}
