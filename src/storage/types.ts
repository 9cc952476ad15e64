export const ITEM_TYPES = ['task', 'epic', 'resource'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export const STATUSES = ['open', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];

/** One file of the backlog, parsed. Values are kept as written, even when outside our schema. */
export interface BacklogItem {
  /** `TASK-0001` / `EPIC-0001` for tasks and epics (as written), `mcp://backlog/<path>` for resources. */
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  tags: string[];
  author: string | null;
  assignee: string | null;
  priority: string | null;
  /** Ids or URLs from frontmatter `references`. */
  references: string[];
  created_at: string | null;
  updated_at: string | null;
  /** The markdown body (or the whole text for non-markdown resources). */
  body: string;
  /** Path relative to the backlog root, with `/` separators. */
  path: string;
  /** Folder of `path` relative to the root (`''` for the root itself). */
  folder: string;
  /** Extension without the dot, lower-case (`md`, `json`, ...). */
  file_type: string;
  size: number;
  /** File modification time, ms since the epoch. */
  mtime_ms: number;
  /** The whole frontmatter as parsed, unknown fields included. */
  frontmatter: Record<string, unknown>;
  /**
   * Set when the body is over the words budget (Limits.maxWordsPerFile): only its first
   * `searchable_chars` characters are indexed and embedded; `body` stays whole for reading.
   */
  searchable_chars?: number;
}

/** The part of the body that search and embeddings see (see `searchable_chars`). */
export function searchableBody(item: BacklogItem): string {
  return item.searchable_chars === undefined ? item.body : item.body.slice(0, item.searchable_chars);
}

export type DiagnosticLevel = 'error' | 'warning';

/** Something about a file that did not fit: reported, never fixed behind the user's back. */
export interface Diagnostic {
  level: DiagnosticLevel;
  path: string;
  line: number | null;
  /** Machine-readable kind, e.g. `frontmatter_unparseable`, `invalid_status`, `duplicate_id`. */
  code: string;
  message: string;
}
