/**
 * Writes to the backlog: create / update / delete tasks and epics, write resources. Every write is
 * validated first (nothing is written on an error), goes to disk atomically, and is applied to the
 * index before the call returns. Only the file being written is ever touched.
 */
import { stat, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { BacklogError, errors } from '../errors.js';
import { isIgnoredPath } from '../storage/backlog-store.js';
import { editFrontMatter, parseFrontmatter, stringifyFrontmatter } from '../storage/frontmatter.js';
import type { BacklogFormat } from '../storage/formats/detect.js';
import { RESOURCE_URI_PREFIX, TEXT_EXTENSIONS, fileType, pathOfUri, resourceUri } from '../storage/parse.js';
import { checkRelativePath, readInsideRoot, resolveForWrite } from '../storage/root-path.js';
import { FIELD_ALIASES } from '../storage/schema.js';
import { createFileExclusive, writeFileAtomic } from '../storage/write-file.js';
import { appendText, checkSize, commitIfUnchanged, fsError, inFileEol, replaceString } from './write-text.js';
import { allocateId, slugify, withWriteLock } from './id-allocation.js';
import {
  archiveBacklogMdTask,
  backlogMdChanges,
  createBacklogMdTask,
  quoteBareNamesInFile,
} from './backlog-md-writes.js';
import type { BacklogItem } from '../storage/types.js';
import { summarize } from './summary.js';
import {
  FIELD_HINTS,
  checkVocabulary,
  parseInput,
  throwField,
  validateFrontmatter,
  writeSchemas,
  type CreateInput,
  type DeleteInput,
  type UpdateFields,
  type UpdateInput,
  type WriteResourceInput,
  type WriteResult,
  type WriteTarget,
} from './write-inputs.js';

export { slugify } from './id-allocation.js';

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

/**
 * Sets `field` under its canonical name and drops the names other tools use for it (labels, parent, ...),
 * in `fm` and, as minimal edits for the file, in `changes`.
 */
function setField(
  fm: Record<string, unknown>,
  field: string,
  value: unknown,
  changes: [string, unknown][] = [],
): void {
  for (const alias of FIELD_ALIASES[field] ?? [])
    if (alias !== field && alias in fm) {
      delete fm[alias];
      changes.push([alias, undefined]);
    }
  if (value === null || value === undefined) {
    if (field in fm) changes.push([field, undefined]);
    delete fm[field];
  } else {
    fm[field] = value;
    changes.push([field, value]);
  }
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

function readFrontmatter(
  text: string,
  path: string,
  format?: BacklogFormat,
): { fm: Record<string, unknown>; body: string; block: string } {
  const parsed = parseFrontmatter(text, format?.prepareFrontmatter);
  if (parsed.error)
    throw new BacklogError(
      'CONFLICT',
      `${path}: ${parsed.error.message} (${parsed.error.code}); the file was not changed`,
      'Fix the frontmatter by hand (see `backlog-search diagnostics`), then retry.',
      { path },
    );
  return { fm: { ...parsed.data }, body: parsed.content, block: parsed.block };
}

/** The canonical id of an existing task or epic to use as parent; rejects cycles. */
function resolveParent(service: WriteTarget, ref: string, self?: string): string {
  const id = service.resolve(ref);
  if (!id) throwField('parent_id', `parent_id: no item with id "${ref}"`, FIELD_HINTS.parent_id);
  const parent = service.get(id);
  if (parent.type !== 'task' && parent.type !== 'epic')
    throwField(
      'parent_id',
      `parent_id: "${ref}" is a ${parent.type}, not a task or epic`,
      FIELD_HINTS.parent_id,
    );
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
// Paths

/** A resource path the caller may write: inside the root, not hidden, an indexed text type, not a task file. */
export function safeResourcePath(input: string, format: BacklogFormat): string {
  let p = input.trim();
  if (p.startsWith(RESOURCE_URI_PREFIX)) p = pathOfUri(p); // a URI is %-encoded, a path is not
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
  if (format.roleOf(p)?.type === 'task')
    throwField(
      'path',
      `path "${input}" is a task file (markdown in a folder of tasks)`,
      'Use backlog_create and backlog_update for tasks and epics.',
    );
  return p;
}

async function applied(
  service: WriteTarget,
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

export async function createItem(service: WriteTarget, raw: CreateInput): Promise<WriteResult> {
  const input = parseInput(writeSchemas().create, raw);
  checkExtraFields(input.fields);
  const { status = service.format.config.defaultStatus, priority } = checkVocabulary(service.format, input);
  const parent = input.parent_id ? resolveParent(service, input.parent_id) : undefined;
  if (service.format.name === 'backlog-md') {
    const rel = await createBacklogMdTask(service, input, status, priority ?? undefined, parent);
    return applied(service, rel, 'created');
  }
  const now = new Date().toISOString();
  const prefix = input.type === 'epic' ? 'EPIC' : 'TASK';
  const fm: Record<string, unknown> = {
    id: `${prefix}-0000`,
    title: input.title,
    type: input.type,
    status,
    parent_id: parent,
    tags: input.tags?.length ? input.tags : undefined,
    author: input.author ?? undefined,
    assignee: input.assignee ?? undefined,
    priority: priority ?? undefined,
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

export async function updateItem(service: WriteTarget, raw: UpdateInput): Promise<WriteResult> {
  const input = parseInput(writeSchemas().update, raw);
  checkExtraFields(input.fields);
  Object.assign(input, checkVocabulary(service.format, input));
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
  if (first.type !== 'task' && first.type !== 'epic')
    throwField(
      'id',
      `${input.id} is a ${first.type}, not a task or epic`,
      'Use backlog_write_resource to change resources and documents.',
    );
  const abs = await resolveForWrite(service.dir, first.path).catch((err) => fsError(err, first.path));
  return withWriteLock(service.dir, first.path, abs, async () => {
    // An editor may save the file between our read and our write: then read it again and re-apply.
    for (let attempt = 1; ; attempt++) {
      const item = service.get(first.id);
      const { text, stats } = await readForEdit(service, item.path, input.id);
      const { out, replacements } = patchTask(service, item, text, input);
      checkSize(out, 'body');
      if (!(await commitIfUnchanged(abs, stats, out, item.path, attempt))) continue;
      return applied(service, item.path, 'updated', replacements === undefined ? {} : { replacements });
    }
  });
}

/** The file of a task as it is on disk now, with the stats that tell later whether it changed. */
async function readForEdit(
  service: WriteTarget,
  rel: string,
  id: string,
): Promise<{ text: string; stats: Stats }> {
  try {
    const { bytes, stats } = await readInsideRoot(service.dir, rel);
    return { text: bytes.toString('utf8'), stats };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      service.removeFile(rel);
      throw errors.notFound(id);
    }
    return fsError(err, rel);
  }
}

/** The new text of a task file: the fields `input` names changed in place, the body edited. */
function patchTask(
  service: WriteTarget,
  item: BacklogItem,
  original: string,
  input: UpdateFields,
): { out: string; replacements?: number } {
  const md = service.format.name === 'backlog-md';
  // Backlog.md reads `assignee: @name` as text; quoted so, the block is YAML the edit can work on.
  const text = md ? quoteBareNamesInFile(original) : original;
  const parsed = readFrontmatter(text, item.path, service.format);
  const fm = datesAsText(parsed.fm);
  const changes: [string, unknown][] = [];
  const hasFrontMatter = parsed.block !== '' || text.length !== parsed.body.length;
  const head = text.endsWith(parsed.body) ? text.slice(0, text.length - parsed.body.length) : null;
  if (head === null) throw errors.internal(`${item.path}: could not find where the front matter ends`);
  const crlf = /\r\n/.test(head || parsed.body);

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

  const parent =
    input.parent_id === undefined || input.parent_id === null
      ? input.parent_id
      : resolveParent(service, input.parent_id, item.id);
  if (md) changes.push(...backlogMdChanges(parsed.fm, input, parent));
  else patchNativeFrontMatter(item, fm, input, parent, changes);

  let body = parsed.body;
  let replacements: number | undefined;
  if (input.body !== undefined)
    body = inFileEol(
      input.body.startsWith('\n') || input.body === '' || !hasFrontMatter ? input.body : `\n${input.body}`,
      crlf,
    );
  if (input.append !== undefined) body = appendText(body, inFileEol(input.append, crlf), crlf);
  if (input.old_string !== undefined) {
    const inFile = body.includes(input.old_string) ? input.old_string : inFileEol(input.old_string, crlf);
    const r = replaceString(
      body,
      inFile,
      inFileEol(input.new_string ?? '', crlf && inFile !== input.old_string),
      input.replace_all,
      `the body of ${item.id}`,
    );
    body = r.text;
    replacements = r.count;
  }
  const out = hasFrontMatter ? editFrontMatter(head, changes) + body : editFrontMatter(body, changes);
  const check = parseFrontmatter(out);
  if (check.error)
    throw errors.internal(`${item.path}: the edited front matter would not parse (${check.error.message})`);
  return { out, replacements };
}

/** The changes of an update to a native task's front matter, checked against the strict task schema. */
function patchNativeFrontMatter(
  item: BacklogItem,
  fm: Record<string, unknown>,
  input: UpdateFields,
  parent: string | null | undefined,
  changes: [string, unknown][],
): void {
  // Fields the strict schema needs and the file only implies (id from the file name, title from a heading).
  if (fm.id === undefined) setField(fm, 'id', item.id, changes);
  if (fm.title === undefined && input.title === undefined) setField(fm, 'title', item.title, changes);
  if (fm.type === undefined && input.type === undefined) setField(fm, 'type', item.type, changes);

  if (input.title !== undefined) setField(fm, 'title', input.title, changes);
  if (input.type !== undefined) setField(fm, 'type', input.type, changes);
  if (input.status !== undefined) setField(fm, 'status', input.status, changes);
  if (parent !== undefined) setField(fm, 'parent_id', parent, changes);
  if (input.tags !== undefined) setField(fm, 'tags', input.tags, changes);
  if (input.author !== undefined) setField(fm, 'author', input.author, changes);
  if (input.assignee !== undefined) setField(fm, 'assignee', input.assignee, changes);
  if (input.priority !== undefined) setField(fm, 'priority', input.priority, changes);
  if (input.references !== undefined) setField(fm, 'references', input.references, changes);
  for (const [k, v] of Object.entries(input.fields ?? {})) setField(fm, k, v, changes);
  setField(fm, 'updated_at', nextUpdatedAt(fm), changes);
  validateFrontmatter(
    fm,
    new Set([
      ...Object.keys(input).filter((k) => k !== 'id' && input[k as keyof typeof input] !== undefined),
      ...Object.keys(input.fields ?? {}),
    ]),
  );
}

/** Now, as ISO 8601, and always later than the file's updated_at (two updates in one millisecond still differ). */
function nextUpdatedAt(fm: Record<string, unknown>): string {
  const previous = Date.parse(
    String(FIELD_ALIASES.updated_at.map((k) => fm[k]).find((v) => v != null) ?? ''),
  );
  const now = Date.now();
  return new Date(Number.isFinite(previous) && previous >= now ? previous + 1 : now).toISOString();
}

export async function deleteItem(service: WriteTarget, raw: DeleteInput): Promise<WriteResult> {
  const input = parseInput(writeSchemas().delete, raw);
  const item = service.get(input.id);
  const children = service.children(item.id);
  if (children.length && !input.force) {
    throw new BacklogError(
      'CONFLICT',
      `${item.id} has ${children.length} child item${children.length === 1 ? '' : 's'} (${children.slice(0, 10).join(', ')}${children.length > 10 ? ', ...' : ''}); nothing was deleted`,
      'Delete or re-parent the children first (backlog_update with parent_id), or pass force: true to delete only this item.',
      { field: 'force', children },
    );
  }
  if (service.format.name === 'backlog-md' && item.type === 'task' && !input.permanent) {
    // Backlog.md's delete is an archive: the file moves to archive/ and stays readable.
    const target = await archiveBacklogMdTask(service, item);
    service.removeFile(item.path);
    const result = await applied(service, target, 'archived');
    if (children.length) result.orphaned = children;
    return result;
  }
  const abs = await resolveForWrite(service.dir, item.path).catch((err) => fsError(err, item.path));
  return withWriteLock(service.dir, item.path, abs, async () => {
    try {
      await unlink(abs);
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

export async function writeResourceFile(service: WriteTarget, raw: WriteResourceInput): Promise<WriteResult> {
  const input = parseInput(writeSchemas().writeResource, raw);
  const rel = safeResourcePath(input.path, service.format);
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

  return withWriteLock(service.dir, rel, abs, async () => {
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
