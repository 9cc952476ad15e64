import type { JSX } from 'preact';
import { itemRef, type ItemSummary } from '../api.js';
import { statusLabel, statusTone } from '../format.js';
import { getState, hrefFor, navigate, type UrlState } from '../state.js';
import { TypeIcon } from './icons.js';

/** Plain clicks on viewer links navigate in place; modified clicks (new tab, copy) keep the href. */
export function onNavigate(patch: Partial<UrlState>) {
  return (e: JSX.TargetedMouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(patch);
  };
}

export function StatusPill({ status }: { status: string | null }) {
  if (!status) return null;
  return (
    <span class={`pill tone-${statusTone(status)}`}>
      <span class="dot" aria-hidden="true" />
      {statusLabel(status)}
    </span>
  );
}

const TYPE_NAMES: Record<string, string> = {
  task: 'Task',
  epic: 'Epic',
  resource: 'Doc',
  document: 'Doc',
  decision: 'Decision',
  milestone: 'Milestone',
};

/** Tasks and epics have statuses and a board column; every other kind is a document. */
export function isTaskLike(type: string): boolean {
  return type === 'task' || type === 'epic';
}

export function TypeBadge({ type }: { type: string }) {
  return (
    <span class={`type-badge type-${type}`}>
      <TypeIcon type={type} size={13} />
      {TYPE_NAMES[type] ?? 'Doc'}
    </span>
  );
}

/** A link that opens an item's detail. */
export function ItemLink({
  item,
  class: cls,
  title,
  children,
}: {
  item: Pick<ItemSummary, 'id' | 'type' | 'path'>;
  class?: string;
  /** A tooltip. */
  title?: string;
  children: JSX.Element | (JSX.Element | null | false)[] | string;
}) {
  const ref = itemRef(item);
  return (
    <a
      class={cls}
      href={hrefFor(getState(), { item: ref })}
      onClick={onNavigate({ item: ref })}
      data-id={item.id}
      title={title}
    >
      {children}
    </a>
  );
}

/** The short name shown for an item: its id, or the file name for a resource. */
export function shortId(item: Pick<ItemSummary, 'id' | 'type' | 'path'>): string {
  return item.type === 'resource' || item.id.startsWith('mcp://')
    ? item.path.slice(item.path.lastIndexOf('/') + 1)
    : item.id;
}

/** An item's id as written in its file, or null when it has none (its id is then a URI made from its path). */
export function ownId(item: Pick<ItemSummary, 'id'>): string | null {
  return item.id.startsWith('mcp://') ? null : item.id;
}

/**
 * The short id in a row, cut with an ellipsis by CSS when it is long (a file name can be 80 characters):
 * never wider than its column, the whole of it in the tooltip.
 */
export function IdLabel({ item }: { item: Pick<ItemSummary, 'id' | 'type' | 'path'> }) {
  const id = shortId(item);
  return (
    <span class="row-id" title={id}>
      {id}
    </span>
  );
}

export function Tags({ tags, max = 3 }: { tags: string[]; max?: number }) {
  if (!tags.length) return null;
  const shown = tags.slice(0, max);
  return (
    <span class="tags">
      {shown.map((t) => (
        <span class="tag" key={t}>
          {t}
        </span>
      ))}
      {tags.length > max && <span class="tag more">+{tags.length - max}</span>}
    </span>
  );
}
