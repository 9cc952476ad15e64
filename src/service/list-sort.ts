import { statusKey } from '../storage/ids.js';
import type { BacklogItem } from '../storage/types.js';

/**
 * The orders `list` knows. `updated` (the default; `recent` is its older name) and `created` put the
 * newest first; `id` and `title` go A to Z (numbers in ids by value: TASK-2 before TASK-10); `priority`
 * goes critical, high, medium, low, then anything else; `status` follows the backlog's statuses (the
 * board's order in Backlog.md). Ties keep the most recently updated first; items without the key go last.
 */
export const LIST_SORTS = ['updated', 'recent', 'created', 'id', 'title', 'priority', 'status'] as const;
export type ListSort = (typeof LIST_SORTS)[number];

const PRIORITY_ORDER = ['critical', 'high', 'medium', 'low'];
let made: Intl.Collator | undefined;
/** Made on first use: loading the collation data costs a start ~10 ms that only a sort needs. */
const collator = {
  compare: (a: string, b: string) =>
    (made ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' })).compare(a, b),
};

/** `items` (already most recently updated first) in the order `sort` names; a new array. */
export function sortItems(items: BacklogItem[], sort: ListSort, statuses: string[]): BacklogItem[] {
  const rank = (list: string[], value: string | null) => {
    const at = value === null ? -1 : list.indexOf(value);
    return at === -1 ? list.length + (value === null ? 1 : 0) : at;
  };
  const statusOrder = statuses.map(statusKey);
  const by: Record<ListSort, ((a: BacklogItem, b: BacklogItem) => number) | null> = {
    updated: null,
    recent: null,
    created: (a, b) => createdMs(b) - createdMs(a),
    id: (a, b) => collator.compare(a.id, b.id),
    title: (a, b) => collator.compare(a.title, b.title) || collator.compare(a.id, b.id),
    priority: (a, b) =>
      rank(PRIORITY_ORDER, a.priority?.toLowerCase() ?? null) -
      rank(PRIORITY_ORDER, b.priority?.toLowerCase() ?? null),
    status: (a, b) =>
      rank(statusOrder, a.status === null ? null : statusKey(a.status)) -
      rank(statusOrder, b.status === null ? null : statusKey(b.status)),
  };
  const compare = by[sort];
  // Array.prototype.sort is stable: equal keys keep the incoming (most recent first) order.
  return compare ? [...items].sort(compare) : items;
}

/** `created_at` in ms; items without one (or with a date that does not parse) sort last. */
function createdMs(item: BacklogItem): number {
  return Date.parse(item.created_at ?? '') || -Infinity;
}
