/**
 * The writes of a Backlog.md backlog, in its own format (storage/formats/backlog-md-write.ts says what
 * that is): create writes `tasks/back-12 - Title.md` with the next id and Backlog.md's front matter and
 * sections; update edits only the keys Backlog.md uses for the fields it is given (`labels`,
 * `parent_task_id`, `updated_date`, ...), leaving every other line as written; delete moves the task to
 * `archive/tasks/` as `backlog task archive` does, unless `permanent`.
 */
import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BacklogError, errors } from '../errors.js';
import {
  BACKLOG_MD_KEYS,
  backlogMdNow,
  newTaskText,
  nextTaskId,
  splitReferences,
  taskFileName,
} from '../storage/formats/backlog-md-write.js';
import { quoteBareNames } from '../storage/formats/backlog-md.js';
import { resolveFolderForWrite, resolveForWrite } from '../storage/root-path.js';
import type { BacklogItem } from '../storage/types.js';
import { createFileExclusive } from '../storage/write-file.js';
import { asList } from '../storage/values.js';
import { withWriteLock } from './id-allocation.js';
import { checkSize, fsError } from './write-text.js';
import { throwField, type WriteTarget, type CreateFields, type UpdateFields } from './write-inputs.js';

/** The tasks Backlog.md counts for a new id or ordinal: those in tasks/ and completed/. */
function countedTasks(service: WriteTarget): BacklogItem[] {
  return service
    .ids()
    .map((id) => service.get(id))
    .filter((i) => i.type === 'task' && (i.state === 'active' || i.state === 'completed'));
}

/** Ids in the names of the files in tasks/ and completed/ (`back-12 - Title.md` -> `BACK-12`). */
async function taskIdsOnDisk(root: string): Promise<string[]> {
  const ids: string[] = [];
  for (const folder of ['tasks', 'completed']) {
    const names = await readdir(join(root, folder)).catch(() => [] as string[]);
    for (const name of names) {
      const m = /^([A-Za-z]+-\d+(?:\.\d+)*) - /.exec(name);
      if (m) ids.push(m[1].toUpperCase());
    }
  }
  return ids;
}

/** Assignees as Backlog.md keeps them: a list (`@alice, @bob` -> two entries). */
function assigneeList(value: string | null | undefined): string[] {
  return value ? asList(value) : [];
}

/**
 * Creates a task as `backlog task create` would. The id is taken under a lock every process respects
 * (the folder's `create` lock), so two writers never pick the same number.
 */
export async function createBacklogMdTask(
  service: WriteTarget,
  input: CreateFields,
  status: string,
  priority: string | undefined,
  parent: string | undefined,
): Promise<string> {
  if (input.type === 'epic')
    throwField('type', 'a Backlog.md backlog has no epics', 'Create a task, and sub-tasks with parent_id.');
  const { config } = service.format;
  // One lock for every create of this folder (`tasks/.create.lock`): two writers never pick one number.
  const tasks = await resolveFolderForWrite(service.dir, 'tasks');
  await mkdir(tasks, { recursive: true });
  return withWriteLock(service.dir, 'tasks/create', join(tasks, 'create'), async () => {
    const counted = countedTasks(service);
    // Files another process wrote a moment ago may not be indexed yet: their names count too.
    const onDisk = await taskIdsOnDisk(service.dir);
    const id = nextTaskId(
      config.taskPrefix,
      [...counted.map((t) => t.id), ...onDisk],
      config.zeroPaddedIds,
      parent,
    );
    const ordinal =
      Math.max(0, ...counted.map((t) => Number(t.frontmatter.ordinal)).filter(Number.isFinite)) + 1000;
    const { dependencies, references } = splitReferences(input.references ?? []);
    const text = newTaskText({
      id,
      title: input.title,
      status,
      assignee: assigneeList(input.assignee),
      reporter: input.author ?? undefined,
      createdDate: backlogMdNow(),
      labels: input.tags ?? [],
      dependencies,
      references,
      parent,
      priority,
      ordinal,
      extra: Object.fromEntries(Object.entries(input.fields ?? {}).filter(([, v]) => v !== null)),
      description: input.body,
      definitionOfDone: config.definitionOfDone,
    });
    checkSize(text, 'body');
    const rel = `tasks/${taskFileName(id, input.title)}`;
    try {
      await createFileExclusive(await resolveForWrite(service.dir, rel), text);
    } catch (err) {
      fsError(err, rel);
    }
    return rel;
  });
}

/**
 * The front matter changes of an update, under the keys this file (or Backlog.md) uses: a field the
 * file already has keeps its key; a new one gets Backlog.md's name.
 */
export function backlogMdChanges(
  fm: Record<string, unknown>,
  input: UpdateFields,
  parent: string | null | undefined,
): [string, unknown][] {
  if (input.type === 'epic')
    throwField('type', 'a Backlog.md backlog has no epics', 'Use parent_id to make sub-tasks instead.');
  const changes: [string, unknown][] = [];
  const keyOf = (field: string) =>
    [BACKLOG_MD_KEYS[field], field].find((k) => k !== undefined && k in fm) ??
    BACKLOG_MD_KEYS[field] ??
    field;
  const set = (field: string, value: unknown) => changes.push([keyOf(field), value]);
  if (input.title !== undefined) set('title', input.title);
  if (input.status !== undefined) set('status', input.status);
  if (parent !== undefined) set('parent_id', parent ?? undefined);
  if (input.tags !== undefined) set('tags', input.tags ?? []);
  if (input.author !== undefined) set('author', input.author ?? undefined);
  if (input.assignee !== undefined) set('assignee', assigneeList(input.assignee));
  if (input.priority !== undefined) set('priority', input.priority ?? undefined);
  if (input.references !== undefined) {
    const { dependencies, references } = splitReferences(input.references ?? []);
    changes.push(['dependencies', dependencies]);
    changes.push(['references', references.length ? references : undefined]);
  }
  for (const [k, v] of Object.entries(input.fields ?? {})) changes.push([k, v ?? undefined]);
  set('updated_at', backlogMdNow());
  return changes;
}

/** Moves a task to archive/tasks/ (a draft to archive/drafts/), as `backlog task archive` does. */
export async function archiveBacklogMdTask(service: WriteTarget, item: BacklogItem): Promise<string> {
  if (item.state === 'archived')
    throw new BacklogError(
      'CONFLICT',
      `${item.id} is already archived (${item.path}); nothing was changed`,
      'Pass permanent: true to delete the file.',
      { field: 'permanent' },
    );
  const name = item.path.slice(item.path.lastIndexOf('/') + 1);
  const target = `${item.state === 'draft' ? 'archive/drafts' : 'archive/tasks'}/${name}`;
  const from = await resolveForWrite(service.dir, item.path).catch((err) => fsError(err, item.path));
  return withWriteLock(service.dir, item.path, from, async () => {
    await mkdir(dirname(await resolveForWrite(service.dir, target)), { recursive: true });
    const to = await resolveForWrite(service.dir, target);
    if (await stat(to).catch(() => null))
      throw new BacklogError(
        'CONFLICT',
        `${target} already exists; ${item.id} was not archived`,
        'Delete or rename the archived copy first, or pass permanent: true.',
        { path: target },
      );
    try {
      await rename(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw errors.notFound(item.id);
      fsError(err, item.path);
    }
    return target;
  });
}

/**
 * `text` with its front matter's bare `@name` values quoted (storage/formats/backlog-md.ts,
 * quoteBareNames): Backlog.md reads both the same, and the quoted block is YAML an edit can work on.
 * Line endings stay as they were.
 */
export function quoteBareNamesInFile(text: string): string {
  const m = /^(\uFEFF?---[^\r\n]*(\r?\n))([\s\S]*?)(\r?\n---)/.exec(text);
  if (!m) return text;
  const [whole, open, eol, block, close] = m;
  const quoted = quoteBareNames(block).split('\n').join(eol);
  return quoted === block ? text : open + quoted + close + text.slice(whole.length);
}
