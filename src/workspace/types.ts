/** The shapes of a workspace (workspace.ts), shared with its writes (writes.ts). */
import type { ErrorCode } from '../errors.js';
import type { BacklogService } from '../service/backlog-service.js';
import type { ItemSummary } from '../service/summary.js';

export interface WorkspaceProject {
  /** Unique in the workspace; what `project` filters and qualified ids name. */
  readonly name: string;
  readonly dir: string;
  readonly service: BacklogService;
}

/** A backlog of the workspace that could not be opened: the others are served. */
export interface ProjectProblem {
  name: string;
  dir: string;
  code: ErrorCode;
  message: string;
  hint: string;
}

/** `project`: one name, a list, a comma-separated string, or `*` for every open backlog. */
export interface ProjectOption {
  project?: string | string[];
}

/** An item, result or summary as a workspace of several backlogs returns it. */
export type WithProject<T> = T & { project?: string };

/** What the writes need of the workspace. */
export interface WorkspaceScope {
  readonly multi: boolean;
  byName(name: string): WorkspaceProject | undefined;
  scope(project: string | string[] | undefined): WorkspaceProject[];
  locate(ref: string, scope?: WorkspaceProject[]): { p: WorkspaceProject; id: string };
  idOf(p: WorkspaceProject, id: string): string;
  tagSummary(p: WorkspaceProject, s: ItemSummary): WithProject<ItemSummary>;
}
