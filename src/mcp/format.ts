/**
 * The text of tool results: one line per hit or item, facts separated by " | ", nothing said twice.
 * This is what a `concise` answer is made of (docs/mcp.md, "Response size").
 */
import type {
  BacklogService,
  ItemSummary,
  RelatedResult,
  SearchResponse,
  SearchResult,
  WriteResult,
} from '../service/backlog-service.js';
import { resourceUri } from '../storage/parse.js';
import type { BacklogItem, TaskState } from '../storage/types.js';
import { kindLabel } from '../service/summary.js';
import { qualify } from '../workspace/ids.js';
import type { Workspace } from '../workspace/workspace.js';
import type { ToolOutput } from './tool.js';

/** The services of the open projects (the first one's examples stand for all in descriptions). */
function services(ws: Workspace): BacklogService[] {
  return ws.projects.map((p) => p.service);
}

/** A task id of the first backlog, for examples in tool descriptions (`TASK-0001`, `BACK-200`, `api:BACK-200`). */
export function exampleId(ws: Workspace): string {
  const first = ws.projects[0];
  const { name, config } = first.service.format;
  const id =
    first.service.vocabulary().example_ids[0] ??
    (name === 'native' ? `${config.taskPrefix}-0001` : `${config.taskPrefix}-12`);
  return ws.idOf(first, id);
}

/** The kinds of item the backlogs have, as their own tools name them: `tasks, epics and resources`. */
export function kindsPhrase(ws: Workspace): string {
  const plurals = [
    ...new Set(services(ws).flatMap((s) => s.format.vocabulary.kinds.map((k) => k.plural.toLowerCase()))),
  ];
  return plurals.length > 1 ? `${plurals.slice(0, -1).join(', ')} and ${plurals.at(-1)}` : plurals.join('');
}

/** What a task can be: `task or epic` (native), `task` (Backlog.md: no epics). */
export function taskKinds(ws: Workspace): string {
  return services(ws).some((s) => s.format.vocabulary.kinds.some((k) => k.type === 'epic'))
    ? 'task or epic'
    : 'task';
}

/** The smallest answer budget of the open backlogs (limits.maxResponseChars). */
export function responseBudget(ws: Workspace): number {
  return Math.min(...services(ws).map((s) => s.limits.maxResponseChars));
}

/** An item's resource URI, naming its project when it has one (several backlogs open). */
export function uriOf(path: string, project?: string): string {
  return project ? qualify(project, resourceUri(path)) : resourceUri(path);
}

export function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `Done` for a task (the id says it is one), `epic/open`, `document`, `In Progress, archived`. */
export function kindOf(x: { type: string; status: string | null; state?: TaskState | null }): string {
  return kindLabel(x, true);
}

/** Cuts `text` to at most `max` characters from `start` without splitting a surrogate pair. */
export function cut(text: string, start: number, max: number): string {
  let end = Math.min(text.length, start + max);
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return text.slice(start, end);
}

/** Every field of an item with a window of its content (`maxChars` from `offset`): a detailed answer. */
export interface ItemView extends Pick<
  BacklogItem,
  | 'id'
  | 'title'
  | 'status'
  | 'state'
  | 'parent_id'
  | 'path'
  | 'tags'
  | 'author'
  | 'assignee'
  | 'priority'
  | 'references'
  | 'created_at'
  | 'updated_at'
> {
  /** Set when several backlogs are open. */
  project?: string;
  type: string;
  uri: string;
  content: string;
  content_length: number;
  truncated: boolean;
  next_content_offset?: number;
}

export function itemView(
  item: BacklogItem & { project?: string },
  maxChars: number,
  offset: number,
): ItemView {
  const start = Math.min(offset, item.body.length);
  const content = cut(item.body, start, maxChars);
  const end = start + content.length;
  const view: ItemView = {
    id: item.id,
    ...(item.project ? { project: item.project } : {}),
    type: item.type,
    title: item.title,
    status: item.status,
    state: item.state,
    parent_id: item.parent_id,
    path: item.path,
    uri: uriOf(item.path, item.project),
    tags: item.tags,
    author: item.author,
    assignee: item.assignee,
    priority: item.priority,
    references: item.references,
    created_at: item.created_at,
    updated_at: item.updated_at,
    content,
    content_length: item.body.length,
    truncated: end < item.body.length,
  };
  if (end < item.body.length) view.next_content_offset = end;
  return view;
}

/** The head line, one line of facts, then the content once (with a note on how to read on if cut). */
export function itemText(view: ItemView): string {
  const facts = [
    `path: ${view.path}`,
    view.parent_id && `parent: ${view.parent_id}`,
    view.tags.length && `tags: ${view.tags.join(', ')}`,
    view.assignee && `assignee: ${view.assignee}`,
    view.priority && `priority: ${view.priority}`,
    view.references.length && `references: ${view.references.join(', ')}`,
    view.updated_at && `updated: ${view.updated_at}`,
  ].filter(Boolean);
  const lines = [`${view.id} [${kindOf(view)}] ${view.title}`, facts.join(' | ')];
  const offset = (view.next_content_offset ?? view.content_length) - view.content.length;
  if (offset > 0) lines.push(`[from character ${offset} of ${view.content_length}]`);
  lines.push('', view.content.trim());
  if (view.truncated)
    lines.push(
      `[cut at ${view.next_content_offset} of ${view.content_length} characters; pass content_offset ${view.next_content_offset} for more]`,
    );
  return lines.join('\n');
}

/**
 * One line per hit: id, label, title, the copies of it in other projects it stands for (`also_in`,
 * docs/workspace.md), and the matched passage unless it is the title itself.
 */
export function hitLine(r: SearchResult & { score?: number }): string {
  const passage = r.snippet.text && r.snippet.field !== 'title' ? ` — ${oneLine(r.snippet.text)}` : '';
  const semantic = r.match === 'semantic' ? ' (by meaning)' : '';
  const score = r.score !== undefined ? ` (score ${r.score.toFixed(3)})` : '';
  const also = r.also_in?.length ? ` (also in ${r.also_in.join(', ')})` : '';
  return `${r.id} [${kindOf(r)}] ${r.title}${semantic}${score}${also}${passage}`;
}

const RELATION = { parent: 'parent of', children: 'child of', references: 'linked to' } as const;

function relatedLine(r: RelatedResult): string {
  return `${r.id} [${kindOf(r)}] ${r.title} (${RELATION[r.relation]} ${r.via}, ${r.distance} hop${r.distance > 1 ? 's' : ''})`;
}

/** A search answer as text: a head line, one line per hit (its content under it when asked), groups, related. */
export function searchText(
  res: SearchResponse,
  results: Array<SearchResult & { content_length?: number; truncated?: boolean }>,
  start: number,
): string {
  const from = results.length ? ` (${start + 1}-${start + results.length})` : '';
  const more = res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : '';
  const didYouMean = res.suggestions?.length
    ? ` Did you mean ${res.suggestions.map((s) => `"${s}"`).join(' or ')}?`
    : '';
  const lines = [
    res.total === 0
      ? `No results for "${res.query}" (${res.search_mode}).${didYouMean}`
      : `${res.total} result${res.total === 1 ? '' : 's'} for "${res.query}"${from}, ${res.search_mode}${more}`,
  ];
  // The head line already says when nothing matched; the service's warning would say it twice.
  for (const w of res.warnings ?? [])
    if (res.total > 0 || !w.startsWith('nothing matched')) lines.push(`warning: ${w}`);
  for (const r of results) {
    lines.push(hitLine(r));
    if (r.content !== undefined) {
      lines.push(r.content.trim());
      if (r.truncated) lines.push(`[cut at ${r.content.length} of ${r.content_length} characters]`);
      lines.push('');
    }
  }
  for (const g of res.groups ?? []) {
    lines.push(`${g.key}: ${g.count} match${g.count === 1 ? '' : 'es'}`);
    for (const r of g.results) lines.push(`  ${r.id} [${kindOf(r)}] ${r.title}`);
  }
  if (res.related?.length) lines.push('related:', ...res.related.map(relatedLine));
  return lines.join('\n').trimEnd();
}

export function summaryLine(s: ItemSummary): string {
  return `${s.id} [${kindOf(s)}] ${s.title}`;
}

export function writeOutput(result: WriteResult): ToolOutput {
  const extra = [
    result.replacements !== undefined &&
      `${result.replacements} replacement${result.replacements === 1 ? '' : 's'}`,
    result.orphaned?.length && `children left without parent: ${result.orphaned.join(', ')}`,
  ].filter(Boolean);
  const title = result.item ? ` "${result.item.title}"` : '';
  return {
    structured: { ...result },
    text: `${result.action} ${result.id}${title} (${result.path})${extra.length ? `; ${extra.join('; ')}` : ''}`,
  };
}
