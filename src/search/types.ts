import type { ItemType } from '../storage/types.js';

/** What the search index holds for one item. Everything but id/title/body is optional (BEIR corpora have only those). */
export interface SearchDocument {
  id: string;
  type?: ItemType;
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
}

/** Searchable text fields, in the order of their default weight. */
export const TEXT_FIELDS = ['title', 'tags', 'author', 'body', 'extra'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** Filters, each taking one value or a list; all combine with AND. Values inside one list combine with OR. */
export interface SearchFilters {
  types?: ItemType[];
  status?: string[];
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
  /** `simple` (default): plain words, every other character literal. `raw`: the query language (query-parser.ts). */
  matchMode?: 'simple' | 'raw';
  /** Also group every match by this key: each group's count and its best `limit` hits (in one pass, no full sort). */
  groupBy?: 'type';
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
