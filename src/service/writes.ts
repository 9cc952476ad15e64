/**
 * Writes to the backlog: create / update / delete tasks and epics, write resources. Every write is
 * validated first (nothing is written on an error), goes to disk atomically, and is applied to the
 * index before the call returns. Only the file being written is ever touched.
 */
import { summarize } from './summary.js';
import { parseFrontmatter, stringifyFrontmatter } from '../storage/frontmatter.js';
import { readdir, stat, unlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { z } from 'zod';
import { BacklogError, errors, isBacklogError } from '../errors.js';
import { MAX_FILE_BYTES, isIgnoredPath, writeFileAtomic } from '../storage/backlog-store.js';
import { RESOURCE_URI_PREFIX, TEXT_EXTENSIONS, fileType, isTaskPath, resourceUri } from '../storage/parse.js';
import { FIELD_ALIASES, PRIORITIES, taskFrontmatterSchema } from '../storage/schema.js';
import { STATUSES } from '../storage/types.js';
import { createFileExclusive, tryCreateMarker } from '../storage/write-file.js';
import {
  checkRelativePath,
  readInsideRoot,
  resolveFolderForWrite,
  resolveForWrite,
} from '../storage/root-path.js';
import type { BacklogService, ItemSummary } from './backlog-service.js';
import { oneOrMany, toBacklogError } from './options.js';

// ---------------------------------------------------------------------------------------------
// Input schemas (strict: an unknown key is an error). The MCP tools and the HTTP API use these.

const FIELD_NAME = /^[A-Za-z_][\w-]*$/;
const extraValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);
const extraFields = z
  .record(
    z.string().regex(FIELD_NAME, 'expected a plain frontmatter key (letters, digits, _ and -)'),
    extraValue,
  )
  .describe('other frontmatter fields, e.g. {"milestone": "v2"}; null removes a field (update)');
const list = (what: string) => oneOrMany(z.string()).describe(`${what}: a list or a comma-separated string`);

const patchShape = {
  title: z.string().trim().min(1).max(300).describe('one-line title'),
  status: z.enum(STATUSES).describe(STATUSES.join(', ')),
  parent_id: z
    .string()
    .trim()
    .min(1)
    .nullable()
    .describe('id of the parent epic or task, e.g. EPIC-0001 (null: no parent)'),
  tags: list('tags'),
  author: z.string().trim().min(1).nullable(),
  assignee: z.string().trim().min(1).nullable(),
  priority: z.enum(PRIORITIES).nullable().describe(PRIORITIES.join(', ')),
  references: list('ids or URLs this item refers to'),
};

export const createInputSchema = z
  .object({
    type: z.enum(['task', 'epic']).default('task').describe('task (default) or epic'),
    title: patchShape.title,
    status: patchShape.status.default('open'),
    parent_id: patchShape.parent_id.optional(),
    tags: patchShape.tags.optional(),
    author: patchShape.author.optional(),
    assignee: patchShape.assignee.optional(),
    priority: patchShape.priority.optional(),
    references: patchShape.references.optional(),
    body: z.string().max(MAX_FILE_BYTES).default('').describe('markdown body'),
    fields: extraFields.optional(),
  })
  .strict();

export const updateInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('the task or epic to change, e.g. TASK-0001'),
    title: patchShape.title.optional(),
    type: z.enum(['task', 'epic']).optional(),
    status: patchShape.status.optional(),
    parent_id: patchShape.parent_id.optional(),
    tags: patchShape.tags.nullable().optional(),
    author: patchShape.author.optional(),
    assignee: patchShape.assignee.optional(),
    priority: patchShape.priority.optional(),
    references: patchShape.references.nullable().optional(),
    body: z.string().max(MAX_FILE_BYTES).optional().describe('replaces the whole body'),
    append: z.string().max(MAX_FILE_BYTES).optional().describe('added at the end of the body, on a new line'),
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

export const deleteInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('id, resource URI or path of the item to delete'),
    force: z
      .boolean()
      .default(false)
      .describe('delete a task or epic that has children (they keep a dangling parent_id)'),
  })
  .strict();

export const RESOURCE_WRITE_MODES = ['create', 'overwrite', 'append', 'replace'] as const;

export const writeResourceInputSchema = z
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
    content: z.string().max(MAX_FILE_BYTES).optional().describe('the text for create, overwrite and append'),
    old_string: z
      .string()
      .min(1)
      .optional()
      .describe('replace: exact text to find; must occur exactly once unless replace_all'),
    new_string: z.string().optional().describe('replace: the text to put instead'),
    replace_all: z.boolean().default(false),
  })
  .strict();

export type CreateInput = z.input<typeof createInputSchema>;
export type UpdateInput = z.input<typeof updateInputSchema>;
export type DeleteInput = z.input<typeof deleteInputSchema>;
export type WriteResourceInput = z.input<typeof writeResourceInputSchema>;

export interface WriteResult {
  action: 'created' | 'updated' | 'deleted' | 'overwritten' | 'appended' | 'replaced';
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

const FIELD_HINTS: Record<string, string> = {
  status: `Use one of: ${STATUSES.join(', ')}.`,
  priority: `Use one of: ${PRIORITIES.join(', ')}, or null.`,
  type: 'Use task or epic.',
  title: 'Pass a non-empty one-line title (at most 300 characters).',
  parent_id: 'Pass the id of an existing task or epic, e.g. EPIC-0001, or null.',
  id: 'Pass the id of a task or epic (TASK-0001, EPIC-0001), a resource URI or a path.',
  path: 'Pass a path relative to the backlog root, e.g. resources/notes/meeting.md (no "..", no leading "/", no hidden folders).',
  mode: `Use one of: ${RESOURCE_WRITE_MODES.join(', ')}.`,
  fields:
    'Pass an object of extra frontmatter fields with string, number, boolean, null or string-list values.',
};

function parseInput<S extends z.ZodObject>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === 'unrecognized_keys') throw toBacklogError(parsed.error, Object.keys(schema.shape));
  const field = String(issue.path[0] ?? 'input');
  const missing = issue.code === 'invalid_type' && issue.message.includes('undefined');
  const values = issue.code === 'invalid_value' ? issue.values.map(String).join(', ') : '';
  const hint = FIELD_HINTS[field] ?? (values ? `Use one of: ${values}.` : `Check the value of "${field}".`);
  return throwField(field, missing ? `${field} is required` : `${field}: ${issue.message}`, hint);
}

function throwField(field: string, message: string, hint: string): never {
  throw new BacklogError('INVALID_FILTER', message, hint, { field });
}

/**
 * Strict check of the frontmatter about to be written (taskFrontmatterSchema). `given` are the fields
 * the caller passed; a failing field the caller did not pass comes from the file as it is.
 */
function validateFrontmatter(fm: Record<string, unknown>, given?: ReadonlySet<string>): void {
  const result = taskFrontmatterSchema.safeParse(fm);
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

// ---------------------------------------------------------------------------------------------
// Locks: one in-process mutex per key, shared by every service on the same folder

class KeyedMutex {
  private tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

interface FolderState {
  locks: KeyedMutex;
  /** Highest number handed out per prefix, so in-process allocations never race for the same marker. */
  last: Map<string, number>;
}
const folders = new Map<string, FolderState>();

function stateOf(dir: string): FolderState {
  let state = folders.get(dir);
  if (!state) folders.set(dir, (state = { locks: new KeyedMutex(), last: new Map() }));
  return state;
}

// ---------------------------------------------------------------------------------------------
// Ids and file names

const ID_PREFIX = /^(task|epic)-0*(\d+)(?!\d)/i;

function numberOf(id: string, prefix: string): number {
  const m = ID_PREFIX.exec(id);
  return m && m[1].toUpperCase() === prefix ? Number(m[2]) : 0;
}

function formatId(prefix: string, n: number): string {
  return `${prefix}-${String(n).padStart(4, '0')}`;
}

async function fileNamesUnder(folder: string, recursive: boolean): Promise<string[]> {
  try {
    const names = await readdir(folder, { recursive });
    return names.map((n) => n.slice(n.lastIndexOf(sep) + 1));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The next free id. In one process allocations are serialized; across processes a marker file
 * `tasks/.<ID>.lock` is taken with the exclusive `wx` flag, and the id is re-checked against the
 * files on disk once the marker is held. The caller removes the marker after creating the file.
 */
async function allocateId(
  service: BacklogService,
  prefix: 'TASK' | 'EPIC',
): Promise<{ id: string; release: () => Promise<void> }> {
  const state = stateOf(service.dir);
  const tasksDir = await resolveFolderForWrite(service.dir, 'tasks');
  return state.locks.run(`alloc:${prefix}`, async () => {
    let max = state.last.get(prefix) ?? 0;
    for (const id of service.ids()) max = Math.max(max, numberOf(id, prefix));
    for (const name of await fileNamesUnder(tasksDir, true)) max = Math.max(max, numberOf(name, prefix));
    for (let n = max + 1; n < max + 1000; n++) {
      const id = formatId(prefix, n);
      const marker = join(tasksDir, `.${id}.lock`);
      if (!(await tryCreateMarker(marker))) continue;
      const taken =
        service.resolve(id) !== undefined ||
        (await fileNamesUnder(tasksDir, false)).some((name) => numberOf(name, prefix) === n);
      if (taken) {
        await unlink(marker).catch(() => undefined);
        continue;
      }
      state.last.set(prefix, n);
      return { id, release: () => unlink(marker).catch(() => undefined) };
    }
    throw errors.internal(
      `could not allocate a ${prefix} id: 1000 candidates after ${formatId(prefix, max)} are locked`,
    );
  });
}

/** `Add rate-limit to the login endpoint!` -> `add-rate-limit-to-the-login-endpoint` (letters of any script kept). */
export function slugify(title: string, max = 60): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  if (slug.length <= max) return slug;
  const cut = slug.slice(0, max);
  const dash = cut.lastIndexOf('-');
  return (dash > max / 2 ? cut.slice(0, dash) : cut).replace(/-+$/, '');
}

// ---------------------------------------------------------------------------------------------
// Frontmatter

const KNOWN_KEYS = new Set([
  'id',
  'title',
  'type',
  'status',
  'parent_id',
  'tags',
  'author',
  'assignee',
  'priority',
  'references',
  'created_at',
  'updated_at',
  ...Object.values(FIELD_ALIASES).flat(),
]);

function checkExtraFields(fields: Record<string, unknown> | undefined): void {
  for (const key of Object.keys(fields ?? {})) {
    if (KNOWN_KEYS.has(key))
      throwField(
        'fields',
        `fields.${key} is a known field`,
        `Set "${key}" with its own option, not inside fields${key.endsWith('_at') || key.startsWith('created') || key.startsWith('updated') ? ' (dates are set automatically)' : ''}.`,
      );
  }
}

/** Sets `field` under its canonical name and drops the names other tools use for it (labels, parent, ...). */
function setField(fm: Record<string, unknown>, field: string, value: unknown): void {
  for (const alias of FIELD_ALIASES[field] ?? []) if (alias !== field) delete fm[alias];
  if (value === null || value === undefined) delete fm[field];
  else fm[field] = value;
}

/** YAML timestamps come back as Dates; the schema (and our writes) use ISO strings. */
function datesAsText(fm: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fm))
    out[k] =
      v instanceof Date && (k.endsWith('_at') || k.endsWith('_date') || k === 'created' || k === 'updated')
        ? v.toISOString()
        : v;
  return out;
}

function serialize(fm: Record<string, unknown>, body: string): string {
  const clean = Object.fromEntries(Object.entries(fm).filter(([, v]) => v !== undefined));
  return stringifyFrontmatter(clean, body);
}

function readFrontmatter(text: string, path: string): { fm: Record<string, unknown>; body: string } {
  const parsed = parseFrontmatter(text);
  if (parsed.error)
    throw new BacklogError(
      'CONFLICT',
      `${path}: ${parsed.error.message} (${parsed.error.code}); the file was not changed`,
      'Fix the frontmatter by hand (see `backlog-search diagnostics`), then retry.',
      { path },
    );
  return { fm: { ...parsed.data }, body: parsed.content };
}

/** The canonical id of an existing task or epic to use as parent; rejects cycles. */
function resolveParent(service: BacklogService, ref: string, self?: string): string {
  const id = service.resolve(ref);
  if (!id) throwField('parent_id', `parent_id: no item with id "${ref}"`, FIELD_HINTS.parent_id);
  const parent = service.get(id);
  if (parent.type === 'resource')
    throwField('parent_id', `parent_id: "${ref}" is a resource, not a task or epic`, FIELD_HINTS.parent_id);
  if (self) {
    const seen = new Set<string>();
    let cur: string | undefined = id;
    while (cur && !seen.has(cur)) {
      if (cur === self)
        throwField(
          'parent_id',
          `parent_id: making ${ref} the parent of ${self} would create a cycle`,
          'Pick a parent that is not the item itself or one of its descendants.',
        );
      seen.add(cur);
      const up: string | null = service.get(cur).parent_id;
      cur = up ? service.resolve(up) : undefined;
    }
  }
  return id;
}

// ---------------------------------------------------------------------------------------------
// Body edits

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

function replaceString(
  text: string,
  oldString: string,
  newString: string,
  all: boolean,
  where: string,
): { text: string; count: number } {
  const count = countOccurrences(text, oldString);
  if (count === 0)
    throw new BacklogError(
      'CONFLICT',
      `old_string was not found in ${where}; nothing was written`,
      'Read the current text (backlog_get) and copy the exact passage, whitespace and line breaks included.',
      { field: 'old_string' },
    );
  if (count > 1 && !all)
    throw new BacklogError(
      'CONFLICT',
      `old_string occurs ${count} times in ${where}; nothing was written`,
      'Include more surrounding text so it occurs once, or pass replace_all: true.',
      { field: 'old_string', occurrences: count },
    );
  return {
    text: all ? text.split(oldString).join(newString) : text.replace(oldString, () => newString),
    count,
  };
}

function appendText(text: string, addition: string): string {
  return text === '' || text.endsWith('\n') ? text + addition : `${text}\n${addition}`;
}

function checkSize(text: string, field: string): void {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_FILE_BYTES)
    throwField(
      field,
      `${field}: the file would be ${bytes} bytes, over the ${MAX_FILE_BYTES}-byte limit`,
      'Split the content over several files.',
    );
}

// ---------------------------------------------------------------------------------------------
// Paths

/** A resource path the caller may write: inside the root, not hidden, an indexed text type, not a task file. */
export function safeResourcePath(input: string): string {
  let p = input.trim();
  if (p.startsWith(RESOURCE_URI_PREFIX)) p = p.slice(RESOURCE_URI_PREFIX.length);
  if (!p) throwField('path', `path "${input}" is empty`, FIELD_HINTS.path);
  p = checkRelativePath(p);
  if (isIgnoredPath(p))
    throw errors.forbiddenPath(
      input,
      'is in a hidden folder (or node_modules), which is not part of the backlog',
    );
  const ext = fileType(p);
  if (!TEXT_EXTENSIONS.has(ext))
    throwField(
      'path',
      `path "${input}" has ${ext ? `extension .${ext}` : 'no extension'}, which the backlog does not index`,
      `Use a text extension: ${[...TEXT_EXTENSIONS].join(', ')}.`,
    );
  if (isTaskPath(p))
    throwField(
      'path',
      `path "${input}" is a task file (markdown under tasks/)`,
      'Use backlog_create and backlog_update for tasks and epics.',
    );
  return p;
}

function fsError(err: unknown, rel: string): never {
  if (isBacklogError(err)) throw err;
  const e = err as NodeJS.ErrnoException;
  throw new BacklogError(
    'INTERNAL',
    `${rel}: ${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`,
    'The file system refused the write; check that the file and its folder are writable, then retry.',
    { path: rel },
  );
}

async function applied(
  service: BacklogService,
  rel: string,
  action: WriteResult['action'],
  extra: Partial<WriteResult> = {},
): Promise<WriteResult> {
  const item = await service.applyFile(rel);
  return {
    action,
    id: item?.id ?? resourceUri(rel),
    path: rel,
    uri: resourceUri(rel),
    item: item ? summarize(item) : null,
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// The writes

export async function createItem(service: BacklogService, raw: CreateInput): Promise<WriteResult> {
  const input = parseInput(createInputSchema, raw);
  checkExtraFields(input.fields);
  const parent = input.parent_id ? resolveParent(service, input.parent_id) : undefined;
  const now = new Date().toISOString();
  const prefix = input.type === 'epic' ? 'EPIC' : 'TASK';
  const fm: Record<string, unknown> = {
    id: `${prefix}-0000`,
    title: input.title,
    type: input.type,
    status: input.status,
    parent_id: parent,
    tags: input.tags?.length ? input.tags : undefined,
    author: input.author ?? undefined,
    assignee: input.assignee ?? undefined,
    priority: input.priority ?? undefined,
    references: input.references?.length ? input.references : undefined,
    ...Object.fromEntries(Object.entries(input.fields ?? {}).filter(([, v]) => v !== null)),
    created_at: now,
    updated_at: now,
  };
  validateFrontmatter(fm);
  const body = input.body && !input.body.startsWith('\n') ? `\n${input.body}` : input.body;
  const slug = slugify(input.title);

  const { id, release } = await allocateId(service, prefix);
  const rel = `tasks/${id}${slug ? `-${slug}` : ''}.md`;
  try {
    fm.id = id;
    const text = serialize(fm, body);
    checkSize(text, 'body');
    await createFileExclusive(await resolveForWrite(service.dir, rel), text);
  } catch (err) {
    fsError(err, rel);
  } finally {
    await release();
  }
  return applied(service, rel, 'created');
}

export async function updateItem(service: BacklogService, raw: UpdateInput): Promise<WriteResult> {
  const input = parseInput(updateInputSchema, raw);
  checkExtraFields(input.fields);
  const bodyOps = [
    input.body !== undefined && 'body',
    input.append !== undefined && 'append',
    input.old_string !== undefined && 'old_string',
  ].filter(Boolean);
  if (bodyOps.length > 1)
    throwField(
      String(bodyOps[1]),
      `pass one of body, append, old_string; got ${bodyOps.join(' and ')}`,
      'body replaces the whole body, append adds to it, old_string/new_string edits a passage.',
    );
  if (input.old_string !== undefined && input.new_string === undefined)
    throwField(
      'new_string',
      'new_string is required with old_string',
      'Pass the replacement text as new_string ("" deletes the passage).',
    );
  if (input.new_string !== undefined && input.old_string === undefined)
    throwField(
      'old_string',
      'old_string is required with new_string',
      'Pass the exact text to replace as old_string.',
    );

  const first = service.get(input.id);
  if (first.type === 'resource')
    throwField(
      'id',
      `${input.id} is a resource, not a task or epic`,
      'Use backlog_write_resource to change resources.',
    );
  const state = stateOf(service.dir);
  return state.locks.run(`file:${first.path}`, async () => {
    const item = service.get(first.id);
    let abs: string;
    let text: string;
    try {
      abs = await resolveForWrite(service.dir, item.path);
      text = (await readInsideRoot(service.dir, item.path)).bytes.toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        service.removeFile(item.path);
        throw errors.notFound(input.id);
      }
      fsError(err, item.path);
    }
    const parsed = readFrontmatter(text, item.path);
    let fm = datesAsText(parsed.fm);
    let body = parsed.body;

    if (input.expected_updated_at !== undefined) {
      const current = FIELD_ALIASES.updated_at.map((k) => fm[k]).find((v) => v !== undefined && v !== null);
      const same =
        current !== undefined &&
        (String(current) === input.expected_updated_at ||
          Date.parse(String(current)) === Date.parse(input.expected_updated_at));
      if (!same)
        throw new BacklogError(
          'CONFLICT',
          `${item.id} was changed since ${input.expected_updated_at} (updated_at is now ${current ?? 'unset'}); nothing was written`,
          'Read the item again (backlog_get) and re-apply your change.',
          { field: 'expected_updated_at', updated_at: current ?? null },
        );
    }

    // Fields the strict schema needs and the file only implies (id from the file name, title from a heading).
    const implied: Record<string, unknown> = {};
    if (fm.id === undefined) implied.id = item.id;
    if (fm.title === undefined && input.title === undefined) implied.title = item.title;
    if (fm.type === undefined && input.type === undefined) implied.type = item.type;
    fm = { ...implied, ...fm };

    if (input.title !== undefined) setField(fm, 'title', input.title);
    if (input.type !== undefined) setField(fm, 'type', input.type);
    if (input.status !== undefined) setField(fm, 'status', input.status);
    if (input.parent_id !== undefined)
      setField(
        fm,
        'parent_id',
        input.parent_id === null ? null : resolveParent(service, input.parent_id, item.id),
      );
    if (input.tags !== undefined) setField(fm, 'tags', input.tags);
    if (input.author !== undefined) setField(fm, 'author', input.author);
    if (input.assignee !== undefined) setField(fm, 'assignee', input.assignee);
    if (input.priority !== undefined) setField(fm, 'priority', input.priority);
    if (input.references !== undefined) setField(fm, 'references', input.references);
    for (const [k, v] of Object.entries(input.fields ?? {})) setField(fm, k, v);
    setField(fm, 'updated_at', new Date().toISOString());
    validateFrontmatter(
      fm,
      new Set([
        ...Object.keys(input).filter((k) => k !== 'id' && input[k as keyof typeof input] !== undefined),
        ...Object.keys(input.fields ?? {}),
      ]),
    );

    let replacements: number | undefined;
    if (input.body !== undefined)
      body = input.body.startsWith('\n') || input.body === '' ? input.body : `\n${input.body}`;
    if (input.append !== undefined) body = appendText(body, input.append);
    if (input.old_string !== undefined) {
      const r = replaceString(
        body,
        input.old_string,
        input.new_string ?? '',
        input.replace_all,
        `the body of ${item.id}`,
      );
      body = r.text;
      replacements = r.count;
    }
    const out = serialize(fm, body);
    checkSize(out, 'body');
    try {
      await writeFileAtomic(abs, out);
    } catch (err) {
      fsError(err, item.path);
    }
    return applied(service, item.path, 'updated', replacements === undefined ? {} : { replacements });
  });
}

export async function deleteItem(service: BacklogService, raw: DeleteInput): Promise<WriteResult> {
  const input = parseInput(deleteInputSchema, raw);
  const item = service.get(input.id);
  const children = service.getMetadata(item.id).links.children;
  if (children.length && !input.force) {
    throw new BacklogError(
      'CONFLICT',
      `${item.id} has ${children.length} child item${children.length === 1 ? '' : 's'} (${children.slice(0, 10).join(', ')}${children.length > 10 ? ', ...' : ''}); nothing was deleted`,
      'Delete or re-parent the children first (backlog_update with parent_id), or pass force: true to delete only this item.',
      { field: 'force', children },
    );
  }
  return stateOf(service.dir).locks.run(`file:${item.path}`, async () => {
    try {
      await unlink(await resolveForWrite(service.dir, item.path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') fsError(err, item.path);
    }
    service.removeFile(item.path);
    const result: WriteResult = {
      action: 'deleted',
      id: item.id,
      path: item.path,
      uri: resourceUri(item.path),
      item: null,
    };
    if (children.length) result.orphaned = children;
    return result;
  });
}

export async function writeResourceFile(
  service: BacklogService,
  raw: WriteResourceInput,
): Promise<WriteResult> {
  const input = parseInput(writeResourceInputSchema, raw);
  const rel = safeResourcePath(input.path);
  const mode = input.mode ?? (input.old_string !== undefined ? 'replace' : 'create');
  if (mode === 'replace') {
    if (input.old_string === undefined)
      throwField(
        'old_string',
        'old_string is required with mode replace',
        'Pass the exact text to replace as old_string and the new text as new_string.',
      );
    if (input.new_string === undefined)
      throwField(
        'new_string',
        'new_string is required with mode replace',
        'Pass the replacement text as new_string ("" deletes the passage).',
      );
    if (input.content !== undefined)
      throwField(
        'content',
        'content is not used with mode replace',
        'Pass old_string and new_string, or use mode overwrite to replace the whole file.',
      );
  } else {
    if (input.content === undefined)
      throwField('content', `content is required with mode ${mode}`, 'Pass the text to write as content.');
    if (input.old_string !== undefined || input.new_string !== undefined)
      throwField(
        input.old_string !== undefined ? 'old_string' : 'new_string',
        `old_string/new_string are only used with mode replace, not ${mode}`,
        'Drop them, or pass mode "replace".',
      );
  }
  const abs = await resolveForWrite(service.dir, rel);

  return stateOf(service.dir).locks.run(`file:${rel}`, async () => {
    const readExisting = async (): Promise<string> => {
      try {
        return (await readInsideRoot(service.dir, rel)).bytes.toString('utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          throw new BacklogError(
            'NOT_FOUND',
            `No file at ${rel}`,
            'Create it first with mode "create" (or "overwrite").',
            { path: rel },
          );
        return fsError(err, rel);
      }
    };
    try {
      switch (mode) {
        case 'create': {
          checkSize(input.content!, 'content');
          try {
            await createFileExclusive(abs, input.content!);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EEXIST')
              throw new BacklogError(
                'CONFLICT',
                `${rel} already exists; nothing was written`,
                'Use mode "overwrite" to replace it, "append" to add to it, or "replace" to edit a passage.',
                { path: rel },
              );
            throw err;
          }
          return await applied(service, rel, 'created');
        }
        case 'overwrite': {
          checkSize(input.content!, 'content');
          const existed = (await stat(abs).catch(() => null)) !== null;
          await writeFileAtomic(abs, input.content!);
          return await applied(service, rel, existed ? 'overwritten' : 'created');
        }
        case 'append': {
          const text = appendText(await readExisting(), input.content!);
          checkSize(text, 'content');
          await writeFileAtomic(abs, text);
          return await applied(service, rel, 'appended');
        }
        case 'replace': {
          const r = replaceString(
            await readExisting(),
            input.old_string!,
            input.new_string!,
            input.replace_all,
            rel,
          );
          checkSize(r.text, 'new_string');
          await writeFileAtomic(abs, r.text);
          return await applied(service, rel, 'replaced', { replacements: r.count });
        }
      }
    } catch (err) {
      return fsError(err, rel);
    }
  });
}
