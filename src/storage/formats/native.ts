/**
 * The project's own format: tasks and epics in `tasks/` (`TASK-0001-slug.md`, front matter as in
 * README.md), every other text file a resource.
 */
import { taskFrontmatterSchema, PRIORITIES } from '../schema.js';
import { STATUSES } from '../types.js';
import { statusKey } from '../ids.js';
import { FRONTMATTER_EXTENSIONS, baseName, fileType } from '../file-names.js';
import { asText } from '../values.js';
import type { BacklogConfig, BacklogFormat, FileRole, Flag } from './types.js';

export const NATIVE_CONFIG: BacklogConfig = {
  project: null,
  statuses: [...STATUSES],
  defaultStatus: 'open',
  taskPrefix: 'TASK',
  priorities: [...PRIORITIES],
  labels: [],
  definitionOfDone: [],
  zeroPaddedIds: 4,
};

/** Tasks and epics live in `tasks/` (any depth); every other text file is a resource. */
export function isNativeTaskPath(path: string): boolean {
  return path.startsWith('tasks/') && FRONTMATTER_EXTENSIONS.has(fileType(path));
}

export const nativeFormat: BacklogFormat = {
  name: 'native',
  config: NATIVE_CONFIG,
  configPath: null,
  signature: 'native',
  configDiagnostics: [],
  vocabulary: {
    kinds: [
      { type: 'task', label: 'Task', plural: 'Tasks' },
      { type: 'epic', label: 'Epic', plural: 'Epics' },
      { type: 'resource', label: 'Resource', plural: 'Resources' },
    ],
    states: ['active'],
    parent: 'epic',
  },
  roleOf(path: string): FileRole {
    return isNativeTaskPath(path) ? { type: 'task', state: 'active' } : { type: 'resource', state: null };
  },
  prepareFrontmatter: (block) => block,
  idFromFileName(path: string): string | null {
    const m = /^((?:task|epic)-\d+(?:\.\d+)*)/i.exec(baseName(path));
    return m ? m[1] : null;
  },
  isEpic(frontmatter, id) {
    const declared = typeof frontmatter.type === 'string' ? frontmatter.type.toLowerCase() : undefined;
    return declared === 'epic' || (!declared && /^epic-/i.test(id));
  },
  dateText: asText,
  canonicalStatus: (status) => status,
  checkTask(fm: Record<string, unknown>, flag: Flag): void {
    // Dates come from YAML as Date objects; compare them as the ISO text we would write.
    const normalized: Record<string, unknown> = { ...fm };
    for (const key of ['created_at', 'updated_at'])
      if (fm[key] instanceof Date) normalized[key] = asText(fm[key]);
    const result = taskFrontmatterSchema().safeParse(normalized);
    if (result.success) return;
    for (const issue of result.error.issues) {
      const field = issue.path.join('.') || 'frontmatter';
      const value = field in fm ? JSON.stringify(asText(fm[field])) : 'missing';
      flag(`invalid_${field}`, `${field} ${value} is outside the schema (${issue.message}); kept as written`);
    }
  },
};

/** True when `status` is one of `statuses` in some spelling. */
export function hasStatus(statuses: readonly string[], status: string): boolean {
  const key = statusKey(status);
  return statuses.some((s) => statusKey(s) === key);
}
