import type { z as Zod } from 'zod';
import { STATUSES } from './types.js';

/** Task and epic ids as we write them: `TASK-0001`, `EPIC-0001`. */
export const ITEM_ID = /^(TASK|EPIC)-\d{4,}$/;
export const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;

/**
 * The strict frontmatter of a task or epic: what `backlog_create` / `backlog_update` write.
 * On read it is only checked: a file that does not fit is flagged in diagnostics and kept as written.
 * Made on first use: a process that reads the backlog from its cache parses no file.
 */
function makeTaskFrontmatterSchema(z: typeof Zod) {
  const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not an ISO 8601 date');
  return z
    .object({
      id: z.string().regex(ITEM_ID, 'expected TASK-0001 or EPIC-0001'),
      title: z.string().min(1),
      type: z.enum(['task', 'epic']),
      status: z.enum(STATUSES),
      parent_id: z.string().regex(ITEM_ID, 'expected TASK-0001 or EPIC-0001').nullable().optional(),
      tags: z.array(z.string()).optional(),
      author: z.string().nullable().optional(),
      assignee: z.string().nullable().optional(),
      priority: z.enum(PRIORITIES).nullable().optional(),
      references: z.array(z.string()).optional(),
      created_at: isoDate.optional(),
      updated_at: isoDate.optional(),
    })
    .passthrough();
}

let zod: typeof Zod | undefined;
let made: ReturnType<typeof makeTaskFrontmatterSchema> | undefined;

/**
 * Loads zod for `taskFrontmatterSchema` (issue #23: zod is 370 KB of code, and a command that answers
 * from the cache parses and writes no file). Whatever parses or writes a task file awaits it first:
 * loadFile (storage/backlog-store.ts) and the service's writes.
 */
export async function loadTaskSchema(): Promise<void> {
  zod ??= (await import('zod')).z;
}

export function taskFrontmatterSchema(): ReturnType<typeof makeTaskFrontmatterSchema> {
  if (!zod) throw new Error('taskFrontmatterSchema() before loadTaskSchema()');
  return (made ??= makeTaskFrontmatterSchema(zod));
}

export type TaskFrontmatter = Zod.infer<ReturnType<typeof taskFrontmatterSchema>>;

/** Frontmatter names other tools use for our fields (Backlog.md among them), read as ours. */
export const FIELD_ALIASES: Record<string, string[]> = {
  tags: ['tags', 'labels'],
  author: ['author', 'reporter'],
  parent_id: ['parent_id', 'parent', 'parent_task_id'],
  references: ['references', 'dependencies'],
  created_at: ['created_at', 'created_date', 'created'],
  updated_at: ['updated_at', 'updated_date', 'updated'],
};
