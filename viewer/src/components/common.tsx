import { createContext, type JSX } from 'preact';
import { useContext } from 'preact/hooks';
import { itemRef, type ItemSummary } from '../api.js';
import { statusLabel, statusTone } from '../format.js';
import { getState, hrefFor, navigate, type UrlState } from '../state.js';
import { NATIVE_VOCABULARY, kindLabel, type Vocabulary } from '../vocabulary.js';
import { EpicIcon, ParentTaskIcon, TypeIcon } from './icons.js';

/** The open backlog's vocabulary (GET /health), for labels and icons anywhere in the tree. */
export const VocabularyContext = createContext<Vocabulary>(NATIVE_VOCABULARY);
export const useVocabulary = () => useContext(VocabularyContext);

/** Several projects are shown together (the switcher's "All"): rows, cards and hits name their project. */
export const ShowProjectContext = createContext(false);

/** The project an item belongs to, when several are shown together; nothing otherwise. */
export function ProjectBadge({ project }: { project: string | undefined }) {
  const show = useContext(ShowProjectContext);
  if (!show || !project) return null;
  return (
    <span class="project-badge" title={`Project: ${project}`} data-project={project}>
      {project}
    </span>
  );
}

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

/** Tasks and epics have statuses and a board column; every other kind is a document. */
export function isTaskLike(type: string): boolean {
  return type === 'task' || type === 'epic';
}

export function TypeBadge({ type }: { type: string }) {
  const vocabulary = useVocabulary();
  return (
    <span class={`type-badge type-${type}`}>
      <TypeIcon type={type} size={13} />
      {kindLabel(vocabulary, type)}
    </span>
  );
}

const STATE_TITLES: Record<string, string> = {
  draft: 'A draft: not on the board until it is promoted',
  completed: 'Completed: moved out of the board',
  archived: 'Archived: no longer on the board',
};

/** `archived`, `completed` or `draft` beside an item that is not active; nothing for active tasks and documents. */
export function StateBadge({ state }: { state: string | null | undefined }) {
  if (!state || state === 'active') return null;
  return (
    <span class={`state-badge state-${state}`} title={STATE_TITLES[state]} data-state={state}>
      {state}
    </span>
  );
}

/** The icon of an item's parent: the epic's where it is an epic, else a parent task's. */
export function ParentIcon({ type, size }: { type: string | undefined; size?: number }) {
  const vocabulary = useVocabulary();
  const epic = type === 'epic' || (type === undefined && vocabulary.parent === 'epic');
  return epic ? <EpicIcon size={size} class="t-epic" /> : <ParentTaskIcon size={size} class="t-parent" />;
}

/** A link that opens an item's detail. */
export function ItemLink({
  item,
  class: cls,
  title,
  children,
}: {
  item: Pick<ItemSummary, 'id' | 'type' | 'path' | 'project'>;
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

/** The short name shown for an item: its id (without its project: that shows apart), or a resource's file name. */
export function shortId(item: Pick<ItemSummary, 'id' | 'type' | 'path' | 'project'>): string {
  if (item.type === 'resource' || item.id.startsWith('mcp://'))
    return item.path.slice(item.path.lastIndexOf('/') + 1);
  return item.project && item.id.startsWith(`${item.project}:`)
    ? item.id.slice(item.project.length + 1)
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
export function IdLabel({ item }: { item: Pick<ItemSummary, 'id' | 'type' | 'path' | 'project'> }) {
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
