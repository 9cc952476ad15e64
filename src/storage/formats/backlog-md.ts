/**
 * Backlog.md's format (github.com/MrLesk/Backlog.md), read as its own CLI reads it:
 *
 *   config.yml                 statuses (board order), default_status, task_prefix, labels, priorities
 *   tasks/       back-72 - Title.md      tasks (sub-tasks `back-72.1`), state `active`
 *   completed/                          tasks, state `completed`
 *   archive/tasks/, archive/drafts/     tasks, state `archived`
 *   drafts/      draft-1 - Title.md      tasks, state `draft`
 *   docs/ (any depth), any readme.md    documents        decisions/   decisions
 *   milestones/, archive/milestones/    milestones (archived ones `archived`)
 *
 * Its front matter is YAML, except that `assignee: @name` (a bare `@`, which YAML reserves) is read as
 * the text `@name`: Backlog.md quotes those values before parsing, and so do we.
 */
import { createHash } from 'node:crypto';
import { statusKey } from '../ids.js';
import { FRONTMATTER_EXTENSIONS, baseName, fileType } from '../file-names.js';
import { asList, asText } from '../values.js';
import type { Diagnostic } from '../types.js';
import type { BacklogConfig, BacklogFormat, FileRole, Flag, FormatVocabulary } from './types.js';

export const BACKLOG_MD_CONFIG_FILE = 'config.yml';

/** Backlog.md's defaults for what config.yml leaves out. */
const DEFAULTS: BacklogConfig = {
  project: null,
  statuses: ['To Do', 'In Progress', 'Done'],
  defaultStatus: 'To Do',
  taskPrefix: 'TASK',
  priorities: ['low', 'medium', 'high'],
  labels: [],
  definitionOfDone: [],
  zeroPaddedIds: 0,
};

/** Keys only a Backlog.md config.yml has (any one of them is enough to recognise it). */
export const BACKLOG_MD_CONFIG_KEYS = [
  'task_prefix',
  'default_status',
  'statuses',
  'project_name',
  'definition_of_done',
  'zero_padded_ids',
];

/** The config from config.yml's data; values of the wrong shape are reported and replaced by defaults. */
export function backlogMdConfig(data: Record<string, unknown>): {
  config: BacklogConfig;
  problems: string[];
} {
  const problems: string[] = [];
  const list = (key: string, fallback: string[]): string[] => {
    if (data[key] === undefined) return fallback;
    const values = Array.isArray(data[key]) ? asList(data[key]) : [];
    if (!values.length && fallback.length) {
      problems.push(`${key} is not a list of names; Backlog.md's default (${fallback.join(', ')}) is used`);
      return fallback;
    }
    return values;
  };
  const statuses = list('statuses', DEFAULTS.statuses);
  const prefixes =
    data.prefixes && typeof data.prefixes === 'object' ? (data.prefixes as Record<string, unknown>) : {};
  const prefix = asText(data.task_prefix) ?? asText(prefixes.task) ?? DEFAULTS.taskPrefix;
  if (!/^[A-Za-z]+$/.test(prefix)) problems.push(`task_prefix "${prefix}" is not letters only`);
  const defaultStatus = asText(data.default_status) ?? statuses[0] ?? DEFAULTS.defaultStatus;
  return {
    config: {
      project: asText(data.project_name),
      statuses,
      defaultStatus: statuses.find((s) => statusKey(s) === statusKey(defaultStatus)) ?? defaultStatus,
      taskPrefix: /^[A-Za-z]+$/.test(prefix) ? prefix.toUpperCase() : DEFAULTS.taskPrefix,
      priorities: list('priorities', DEFAULTS.priorities).map((p) => p.toLowerCase()),
      labels: list('labels', []),
      definitionOfDone: list('definition_of_done', []),
      zeroPaddedIds: Math.max(0, Math.min(10, Number.parseInt(asText(data.zero_padded_ids) ?? '0', 10) || 0)),
    },
    problems,
  };
}

/** `@name` after `assignee:` / `reporter:` (alone or in a `[...]` list) quoted, as Backlog.md does before YAML sees it. */
export function quoteBareNames(block: string): string {
  return block
    .split(/\r?\n/)
    .map((line) => {
      const m = /^(\s*(?:assignee|reporter):\s*)(.*?)\s*$/.exec(line);
      if (!m || !m[2]) return line;
      const [, key, value] = m;
      const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
      const flow = /^\[(.*)\]\s*(#.*)?$/.exec(value);
      if (flow) {
        const items = flow[1]
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean)
          .map((e) => (e.startsWith('@') ? quote(e) : e));
        return `${key}[${items.join(', ')}]${flow[2] ? ` ${flow[2]}` : ''}`;
      }
      return /^['"\-[]/.test(value) ? line : `${key}${quote(value)}`;
    })
    .join('\n');
}

/** A date as Backlog.md keeps it: `2025-06-09`, or `2025-06-09 14:30` when it has a time. */
export function backlogMdDate(value: unknown): string | null {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return null;
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 16).replace('T', ' ');
  }
  const text = asText(value)?.trim();
  if (!text) return null;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text) ? text.replace('T', ' ') : text;
}

const TASK_FOLDERS: [prefix: string, role: FileRole][] = [
  ['tasks/', { type: 'task', state: 'active' }],
  ['completed/', { type: 'task', state: 'completed' }],
  ['archive/tasks/', { type: 'task', state: 'archived' }],
  ['archive/drafts/', { type: 'task', state: 'archived' }],
  ['drafts/', { type: 'task', state: 'draft' }],
  ['archive/milestones/', { type: 'milestone', state: 'archived' }],
  ['milestones/', { type: 'milestone', state: null }],
  ['decisions/', { type: 'decision', state: null }],
  ['docs/', { type: 'document', state: null }],
];

/** Backlog.md's words: tasks (sub-tasks, drafts), documents, decisions, milestones; no epics. */
const BACKLOG_MD_VOCABULARY: FormatVocabulary = {
  kinds: [
    { type: 'task', label: 'Task', plural: 'Tasks' },
    { type: 'document', label: 'Document', plural: 'Documents' },
    { type: 'decision', label: 'Decision', plural: 'Decisions' },
    { type: 'milestone', label: 'Milestone', plural: 'Milestones' },
    { type: 'resource', label: 'File', plural: 'Other files' },
  ],
  states: ['active', 'draft', 'completed', 'archived'],
  parent: 'parent task',
};

export function backlogMdFormat(
  config: BacklogConfig,
  configText: string,
  configDiagnostics: Diagnostic[] = [],
): BacklogFormat {
  const byKey = new Map(config.statuses.map((s) => [statusKey(s), s]));
  return {
    name: 'backlog-md',
    config,
    configPath: BACKLOG_MD_CONFIG_FILE,
    signature: `backlog-md:${createHash('sha256').update(configText).digest('hex').slice(0, 16)}`,
    configDiagnostics,
    vocabulary: BACKLOG_MD_VOCABULARY,
    roleOf(path: string): FileRole | null {
      // config.yml is the settings, and searchable as a file ("where is the task prefix set?").
      if (path === BACKLOG_MD_CONFIG_FILE) return { type: 'resource', state: null };
      const markdown = FRONTMATTER_EXTENSIONS.has(fileType(path));
      if (markdown && baseName(path).toLowerCase() === 'readme') return { type: 'document', state: null };
      for (const [prefix, role] of TASK_FOLDERS) if (markdown && path.startsWith(prefix)) return role;
      return { type: 'resource', state: null };
    },
    prepareFrontmatter: quoteBareNames,
    idFromFileName(path: string): string | null {
      const m = /^([A-Za-z]+-\d+(?:\.\d+)*)(?: - |$)/.exec(baseName(path));
      return m ? m[1].toUpperCase() : null;
    },
    isEpic: () => false,
    dateText: backlogMdDate,
    canonicalStatus: (status) => byKey.get(statusKey(status)) ?? status,
    checkTask(fm: Record<string, unknown>, flag: Flag): void {
      // Backlog.md reads any status and accepts `Draft` besides the configured ones; a status outside
      // them only has no board column, so it is a note, not a problem.
      const status = asText(fm.status);
      if (status && !byKey.has(statusKey(status)) && statusKey(status) !== 'draft')
        flag(
          'unknown_status',
          `status "${status}" is not in config.yml (${config.statuses.join(', ')}): no board column shows it; kept as written`,
          'info',
        );
      const priority = asText(fm.priority)?.toLowerCase();
      if (priority && config.priorities.length && !config.priorities.includes(priority))
        flag(
          'unknown_priority',
          `priority "${asText(fm.priority)}" is not one of ${config.priorities.join(', ')}; Backlog.md ignores it`,
        );
    },
  };
}
