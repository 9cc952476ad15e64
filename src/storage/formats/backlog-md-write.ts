/**
 * Writing tasks as Backlog.md writes them, so its own CLI reads them back unchanged
 * (test/backlog-md-cli.test.ts compares our files with the ones `backlog task create` writes):
 *
 * - the file `tasks/back-12 - Title-words.md` (the id's prefix in lower case, the title cleaned by
 *   Backlog.md's rules), a sub-task `back-12.1 - ...`;
 * - the id: the configured prefix and the next number after every task in tasks/ and completed/ (archived
 *   tasks are not counted, as Backlog.md does not count them), a sub-task's its parent's and the next index;
 * - front matter in Backlog.md's order, dates as `2026-11-25 14:30` (local time), js-yaml's layout;
 * - the description in its section markers, and the Definition of Done checklist from config.yml.
 */
import { stringifyFrontmatter } from '../frontmatter.js';

/** Our field names -> the keys Backlog.md writes them under. */
export const BACKLOG_MD_KEYS: Readonly<Record<string, string>> = {
  tags: 'labels',
  parent_id: 'parent_task_id',
  author: 'reporter',
  created_at: 'created_date',
  updated_at: 'updated_date',
};

/** Backlog.md's cleaning of a title for a file name: path-unsafe characters become `-`, noisy punctuation goes. */
export function fileTitle(title: string): string {
  return title
    .replace(/[<>:"/\\|?*]/g, '-')
    .replace(/['(),!@#$%^&+=[\]{};]/g, '')
    .replace(/\s+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/** `BACK-12.1` + title -> `back-12.1 - Title-words.md`. */
export function taskFileName(id: string, title: string): string {
  const m = /^([A-Za-z]+)(-.*)$/.exec(id);
  const name = m ? `${m[1].toLowerCase()}${m[2]}` : id;
  return `${name} - ${fileTitle(title)}.md`;
}

/** A date as Backlog.md writes it: `2026-11-25 14:30`, local time. */
export function backlogMdNow(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}`;
}

const ID = /^([A-Za-z]+)-(\d+)((?:\.\d+)*)$/;

/**
 * The id of a new task: `PREFIX-(max + 1)` over `existing` (the ids of the tasks Backlog.md counts), or
 * `<parent>.(max child + 1)` for a sub-task. `pad` zero-pads the number (config `zero_padded_ids`).
 */
export function nextTaskId(prefix: string, existing: Iterable<string>, pad = 0, parent?: string): string {
  let max = 0;
  if (parent) {
    const own = `${parent.toLowerCase()}.`;
    for (const id of existing)
      if (id.toLowerCase().startsWith(own)) {
        const child = Number.parseInt(id.slice(own.length).split('.')[0], 10);
        if (Number.isFinite(child)) max = Math.max(max, child);
      }
    return `${parent}.${max + 1}`;
  }
  for (const id of existing) {
    const m = ID.exec(id);
    if (m && m[1].toUpperCase() === prefix.toUpperCase()) max = Math.max(max, Number.parseInt(m[2], 10));
  }
  return `${prefix.toUpperCase()}-${String(max + 1).padStart(pad, '0')}`;
}

/** Our `references` split as Backlog.md keeps them: task ids are `dependencies`, the rest `references`. */
export function splitReferences(refs: readonly string[]): { dependencies: string[]; references: string[] } {
  const isId = (r: string) => /^[A-Za-z]+-\d+(?:\.\d+)*$/.test(r.trim());
  return { dependencies: refs.filter(isId), references: refs.filter((r) => !isId(r)) };
}

export interface NewBacklogMdTask {
  id: string;
  title: string;
  status: string;
  assignee: string[];
  reporter?: string;
  createdDate: string;
  labels: string[];
  dependencies: string[];
  references: string[];
  parent?: string;
  priority?: string;
  ordinal: number;
  /** Other front matter fields, after Backlog.md's own. */
  extra?: Record<string, unknown>;
  description: string;
  definitionOfDone: string[];
}

/** The whole file of a new task, as `backlog task create` writes it. */
export function newTaskText(t: NewBacklogMdTask): string {
  const fm: Record<string, unknown> = {
    id: t.id,
    title: t.title,
    status: t.status,
    assignee: t.assignee,
    ...(t.reporter ? { reporter: t.reporter } : {}),
    created_date: t.createdDate,
    labels: t.labels,
    dependencies: t.dependencies,
    ...(t.references.length ? { references: t.references } : {}),
    ...(t.parent ? { parent_task_id: t.parent } : {}),
    ...(t.priority ? { priority: t.priority } : {}),
    ordinal: t.ordinal,
    ...t.extra,
  };
  const sections: string[] = [];
  if (t.description.trim())
    sections.push(
      `## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n${t.description.trim()}\n<!-- SECTION:DESCRIPTION:END -->`,
    );
  if (t.definitionOfDone.length)
    sections.push(
      `## Definition of Done\n<!-- DOD:BEGIN -->\n${t.definitionOfDone.map((d, i) => `- [ ] #${i + 1} ${d}`).join('\n')}\n<!-- DOD:END -->`,
    );
  const text = stringifyFrontmatter(fm, sections.join('\n\n'), { foldLongLines: true });
  // Backlog.md keeps one blank line between the front matter and the body.
  return text.replace(/^(---\n(?:.*\n)*?---)\n(?!$)/, '$1\n\n');
}
