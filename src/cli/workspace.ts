/**
 * Several backlogs on the command line (docs/workspace.md): `--dir` repeated, `--dir NAME=PATH` to name
 * one, or `--workspace FILE` (YAML). One plain `--dir` stays the single-backlog path of every command.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { BacklogError } from '../errors.js';
import type { EmbeddingProvider } from '../embeddings/types.js';
import type { BacklogService } from '../service/backlog-service.js';
import type { OpenBacklogOptions } from '../service/open-backlog.js';
import { projectSlug } from '../workspace/ids.js';
import { beginOpenWorkspace, openWorkspace, type WorkspaceBacklog } from '../workspace/open-workspace.js';
import type { Workspace } from '../workspace/workspace.js';

/** commander's collector for a repeatable `--dir`. */
export function collectDir(value: string, previous: string[] | string | undefined): string[] {
  return [...(previous === undefined ? [] : [previous].flat()), value];
}

/** `NAME=PATH` -> { name, dir }; a plain path -> { dir }. A `=` inside a path after a `/` stays in the path. */
export function parseDirArg(arg: string): WorkspaceBacklog {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)=(.+)$/.exec(arg);
  return m ? { name: m[1], dir: resolve(m[2]) } : { dir: resolve(arg) };
}

/**
 * The backlogs of a workspace when the command line asks for one (several `--dir`, a named `--dir`, or a
 * workspace file); undefined for the single-backlog path (no `--dir`, or one plain `--dir`).
 */
export async function workspaceSpec(
  dirs: string[] | string | undefined,
  file: string | undefined,
): Promise<WorkspaceBacklog[] | undefined> {
  const given = dirs === undefined ? [] : [dirs].flat();
  const fromFile = file ? await readWorkspaceFile(file) : [];
  if (fromFile.length === 0 && given.length <= 1 && !given.some((d) => parseDirArg(d).name)) return undefined;
  return [...fromFile, ...given.map(parseDirArg)];
}

/**
 * A workspace file:
 *   backlogs:
 *     - dir: ../api/backlog        # relative to the file's folder
 *       name: api                  # optional
 *     - ../web                     # a repository: its backlog/ folder
 */
export async function readWorkspaceFile(file: string): Promise<WorkspaceBacklog[]> {
  const path = resolve(file);
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new BacklogError(
      'NOT_FOUND',
      `workspace file not found: ${path} (${err.code})`,
      'Check the path given to --workspace.',
      {
        field: 'workspace',
      },
    );
  });
  const bad = (why: string) =>
    new BacklogError(
      'INVALID_INPUT',
      `workspace file ${path}: ${why}`,
      'Write `backlogs:` followed by a list of folders, each a path or `{dir: PATH, name: NAME}` (docs/workspace.md).',
      { field: 'workspace' },
    );
  let data: unknown;
  try {
    data = parse(text, { maxAliasCount: 10 });
  } catch (err) {
    throw bad(`not YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const list = (data as { backlogs?: unknown } | null)?.backlogs;
  if (!Array.isArray(list) || list.length === 0) throw bad('no `backlogs:` list');
  const base = dirname(path);
  return list.map((entry, i): WorkspaceBacklog => {
    if (typeof entry === 'string') return { dir: resolve(base, entry) };
    const e = entry as { dir?: unknown; name?: unknown };
    if (typeof e?.dir !== 'string') throw bad(`entry ${i + 1} has no dir`);
    if (e.name !== undefined && typeof e.name !== 'string') throw bad(`entry ${i + 1}: name is not a string`);
    return { dir: resolve(base, e.dir), ...(e.name ? { name: e.name } : {}) };
  });
}

/** The workspace the options name (problems printed as warnings), or undefined for one backlog. */
export async function openCliWorkspace(
  dirs: string[] | string | undefined,
  file: string | undefined,
  embeddings: string | undefined,
  /** A server's options (watch, embeddings in the background); one-shot commands embed nothing. */
  server: Omit<OpenBacklogOptions, 'dir'> = {},
): Promise<Workspace | undefined> {
  const options = await workspaceOptions(dirs, file, embeddings, server);
  if (!options) return undefined;
  const ws = await openWorkspace(options);
  warnProblems(ws);
  return ws;
}

/**
 * openCliWorkspace for a server that answers before the backlogs are read (`mcp`): the workspace as soon
 * as every backlog's format is known, and `opened` when their files are read (beginOpenWorkspace).
 * Problems are printed as warnings when they are known.
 */
export async function beginCliWorkspace(
  dirs: string[] | string | undefined,
  file: string | undefined,
  embeddings: string | undefined,
  server: Omit<OpenBacklogOptions, 'dir'>,
): Promise<{ ws: Workspace; opened: Promise<Workspace> } | undefined> {
  const options = await workspaceOptions(dirs, file, embeddings, server);
  if (!options) return undefined;
  const begun = await beginOpenWorkspace(options);
  const known = begun.ws.problems.length;
  warnProblems(begun.ws);
  begun.opened.then(
    () => warnProblems(begun.ws, known),
    () => warnProblems(begun.ws, known),
  );
  return begun;
}

/** What openWorkspace and beginOpenWorkspace are given: the backlogs the options name, or undefined for one. */
async function workspaceOptions(
  dirs: string[] | string | undefined,
  file: string | undefined,
  embeddings: string | undefined,
  server: Omit<OpenBacklogOptions, 'dir'>,
): Promise<Parameters<typeof openWorkspace>[0] | undefined> {
  const backlogs = await workspaceSpec(dirs, file);
  if (!backlogs) return undefined;
  return {
    backlogs,
    embeddings: embeddings as EmbeddingProvider | undefined,
    embedMissing: 'never',
    ...server,
  };
}

/** The workspace's problems from the `from`-th on, as warnings on stderr. */
function warnProblems(ws: Workspace, from = 0): void {
  for (const p of ws.problems.slice(from))
    process.stderr.write(`warning ${p.code}: ${p.name}: ${p.message}\n`);
}

/** `--project` as a request option; on a single backlog it is checked against its name, then dropped. */
export function projectOf(target: BacklogService | Workspace, o: { project?: string }): { project?: string } {
  if (!o.project || 'projects' in target) return o.project ? { project: o.project } : {};
  const names = o.project.split(',').map((s) => s.trim().toLowerCase());
  if (!names.includes('*') && !names.includes(projectSlug(target.projectName)))
    throw new BacklogError(
      'INVALID_FILTER',
      `project: no project "${o.project}"`,
      `Use ${target.projectName}, or * for all.`,
      {
        field: 'project',
      },
    );
  return {};
}
