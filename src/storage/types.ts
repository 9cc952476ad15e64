/**
 * What an item is. `task`, `epic` and `resource` (any other text file) in every backlog; a Backlog.md
 * backlog adds its own kinds of document: `document` (docs/, readme.md), `decision`, `milestone`.
 */
export const ITEM_TYPES = ['task', 'epic', 'resource', 'document', 'decision', 'milestone'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

/**
 * Where a task stands in its backlog's life cycle, from the folder it is in: `active` (tasks/),
 * `completed` (Backlog.md's completed/), `archived` (archive/), `draft` (drafts/). Null for documents.
 */
export const TASK_STATES = ['active', 'completed', 'archived', 'draft'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const STATUSES = ['open', 'in_progress', 'blocked', 'done', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];

/** One file of the backlog, parsed. Values are kept as written, even when outside our schema. */
export interface BacklogItem {
  /** `TASK-0001` / `EPIC-0001` for tasks and epics (as written), `mcp://backlog/<path>` for resources. */
  id: string;
  type: ItemType;
  /** See TaskState; null for documents and resources. */
  state: TaskState | null;
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

/** `error`: the file could not be read as written; `warning`: read, but something in it is off; `info`: a note. */
export type DiagnosticLevel = 'error' | 'warning' | 'info';

/** Something about a file that did not fit: reported, never fixed behind the user's back. */
export interface Diagnostic {
  level: DiagnosticLevel;
  path: string;
  line: number | null;
  /** Machine-readable kind, e.g. `frontmatter_unparseable`, `invalid_status`, `duplicate_id`. */
  code: string;
  message: string;
}
