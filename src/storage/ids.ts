/**
 * Item ids as people write them: `TASK-0042`, `task-42`, `task 42`, `BACK-222.1`, and statuses
 * (`In Progress`, `in_progress`). One lookup key for every spelling, used by storage (duplicate ids),
 * search (id routing, id terms, status filters) and the service.
 */

/** `TASK-0042` -> `task-42`; `task-12.01` -> `task-12.1`. The same key for every spelling of an id. */
export function normalizeId(prefix: string, numbers: string): string {
  const parts = numbers.split('.').map((n) => String(Number.parseInt(n, 10)));
  return `${prefix.toLowerCase()}-${parts.join('.')}`;
}

const ID_SHAPE = /^([A-Za-z]{2,})[-_\s]*(\d+(?:\.\d+)*)(@[\w-]+)?$/;

/**
 * The lookup key of an id: `TASK-0042`, `task-42` and `task 42` share one, and so do `BACK-569@archived`
 * and `back-0569@Archived` (a duplicate's qualified id); anything else is lower-cased.
 */
export function idKey(id: string): string {
  const m = ID_SHAPE.exec(id.trim());
  return m ? normalizeId(m[1], m[2]) + (m[3]?.toLowerCase() ?? '') : id.trim().toLowerCase();
}

/** A whole query written as one id, `TASK-12` or `back_72.1` (letters joined to the number). */
export function isIdQuery(text: string): boolean {
  return /^[A-Za-z]{2,}[-_]\d+(?:\.\d+)*$/.test(text.trim());
}

/**
 * The lookup key of a status: `In Progress`, `in progress`, `in_progress` and `IN-PROGRESS` share one
 * (`in progress`), so filters and counts do not depend on how a file spells it.
 */
export function statusKey(status: string): string {
  return status
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
}
