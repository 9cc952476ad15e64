/**
 * The shapes of the HTTP API's answers, as far as the viewer reads them. Declared here rather than
 * imported from the server (whose type graph pulls in Node-only code); `test/viewer-types.test.ts`
 * checks at compile time that the server's types still provide every field listed here.
 */
export type ItemType = 'task' | 'epic' | 'resource' | 'document' | 'decision' | 'milestone';

export interface ItemSummary {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  /** Relative to the backlog root. */
  path: string;
  tags: string[];
  updated_at: string | null;
  created_at: string | null;
  /** Backlog.md: active, completed, archived or draft (from the task's folder); null for documents. */
  state: string | null;
  /** Its project, when the server serves several backlogs (the id is then qualified: `demo:TASK-0001`). */
  project?: string;
}

export interface Snippet {
  field: string;
  text: string;
  matched_fields: string[];
}

export interface SearchResult {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  path: string;
  snippet: Snippet;
  matched_fields: string[];
  /** Where the task stands (active, draft, completed, archived); null for documents. */
  state: string | null;
  /** Its project, when the server serves several backlogs. */
  project?: string;
  /** The same document in other projects, shown as this one hit (qualified ids: `api:TASK-0001`). */
  also_in?: string[];
}

export interface SearchResponse {
  results: SearchResult[];
  total: number;
  query: string;
  /** The mode that ran: bm25, hybrid or semantic. */
  search_mode: string;
  took_ms: number;
  next_offset?: number;
  warnings?: string[];
  /** "Did you mean": other queries worth trying when nothing matched (absent from older servers). */
  suggestions?: string[];
}

export interface ListResponse {
  results: ItemSummary[];
  total: number;
  counts_by_status: Record<string, number>;
  /** The backlog's statuses: the configured ones in board order, then any other in use. */
  statuses: string[];
  next_offset?: number;
  /** Without a `state` filter: the items, by state, that the other filters matched and the default left out. */
  not_shown?: Partial<Record<string, number>>;
}

export interface Item {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  tags: string[];
  author: string | null;
  assignee: string | null;
  priority: string | null;
  references: string[];
  created_at: string | null;
  updated_at: string | null;
  body: string;
  path: string;
  file_type: string;
  state: string | null;
  /** Its project, when the server serves several backlogs. */
  project?: string;
}

export interface ItemMetadata {
  id: string;
  path: string;
  size: number;
  modified_at: string | null;
  links: { parent: string | null; children: string[]; references: string[] };
}

/** GET /tasks/:id and GET /resources/<path>. */
export interface ItemDetailResponse {
  item: Item & { uri: string };
  metadata: ItemMetadata;
  parent: ItemSummary | null;
  children: ItemSummary[];
}
