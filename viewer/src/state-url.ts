/**
 * The viewer's state lives in the URL, so every screen is a deep link:
 *
 *   ?view=list|board|files  &types=task,document|all  &state=archived|all  &status=open
 *   &parent=EPIC-0001 (older links: &epic=)  &tag=auth
 *   &item=TASK-0001 (or a resource path)
 *   &q=login  &qtypes=task  &qsort=recent     (the spotlight, open while q is present)
 *   &project=demo                              (several backlogs served: the one shown; absent: all)
 *
 * Parsing and writing it are pure (tested in Node); ./state.ts keeps it in step with history.
 */
export type View = 'list' | 'board' | 'files';
/** Every kind of item the server knows; a backlog offers some of them (GET /health `vocabulary.kinds`). */
export const ITEM_TYPES = ['task', 'epic', 'document', 'decision', 'milestone', 'resource'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];
/** Where a task stands (Backlog.md: from its folder). The list and board show `active` ones by default. */
export const ITEM_STATES = ['active', 'draft', 'completed', 'archived'] as const;
export type ItemState = (typeof ITEM_STATES)[number];

export interface UrlState {
  view: View;
  /** Types shown in the list and board; empty means every type. */
  types: ItemType[];
  /**
   * Which tasks the list and board show by where they stand: '' for what the backlog's own tool lists
   * (active tasks and documents), `all`, or states (`archived`, `completed,draft`).
   */
  state: string;
  status: string;
  /** An epic or parent task: the list shows it and everything under it. */
  parent: string;
  tag: string;
  item: string;
  /** Spotlight: open when not null. */
  q: string | null;
  qtypes: ItemType[];
  qsort: 'relevant' | 'recent';
  /** The project shown when the server serves several backlogs; absent or '' for all of them. */
  project?: string;
}

/** Tasks and epics: what the list and board show when the URL names no types. */
export const DEFAULT_TYPES: ItemType[] = ['task', 'epic'];

function typesOf(value: string | null, fallback: ItemType[]): ItemType[] {
  if (value === null) return fallback;
  if (value === 'all' || value === '') return [];
  return value.split(',').filter((t): t is ItemType => (ITEM_TYPES as readonly string[]).includes(t));
}

/** `all`, or the known states of a comma list in their usual order; '' (the default) otherwise. */
function stateOf(value: string | null): string {
  if (!value) return '';
  const parts = value.split(',').map((s) => s.trim().toLowerCase());
  if (parts.includes('all')) return 'all';
  return ITEM_STATES.filter((s) => parts.includes(s)).join(',');
}

export function parseState(search: string): UrlState {
  const p = new URLSearchParams(search);
  const view = p.get('view');
  return {
    view: view === 'board' || view === 'files' ? view : 'list',
    types: typesOf(p.get('types'), DEFAULT_TYPES),
    state: stateOf(p.get('state')),
    status: p.get('status') ?? '',
    parent: p.get('parent') ?? p.get('epic') ?? '',
    tag: p.get('tag') ?? '',
    item: p.get('item') ?? '',
    q: p.get('q'),
    qtypes: typesOf(p.get('qtypes'), []),
    qsort: p.get('qsort') === 'recent' ? 'recent' : 'relevant',
    ...(p.get('project') ? { project: p.get('project')!.trim().toLowerCase() } : {}),
  };
}

/** The search part of the URL for `s`, or `path` when everything is at its default. */
export function serializeState(s: UrlState, path: string): string {
  const p = new URLSearchParams();
  if (s.project) p.set('project', s.project);
  if (s.view !== 'list') p.set('view', s.view);
  const sameTypes =
    s.types.length === DEFAULT_TYPES.length && DEFAULT_TYPES.every((t) => s.types.includes(t));
  if (!sameTypes) p.set('types', s.types.length ? s.types.join(',') : 'all');
  if (s.state) p.set('state', s.state);
  if (s.status) p.set('status', s.status);
  if (s.parent) p.set('parent', s.parent);
  if (s.tag) p.set('tag', s.tag);
  if (s.item) p.set('item', s.item);
  if (s.q !== null) p.set('q', s.q);
  if (s.q !== null && s.qtypes.length) p.set('qtypes', s.qtypes.join(','));
  if (s.q !== null && s.qsort !== 'relevant') p.set('qsort', s.qsort);
  const q = p.toString();
  return q ? `?${q}` : path;
}
