/** The text blocks of tool results: one compact line per item, the same facts as the structured content. */
import type { z } from 'zod';
import type { BacklogService, ItemSummary, WriteResult } from '../service/backlog-service.js';
import { resourceUri } from '../storage/parse.js';
import type { BacklogItem } from '../storage/types.js';
import type { itemShape } from './shapes.js';
import type { ToolOutput } from './tool.js';

export type ItemView = z.infer<typeof itemShape>;

/** A task id as this backlog writes them, for examples in tool descriptions (`TASK-0001`, `BACK-12`). */
export function exampleId(service: BacklogService): string {
  const { name, config } = service.format;
  return name === 'native' ? `${config.taskPrefix}-0001` : `${config.taskPrefix}-12`;
}

export function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function kindOf(x: { type: string; status: string | null }): string {
  return x.status ? `${x.type}/${x.status}` : x.type;
}

/** Cuts `text` to at most `max` characters from `start` without splitting a surrogate pair. */
export function cut(text: string, start: number, max: number): string {
  let end = Math.min(text.length, start + max);
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return text.slice(start, end);
}

/** An item with a window of its content (`maxChars` from `offset`). */
export function itemView(item: BacklogItem, maxChars: number, offset: number): ItemView {
  const content = cut(item.body, Math.min(offset, item.body.length), maxChars);
  const end = Math.min(offset, item.body.length) + content.length;
  const view: ItemView = {
    id: item.id,
    type: item.type,
    title: item.title,
    status: item.status,
    parent_id: item.parent_id,
    path: item.path,
    uri: resourceUri(item.path),
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

export function itemText(view: ItemView): string {
  const facts = [
    view.parent_id && `parent: ${view.parent_id}`,
    view.tags.length && `tags: ${view.tags.join(', ')}`,
    view.assignee && `assignee: ${view.assignee}`,
    view.priority && `priority: ${view.priority}`,
    view.updated_at && `updated: ${view.updated_at}`,
  ].filter(Boolean);
  const lines = [`${view.id} [${kindOf(view)}] ${view.title} (${view.path})`];
  if (facts.length) lines.push(facts.join(' | '));
  lines.push('', view.content.trim());
  if (view.truncated)
    lines.push(
      `[cut: ${view.content.length} of ${view.content_length} characters; pass content_offset ${view.next_content_offset} for more]`,
    );
  return lines.join('\n');
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
