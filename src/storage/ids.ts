/**
 * Item ids as people write them: `TASK-0042`, `task-42`, `task 42`, `BACK-222.1`. One lookup key for
 * every spelling, used by storage (duplicate ids), search (id routing, id terms) and the service.
 */

/** `TASK-0042` -> `task-42`; `task-12.01` -> `task-12.1`. The same key for every spelling of an id. */
export function normalizeId(prefix: string, numbers: string): string {
  const parts = numbers.split('.').map((n) => String(Number.parseInt(n, 10)));
  return `${prefix.toLowerCase()}-${parts.join('.')}`;
}

const ID_SHAPE = /^([A-Za-z]{2,})[-_\s]*(\d+(?:\.\d+)*)$/;

/** The lookup key of an id: `TASK-0042`, `task-42` and `task 42` share one; anything else is lower-cased. */
export function idKey(id: string): string {
  const m = ID_SHAPE.exec(id.trim());
  return m ? normalizeId(m[1], m[2]) : id.trim().toLowerCase();
}
