/**
 * A backlog format: how the files of one kind of backlog map onto BacklogItem. The project's own
 * format (`native`) and Backlog.md's (`backlog-md`) are the two; `detectFormat` picks one per folder.
 * Everything downstream (search, filters, MCP, the viewer) sees only BacklogItems, never a format.
 */
import type { Diagnostic, ItemType, TaskState } from '../types.js';

export const FORMAT_NAMES = ['native', 'backlog-md'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** What a file is in its backlog, from its path. */
export interface FileRole {
  /** `task` may still become an `epic` from its front matter (native format). */
  type: Exclude<ItemType, 'epic'>;
  state: TaskState | null;
}

/** The settings of a backlog: Backlog.md's from its config.yml, the native format's built in. */
export interface BacklogConfig {
  /** Project name, when the backlog has one. */
  project: string | null;
  /** Statuses in board order. */
  statuses: string[];
  /** The status a new task gets. */
  defaultStatus: string;
  /** The prefix of task ids (`TASK`, `BACK`), as ids are written: upper case. */
  taskPrefix: string;
  /** Priorities, lowest first; empty: any. */
  priorities: string[];
  /** Labels the project lists (suggestions; other labels are allowed). */
  labels: string[];
  /** Checklist a new task gets (Backlog.md's `definition_of_done`). */
  definitionOfDone: string[];
  /** Digits new task numbers are padded to (Backlog.md's `zero_padded_ids`; 0: none). */
  zeroPaddedIds: number;
}

/** A kind of item as the backlog's own tool names it. */
export interface KindName {
  type: ItemType;
  label: string;
  plural: string;
}

/**
 * How a backlog's own tool names things, so every surface speaks it: the kinds of item it has (in the
 * order a surface offers them), the task states its folders give, and what a task's parent is.
 */
export interface FormatVocabulary {
  kinds: KindName[];
  /** `active` first; a format whose tasks are all active has only it. */
  states: TaskState[];
  /** A task's parent: `epic` (native), `parent task` (Backlog.md: a sub-task's parent is a task). */
  parent: string;
}

export type Flag = (code: string, message: string, level?: Diagnostic['level'], line?: number | null) => void;

export interface BacklogFormat {
  readonly name: FormatName;
  readonly config: BacklogConfig;
  /** The file that holds the config, relative to the root (`config.yml`), or null. */
  readonly configPath: string | null;
  /** Changes whenever anything that changes how files are read changes (the persisted index's version has it). */
  readonly signature: string;
  /** Problems with the config itself (reported with the files' diagnostics). */
  readonly configDiagnostics: Diagnostic[];
  readonly vocabulary: FormatVocabulary;
  /** What the file at `path` is; null when it is not part of the backlog (the format's own config file). */
  roleOf(path: string): FileRole | null;
  /** The front matter block as YAML must read it (Backlog.md quotes bare `@name` values, as it does itself). */
  prepareFrontmatter(block: string): string;
  /** The id a task file's name gives, when its front matter has none. */
  idFromFileName(path: string): string | null;
  /** Whether a task with this front matter is an epic. */
  isEpic(frontmatter: Record<string, unknown>, id: string): boolean;
  /** A date from front matter, as this format writes it (text), or null. */
  dateText(value: unknown): string | null;
  /** A status as this backlog spells it (the configured name when one matches in any case and spacing). */
  canonicalStatus(status: string): string;
  /** Values of a task's front matter this format does not accept, flagged (never fixed). */
  checkTask(frontmatter: Record<string, unknown>, flag: Flag): void;
}
