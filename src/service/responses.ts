/** What BacklogService answers: the shapes the library returns and every surface passes on. */
import type { SearchOutcome, SearchMode } from '../search/types.js';
import type { BacklogItem, ItemType, TaskState } from '../storage/types.js';
import type { FormatName, FormatVocabulary } from '../storage/formats/types.js';
import type { ItemSummary } from './summary.js';

export interface SearchResponse extends Omit<SearchOutcome, 'mode' | 'warnings'> {
  query: string;
  /** The mode that actually ran. */
  search_mode: SearchMode;
  took_ms: number;
  /** Something the caller should know, e.g. a requested mode that is not available. */
  warnings?: string[];
}

export interface ListResponse {
  results: ItemSummary[];
  total: number;
  counts_by_status: Record<string, number>;
  /** The backlog's statuses: the configured ones in board order, then any other in use (any case and spacing matches). */
  statuses: string[];
  next_offset?: number;
  /**
   * Without a `state` filter, list shows live items only (active tasks and documents); this counts, by
   * state, the items the other filters matched that it left out (`state: "all"` or a state shows them).
   */
  not_shown?: Partial<Record<TaskState, number>>;
}

/** How a backlog names things (BacklogService.vocabulary): its name, format, kinds, states, examples. */
export interface BacklogVocabulary extends FormatVocabulary {
  /** Backlog.md's `project_name`, else the folder that holds `backlog/`. */
  project: string;
  format: FormatName;
  /** Ids of this backlog, one per kind it has (a live task first). */
  example_ids: string[];
}

export type GetEntry =
  | { id: string; status: 'ok'; item: BacklogItem }
  | { id: string; status: 'error'; error: { code: string; message: string; hint: string } };

export interface ItemMetadata {
  id: string;
  type: ItemType;
  title: string;
  path: string;
  file_name: string;
  file_type: string;
  size: number;
  modified_at: string | null;
  indexed_at: string | null;
  frontmatter: Record<string, unknown>;
  links: { parent: string | null; children: string[]; references: string[] };
}
