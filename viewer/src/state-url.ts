/**
 * The viewer's state lives in the URL, so every screen is a deep link:
 *
 *   ?view=list|board|files  &types=task,epic|all  &status=open  &epic=EPIC-0001  &tag=auth
 *   &item=TASK-0001 (or a resource path)
 *   &q=login  &qtypes=task  &qsort=recent     (the spotlight, open while q is present)
 *
 * Parsing and writing it are pure (tested in Node); ./state.ts keeps it in step with history.
 */
export type View = 'list' | 'board' | 'files';
export const ITEM_TYPES = ['task', 'epic', 'resource'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

export interface UrlState {
  view: View;
  /** Types shown in the list and board; empty means every type. */
  types: ItemType[];
  status: string;
  epic: string;
  tag: string;
  item: string;
  /** Spotlight: open when not null. */
  q: string | null;
  qtypes: ItemType[];
  qsort: 'relevant' | 'recent';
}

const DEFAULT_TYPES: ItemType[] = ['task', 'epic'];

function typesOf(value: string | null, fallback: ItemType[]): ItemType[] {
  if (value === null) return fallback;
  if (value === 'all' || value === '') return [];
  return value.split(',').filter((t): t is ItemType => (ITEM_TYPES as readonly string[]).includes(t));
}

export function parseState(search: string): UrlState {
  const p = new URLSearchParams(search);
  const view = p.get('view');
  return {
    view: view === 'board' || view === 'files' ? view : 'list',
    types: typesOf(p.get('types'), DEFAULT_TYPES),
    status: p.get('status') ?? '',
    epic: p.get('epic') ?? '',
    tag: p.get('tag') ?? '',
    item: p.get('item') ?? '',
    q: p.get('q'),
    qtypes: typesOf(p.get('qtypes'), []),
    qsort: p.get('qsort') === 'recent' ? 'recent' : 'relevant',
  };
}

/** The search part of the URL for `s`, or `path` when everything is at its default. */
export function serializeState(s: UrlState, path: string): string {
  const p = new URLSearchParams();
  if (s.view !== 'list') p.set('view', s.view);
  const sameTypes =
    s.types.length === DEFAULT_TYPES.length && DEFAULT_TYPES.every((t) => s.types.includes(t));
  if (!sameTypes) p.set('types', s.types.length ? s.types.join(',') : 'all');
  if (s.status) p.set('status', s.status);
  if (s.epic) p.set('epic', s.epic);
  if (s.tag) p.set('tag', s.tag);
  if (s.item) p.set('item', s.item);
  if (s.q !== null) p.set('q', s.q);
  if (s.q !== null && s.qtypes.length) p.set('qtypes', s.qtypes.join(','));
  if (s.q !== null && s.qsort !== 'relevant') p.set('qsort', s.qsort);
  const q = p.toString();
  return q ? `?${q}` : path;
}
