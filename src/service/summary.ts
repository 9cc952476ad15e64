import type { BacklogItem, ItemType, TaskState } from '../storage/types.js';

/** The short form of an item that lists and write results return. */
export interface ItemSummary {
  id: string;
  type: ItemType;
  title: string;
  status: string | null;
  parent_id: string | null;
  path: string;
  tags: string[];
  updated_at: string | null;
  created_at: string | null;
  /** Backlog.md: active, completed, archived or draft (the task's folder); null for documents. */
  state: TaskState | null;
}

export function summarize(item: BacklogItem): ItemSummary {
  return {
    id: item.id,
    type: item.type,
    title: item.title,
    status: item.status,
    parent_id: item.parent_id,
    path: item.path,
    tags: item.tags,
    updated_at: item.updated_at,
    created_at: item.created_at,
    state: item.state,
  };
}

/**
 * The label's note for an item that is not live: `archived`, `draft`, `completed`; '' for active tasks
 * and for documents. Every text surface shows it, so archived work never reads as open.
 */
export function stateNote(state: TaskState | null | undefined): string {
  return state && state !== 'active' ? state : '';
}

/**
 * `task/In Progress, archived`, `epic/open`, `document`: the bracketed label of a text line. `shortTask`:
 * a task's label is its status alone (`In Progress, archived`), where the id already says it is a task.
 */
export function kindLabel(
  x: { type: string; status: string | null; state?: TaskState | null },
  shortTask = false,
): string {
  const note = stateNote(x.state);
  const kind = !x.status ? x.type : shortTask && x.type === 'task' ? x.status : `${x.type}/${x.status}`;
  return note ? `${kind}, ${note}` : kind;
}
