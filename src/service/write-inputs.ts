/**
 * The inputs of the writes: strict zod schemas (an unknown key is an error; the MCP tools and the HTTP
 * API use them), their validation errors with a hint naming the field, and what a write needs from the
 * backlog (WriteTarget: BacklogService gives it, and nothing here imports the service back).
 */
import { z } from 'zod';
import { BacklogError, errors } from '../errors.js';
import { MAX_FILE_BYTES } from '../storage/backlog-store.js';
import type { BacklogFormat } from '../storage/formats/detect.js';
import { statusKey } from '../storage/ids.js';
import { taskFrontmatterSchema } from '../storage/schema.js';
import type { BacklogItem } from '../storage/types.js';
import { described, oneOrMany, toBacklogError } from './options.js';
import type { ItemSummary } from './summary.js';

/** What a write needs from the backlog (BacklogService gives it; nothing here imports the service). */
export interface WriteTarget {
  readonly dir: string;
  /** How the backlog's files are written: its format, statuses, id prefix. */
  readonly format: BacklogFormat;
  ids(): string[];
  resolve(ref: string): string | undefined;
  /** The item an id, URI or path refers to; NOT_FOUND otherwise. */
  get(ref: string): BacklogItem;
  children(id: string): string[];
  /** Re-reads one file into the index; resolves to the item as indexed (null when it is not an item). */
  applyFile(relPath: string): Promise<BacklogItem | null>;
  removeFile(relPath: string): boolean;
}

// ---------------------------------------------------------------------------------------------
// Input schemas (strict: an unknown key is an error). The MCP tools and the HTTP API use these.

export const RESOURCE_WRITE_MODES = ['create', 'overwrite', 'append', 'replace'] as const;

/**
 * The write tools' input schemas, made on first use (writeSchemas): zod builds each one at definition,
 * and a one-shot read (search, get, list) would pay ~10 ms of its start for schemas it never uses.
 */
function makeWriteSchemas() {
  const FIELD_NAME = /^[A-Za-z_][\w-]*$/;
  const extraValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);
  const extraFields = z
    .record(
      z.string().regex(FIELD_NAME, 'expected a plain frontmatter key (letters, digits, _ and -)'),
      extraValue,
    )
    .describe('other frontmatter fields, e.g. {"milestone": "v2"}; null removes a field (update)');
  const list = (what: string) =>
    described(oneOrMany(z.string()), `${what}: a list or a comma-separated string`);

  const patchShape = {
    title: z.string().trim().min(1).max(300).describe('one-line title'),
    status: z
      .string()
      .trim()
      .min(1)
      .describe("one of the backlog's statuses, any case and spacing (backlog_list lists them)"),
    parent_id: z
      .string()
      .trim()
      .min(1)
      .nullable()
      .describe('id of the parent epic or task, e.g. EPIC-0001 (null: no parent)'),
    tags: list('tags'),
    author: z.string().trim().min(1).nullable(),
    assignee: z.string().trim().min(1).nullable(),
    priority: z.string().trim().min(1).nullable().describe('low, medium, high (native also critical)'),
    references: list('ids or URLs this item refers to'),
  };

  const create = z
    .object({
      type: z.enum(['task', 'epic']).default('task').describe('task (default) or epic'),
      title: patchShape.title,
      status: patchShape.status.optional().describe("default: the backlog's default status"),
      parent_id: patchShape.parent_id.optional(),
      tags: z.optional(patchShape.tags),
      author: patchShape.author.optional(),
      assignee: patchShape.assignee.optional(),
      priority: patchShape.priority.optional(),
      references: z.optional(patchShape.references),
      body: z.string().max(MAX_FILE_BYTES).default('').describe('markdown body'),
      fields: extraFields.optional(),
    })
    .strict();

  const update = z
    .object({
      id: z.string().trim().min(1).describe('the task or epic to change, e.g. TASK-0001'),
      title: patchShape.title.optional(),
      type: z.enum(['task', 'epic']).optional(),
      status: patchShape.status.optional(),
      parent_id: patchShape.parent_id.optional(),
      tags: z.optional(z.nullable(patchShape.tags)),
      author: patchShape.author.optional(),
      assignee: patchShape.assignee.optional(),
      priority: patchShape.priority.optional(),
      references: z.optional(z.nullable(patchShape.references)),
      body: z.string().max(MAX_FILE_BYTES).optional().describe('replaces the whole body'),
      append: z
        .string()
        .max(MAX_FILE_BYTES)
        .optional()
        .describe('added at the end of the body, on a new line'),
      old_string: z
        .string()
        .min(1)
        .optional()
        .describe('exact text of the body to replace (with new_string); must occur once unless replace_all'),
      new_string: z.string().optional(),
      replace_all: z.boolean().default(false),
      fields: extraFields.optional(),
      expected_updated_at: z
        .string()
        .optional()
        .describe("fail with CONFLICT unless the item's updated_at is still this value"),
    })
    .strict();

  const remove = z
    .object({
      id: z.string().trim().min(1).describe('id, resource URI or path of the item to delete'),
      force: z
        .boolean()
        .default(false)
        .describe('delete a task or epic that has children (they keep a dangling parent_id)'),
      permanent: z
        .boolean()
        .default(false)
        .describe(
          'Backlog.md backlogs archive a deleted task (archive/tasks/), as Backlog.md does; true deletes the file',
        ),
    })
    .strict();

  const writeResource = z
    .object({
      path: z
        .string()
        .trim()
        .min(1)
        .describe(
          'path relative to the backlog root (or mcp://backlog/<path>), e.g. resources/notes/meeting.md',
        ),
      mode: z
        .enum(RESOURCE_WRITE_MODES)
        .optional()
        .describe(
          'create (default; fails if the file exists), overwrite (create or replace all), append, replace (old_string -> new_string; the default when old_string is given)',
        ),
      content: z
        .string()
        .max(MAX_FILE_BYTES)
        .optional()
        .describe('the text for create, overwrite and append'),
      old_string: z
        .string()
        .min(1)
        .optional()
        .describe('replace: exact text to find; must occur exactly once unless replace_all'),
      new_string: z.string().optional().describe('replace: the text to put instead'),
      replace_all: z.boolean().default(false),
    })
    .strict();
  return { create, update, delete: remove, writeResource };
}

let made: ReturnType<typeof makeWriteSchemas> | undefined;
/** The input schemas of create, update, delete and writeResource (strict: an unknown key is an error). */
export function writeSchemas(): ReturnType<typeof makeWriteSchemas> {
  return (made ??= makeWriteSchemas());
}
type WriteSchemas = ReturnType<typeof writeSchemas>;

export type CreateInput = z.input<WriteSchemas['create']>;
export type UpdateInput = z.input<WriteSchemas['update']>;
export type UpdateFields = z.output<WriteSchemas['update']>;
export type CreateFields = z.output<WriteSchemas['create']>;
export type DeleteInput = z.input<WriteSchemas['delete']>;
export type WriteResourceInput = z.input<WriteSchemas['writeResource']>;

export interface WriteResult {
  action: 'created' | 'updated' | 'deleted' | 'archived' | 'overwritten' | 'appended' | 'replaced';
  id: string;
  /** Relative to the backlog root. */
  path: string;
  uri: string;
  /** The item as indexed after the write; null after a delete. */
  item: ItemSummary | null;
  /** replace: how many occurrences were replaced. */
  replacements?: number;
  /** delete with force: children left with a dangling parent_id. */
  orphaned?: string[];
}

// ---------------------------------------------------------------------------------------------
// Validation errors

export const FIELD_HINTS: Record<string, string> = {
  type: 'Use task or epic.',
  title: 'Pass a non-empty one-line title (at most 300 characters).',
  parent_id: 'Pass the id of an existing task or epic, e.g. EPIC-0001, or null.',
  id: 'Pass the id of a task or epic (TASK-0001, EPIC-0001), a resource URI or a path.',
  path: 'Pass a path relative to the backlog root, e.g. resources/notes/meeting.md (no "..", no leading "/", no hidden folders).',
  mode: `Use one of: ${RESOURCE_WRITE_MODES.join(', ')}.`,
  fields:
    'Pass an object of extra frontmatter fields with string, number, boolean, null or string-list values.',
};

export function parseInput<S extends z.ZodObject>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === 'unrecognized_keys') throw toBacklogError(parsed.error, Object.keys(schema.shape));
  const field = String(issue.path[0] ?? 'input');
  if (issue.code === 'too_big' && issue.origin === 'string' && Number(issue.maximum) >= MAX_FILE_BYTES)
    throw errors.inputTooLarge(
      field,
      `${issue.message} (characters)`,
      `Keep one write under ${MAX_FILE_BYTES} bytes; split the content over several files.`,
    );
  const missing = issue.code === 'invalid_type' && issue.message.includes('undefined');
  const values = issue.code === 'invalid_value' ? issue.values.map(String).join(', ') : '';
  const hint = FIELD_HINTS[field] ?? (values ? `Use one of: ${values}.` : `Check the value of "${field}".`);
  return throwField(field, missing ? `${field} is required` : `${field}: ${issue.message}`, hint);
}

export function throwField(field: string, message: string, hint: string): never {
  throw new BacklogError('INVALID_FILTER', message, hint, { field });
}

/** `value` as the backlog spells it, one of `allowed` in any case and spacing; INVALID_FILTER listing them otherwise. */
export function fromVocabulary(field: string, value: string, allowed: readonly string[]): string {
  const found = allowed.find((a) => statusKey(a) === statusKey(value));
  if (found !== undefined) return found;
  return throwField(
    field,
    `${field} "${value}" is not one of this backlog's`,
    `Use one of: ${allowed.join(', ')}.`,
  );
}

/** The status and priority of a write, checked against the backlog's format (config.yml for Backlog.md). */
export function checkVocabulary(
  format: BacklogFormat,
  input: { status?: string; priority?: string | null },
): { status?: string; priority?: string | null } {
  return {
    status:
      input.status === undefined ? undefined : fromVocabulary('status', input.status, format.config.statuses),
    priority:
      input.priority === undefined || input.priority === null
        ? input.priority
        : fromVocabulary('priority', input.priority, format.config.priorities),
  };
}

/**
 * Strict check of the frontmatter about to be written (taskFrontmatterSchema). `given` are the fields
 * the caller passed; a failing field the caller did not pass comes from the file as it is.
 */
export function validateFrontmatter(fm: Record<string, unknown>, given?: ReadonlySet<string>): void {
  const result = taskFrontmatterSchema().safeParse(fm);
  if (result.success) return;
  const issue = result.error.issues[0];
  const field = String(issue.path[0] ?? 'frontmatter');
  const value = fm[field] === undefined ? 'missing' : JSON.stringify(fm[field]);
  if (given && !given.has(field)) {
    const hint =
      field === 'id'
        ? 'Only tasks whose id looks like TASK-0001 or EPIC-0001 can be changed through this tool; edit this file by hand.'
        : `Pass ${field} too, to replace the file's value (${FIELD_HINTS[field] ?? 'see the task schema'})`;
    throwField(
      field,
      `the file's ${field} ${value} does not fit the task schema (${issue.message}); nothing was written`,
      hint,
    );
  }
  throwField(
    field,
    `${field} ${value} does not fit the task schema (${issue.message}); nothing was written`,
    FIELD_HINTS[field] ?? `Pass a valid ${field}.`,
  );
}
