/**
 * openWorkspace: several backlog folders in one process (docs/workspace.md). Each is opened by
 * `openBacklog` with the shared options, into its own BacklogService (its files, ids, config, cache,
 * diagnostics and watcher); a folder that is missing, unreadable or not a backlog is reported with a
 * code in `problems`, and the others are served.
 */
import { Background } from '../search/background.js';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BacklogError, isBacklogError } from '../errors.js';
import type { BacklogService } from '../service/backlog-service.js';
import {
  beginOpenBacklog,
  closeBacklog,
  openBacklog,
  type OpenBacklogOptions,
} from '../service/open-backlog.js';
import { SharedEmbeddingPool } from '../embeddings/shared-pool.js';
import type { EmbeddingProvider } from '../embeddings/types.js';
import { PROJECT_NAME, projectSlug } from './ids.js';
import type { WorkspaceFusion, WorkspaceVersions } from './merge.js';
import type { ProjectProblem, WorkspaceProject } from './types.js';
import { Workspace } from './workspace.js';

export interface WorkspaceBacklog {
  /** The backlog folder, or a repository whose `backlog/` folder is the backlog. */
  dir: string;
  /** Default: Backlog.md's `project_name`, else the folder above `backlog/`; made unique (`-2`, ...). */
  name?: string;
}

export interface OpenWorkspaceOptions extends Omit<OpenBacklogOptions, 'dir'> {
  backlogs: WorkspaceBacklog[];
  /** How scores of different backlogs are compared (merge.ts; default `bound`). */
  fusion?: WorkspaceFusion;
  /**
   * `once` (default): versions of one document in several projects (same type and title, equal bodies or
   * one the beginning of the other: two worktrees of one repository, a vendored copy) take one place in a
   * search over several, shown as the fuller one with `also_in` naming the others. `apart`: each is a
   * result (docs/workspace.md, "One document in several projects").
   */
  versions?: WorkspaceVersions;
}

/**
 * Opens every backlog (at the same time) and resolves to a Workspace. Throws only when none could be
 * opened (the first backlog's error, with every problem in `details.problems`).
 */
export async function openWorkspace(options: OpenWorkspaceOptions): Promise<Workspace> {
  const { backlogs, fusion, versions, ...shared } = options;
  const explicit = explicitNames(backlogs);
  const cacheRoot = cacheRootFor(shared.cacheDir);
  withSharedPool(shared);
  // One after the other: opened together they slow each other's restore (10 backlogs of 697 files: 58 s
  // together against 14 s in turn, on 2 busy cores); and the background work of every one of them
  // (snippet bodies, word-pair filters) starts when all are open.
  const opened: Opened[] = [];
  await Background.holdWhile(
    (async () => {
      for (const b of backlogs) opened.push(await openOne(b, shared, cacheRoot));
    })(),
  );
  const { projects, problems } = named(opened, explicit);
  if (projects.length === 0) {
    const first = opened[0] as { error: BacklogError };
    throw new BacklogError(first.error.code, first.error.message, first.error.hint, {
      ...first.error.details,
      problems,
    });
  }
  return new Workspace(projects, problems, fusion, versions);
}

type Opened = { b: WorkspaceBacklog; dir: string; service?: BacklogService; error?: BacklogError };

/**
 * `openWorkspace` in two steps (as beginOpenBacklog for one): resolves as soon as every backlog's format
 * and settings are read (config.yml, no other file), with a Workspace of them and `opened`, which resolves
 * when each one's files are read, one after the other. Until then each backlog answers as an empty one:
 * the MCP server answers `initialize` and `tools/list` at once and holds the rest for `opened`. A backlog
 * whose files cannot be read is then taken out and reported in `problems`; `opened` rejects only when
 * none could be opened.
 */
export async function beginOpenWorkspace(
  options: OpenWorkspaceOptions,
): Promise<{ ws: Workspace; opened: Promise<Workspace> }> {
  const { backlogs, fusion, versions, ...shared } = options;
  const explicit = explicitNames(backlogs);
  const cacheRoot = cacheRootFor(shared.cacheDir);
  withSharedPool(shared);
  // The first reads its files once the background work of all is held (as openWorkspace does).
  let start!: () => void;
  let previous: Promise<unknown> = new Promise<void>((resolve) => (start = resolve));
  const begun: Array<Opened & { opened?: Promise<BacklogService> }> = [];
  for (const b of backlogs) {
    const asked = resolve(b.dir);
    try {
      const dir = await backlogFolder(asked);
      const { service, opened } = await beginOpenBacklog(
        { ...shared, dir, cacheDir: cacheDirOf(dir, cacheRoot) },
        previous,
      );
      begun.push({ b, dir, service, opened });
      previous = opened.catch(() => undefined);
    } catch (err) {
      begun.push({ b, dir: asked, error: isBacklogError(err) ? err : unreadable(asked, err) });
    }
  }
  const { projects, problems } = named(begun, explicit);
  const all = Background.holdWhile(Promise.allSettled(begun.map((o) => o.opened)));
  start();
  if (projects.length === 0) throw noneOpened(problems);
  const ws = new Workspace(projects, problems, fusion, versions);
  const opened = all.then((settled) => {
    settled.forEach((s, i) => {
      const o = begun[i];
      const p = projects.find((x) => x.service === o.service);
      if (s.status === 'fulfilled' || !p) return;
      const err = isBacklogError(s.reason) ? s.reason : unreadable(o.dir, s.reason);
      ws.remove(p.name);
      void closeBacklog(p.service).catch(() => undefined);
      problems.push({ name: p.name, dir: o.dir, code: err.code, message: err.message, hint: err.hint });
    });
    if (ws.projects.length === 0) throw noneOpened(problems);
    return ws;
  });
  opened.catch(() => undefined); // handled by whoever awaits it
  return { ws, opened };
}

/**
 * Opens one more backlog into an open workspace (the MCP server's roots, src/mcp/roots.ts), named as
 * openWorkspace names one and made unique among the projects open now. A folder that cannot be opened
 * is not added: its problem is returned (with a code), and nothing is thrown.
 */
export async function addBacklog(
  ws: Workspace,
  b: WorkspaceBacklog,
  options: Omit<OpenBacklogOptions, 'dir'>,
): Promise<WorkspaceProject | ProjectProblem> {
  const cacheRoot = cacheRootFor(options.cacheDir);
  const o = await openOne(b, options, cacheRoot);
  const wanted = b.name?.toLowerCase() ?? (o.service ? projectSlug(o.service.projectName) : undefined);
  if (o.error || !o.service) {
    const e = o.error!;
    const name = wanted ?? projectSlug(folderName(o.dir));
    return { name, dir: o.dir, code: e.code, message: e.message, hint: e.hint };
  }
  const project = { name: ws.uniqueName(wanted!), dir: o.dir, service: o.service };
  ws.add(project);
  return project;
}

async function openOne(
  b: WorkspaceBacklog,
  shared: Omit<OpenBacklogOptions, 'dir'>,
  cacheRoot: string | false | undefined,
): Promise<Opened> {
  const asked = resolve(b.dir);
  try {
    const dir = await backlogFolder(asked);
    return { b, dir, service: await openBacklog({ ...shared, dir, cacheDir: cacheDirOf(dir, cacheRoot) }) };
  } catch (err) {
    return { b, dir: asked, error: isBacklogError(err) ? err : unreadable(asked, err) };
  }
}

/** The names given (lower case); INVALID_INPUT for one that cannot be used or is given twice. */
function explicitNames(backlogs: WorkspaceBacklog[]): Set<string> {
  if (backlogs.length === 0)
    throw new BacklogError(
      'INVALID_INPUT',
      'a workspace needs at least one backlog',
      'Pass backlogs: [{ dir }].',
      {
        field: 'backlogs',
      },
    );
  const explicit = new Set<string>();
  for (const b of backlogs) {
    if (b.name === undefined) continue;
    const name = b.name.toLowerCase();
    if (!PROJECT_NAME.test(name))
      throw new BacklogError(
        'INVALID_INPUT',
        `project name "${b.name}" cannot be used`,
        'Use letters, digits, ".", "_" and "-" (no ":" or "/": qualified ids use them), e.g. my-repo.',
        { field: 'name' },
      );
    if (explicit.has(name))
      throw new BacklogError(
        'INVALID_INPUT',
        `two backlogs are named "${name}"`,
        'Give each a name of its own.',
        {
          field: 'name',
        },
      );
    explicit.add(name);
  }
  return explicit;
}

/** One model for every backlog (embeddings/shared-pool.ts); each keeps its own cache and vectors. */
function withSharedPool(shared: Omit<OpenBacklogOptions, 'dir'>): void {
  const provider =
    shared.embeddings ?? (process.env.BACKLOG_EMBEDDINGS as EmbeddingProvider | undefined) ?? 'auto';
  if (provider !== 'none' && !shared.sharedEmbeddingPool)
    shared.sharedEmbeddingPool = new SharedEmbeddingPool({ provider, transformers: shared.transformers });
}

/** Each backlog's project name (given, else its own, made unique), or its problem. */
function named(
  opened: Opened[],
  explicit: Set<string>,
): { projects: WorkspaceProject[]; problems: ProjectProblem[] } {
  const taken = new Set(explicit);
  const unique = (wanted: string, own: boolean) => {
    if (own) return wanted;
    let name = wanted;
    for (let i = 2; taken.has(name); i++) name = `${wanted}-${i}`;
    taken.add(name);
    return name;
  };
  const projects: WorkspaceProject[] = [];
  const problems: ProjectProblem[] = [];
  for (const o of opened) {
    const own = o.b.name !== undefined;
    if ('error' in o && o.error) {
      const name = unique(own ? o.b.name!.toLowerCase() : projectSlug(folderName(o.dir)), own);
      problems.push({ name, dir: o.dir, code: o.error.code, message: o.error.message, hint: o.error.hint });
      continue;
    }
    const service = o.service!;
    projects.push({
      name: unique(own ? o.b.name!.toLowerCase() : projectSlug(service.projectName), own),
      dir: o.dir,
      service,
    });
  }
  return { projects, problems };
}

/** No backlog could be opened: the first problem, with every problem in `details.problems`. */
function noneOpened(problems: ProjectProblem[]): BacklogError {
  const first = problems[0];
  return new BacklogError(first.code, first.message, first.hint, { dir: first.dir, problems });
}

/** The workspace's cache folder: the one passed, else `BACKLOG_CACHE_DIR` (empty: unset), else each backlog's own. */
function cacheRootFor(cacheDir: string | false | undefined): string | false | undefined {
  return cacheDir ?? (process.env.BACKLOG_CACHE_DIR || undefined);
}

/** A shared cache folder gets one subfolder per backlog, so that no two write the same index. */
function cacheDirOf(dir: string, cacheRoot: string | false | undefined): string | false | undefined {
  const hash = createHash('sha256').update(dir).digest('hex').slice(0, 8);
  return typeof cacheRoot === 'string'
    ? join(cacheRoot, `${projectSlug(folderName(dir))}-${hash}`)
    : cacheRoot;
}

/** Stops every backlog's watcher and writes what is pending. */
export async function closeWorkspace(ws: Workspace): Promise<void> {
  await Promise.all(ws.projects.map((p) => closeBacklog(p.service)));
}

/**
 * The backlog folder `dir` names: itself when it is one (a `config.yml` or a `tasks/` folder), else its
 * `backlog/` folder (a repository); NOT_FOUND when it does not exist, NOT_A_BACKLOG when it holds neither.
 */
export async function backlogFolder(dir: string): Promise<string> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory())
    throw new BacklogError(
      'NOT_FOUND',
      `Backlog folder not found: ${dir}`,
      'Check the path (--dir, or the workspace file).',
      {
        dir,
      },
    );
  const names = await readdir(dir);
  if (names.includes('config.yml') || names.includes('tasks')) return dir;
  const inner = join(dir, 'backlog');
  if ((await stat(inner).catch(() => null))?.isDirectory()) return inner;
  throw new BacklogError(
    'NOT_A_BACKLOG',
    `${dir} is not a backlog: it has no config.yml, no tasks/ folder and no backlog/ folder`,
    'Point at the backlog folder itself (the one with tasks/ or, in a Backlog.md project, config.yml), or at the repository that holds it.',
    { dir },
  );
}

/** The folder's name as a project name: the repository's for a `backlog/` folder. */
function folderName(dir: string): string {
  const folder = basename(dir);
  return folder.toLowerCase() === 'backlog' ? basename(dirname(dir)) || folder : folder;
}

function unreadable(dir: string, err: unknown): BacklogError {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'EPERM')
    return new BacklogError('FORBIDDEN', `cannot read ${dir} (${code})`, "Check the folder's permissions.", {
      dir,
    });
  return new BacklogError(
    'INTERNAL',
    `could not open ${dir}: ${(err as Error)?.message ?? String(err)}`,
    'Run backlog-search diagnostics --dir on that folder alone.',
    { dir },
  );
}
