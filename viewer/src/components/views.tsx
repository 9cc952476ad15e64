/** The three ways to browse: a list grouped by status, a board, and the resources as a folder tree. */
import { useContext, useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import { itemRef, type ItemSummary } from '../api.js';
import { fullDate, relativeDate, statusKey, statusLabel, statusRank, statusTone } from '../format.js';
import { getState, hrefFor } from '../state.js';
import { parentLabel } from '../vocabulary.js';
import {
  IdLabel,
  ItemLink,
  ParentIcon,
  ProjectBadge,
  ShowProjectContext,
  StateBadge,
  Tags,
  isTaskLike,
  onNavigate,
  shortId,
  useVocabulary,
} from './common.js';
import { FolderIcon, TypeIcon } from './icons.js';

export interface Group {
  key: string;
  status: string | null;
  items: ItemSummary[];
}

/**
 * Items grouped by status (case and spacing folded). The `order` statuses (the backlog's configured
 * ones) come first, in their order, then the others in workflow order; `columns` are shown even when
 * no item has them (the board).
 */
export function groupByStatus(
  items: ItemSummary[],
  { order = [], columns = [] }: { order?: string[]; columns?: (string | null)[] } = {},
): Group[] {
  const groups = new Map<string, Group>();
  const position = new Map(order.map((s, i) => [statusKey(s), i]));
  const rank = (g: Group) => position.get(g.key) ?? order.length + statusRank(g.status);
  for (const s of columns) {
    const key = statusKey(s);
    if (!groups.has(key)) groups.set(key, { key, status: s, items: [] });
  }
  for (const item of items) {
    const key = statusKey(item.status);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, status: item.status, items: [] }));
    g.items.push(item);
  }
  return [...groups.values()].sort((a, b) => rank(a) - rank(b) || a.key.localeCompare(b.key));
}

interface ViewProps {
  items: ItemSummary[];
  /** The backlog's statuses in board order (GET /tasks). */
  statuses: string[];
  byId: Map<string, ItemSummary>;
  selected: string;
  flashed: Set<string>;
}

/** The item's parent: the epic's icon for an epic, a parent task's otherwise, and what it is called. */
function ParentLabel({ item, byId }: { item: ItemSummary; byId: Map<string, ItemSummary> }) {
  const vocabulary = useVocabulary();
  if (!item.parent_id) return null;
  const parent = byId.get(item.parent_id);
  const word = parent?.type === 'epic' ? 'Epic' : parent ? 'Parent task' : parentLabel(vocabulary);
  return (
    <span
      class="parent-label"
      title={`${word}: ${parent ? `${parent.id} · ${parent.title}${stateNote(parent.state)}` : item.parent_id}`}
      data-parent={item.parent_id}
    >
      <ParentIcon type={parent?.type} size={12} />
      <span class="sr-only">{word}: </span>
      <span class="ellipsis">{parent ? parent.title : item.parent_id}</span>
    </span>
  );
}

/** ` (archived)` after a parent's title when it is not active. */
function stateNote(state: string | null): string {
  return state && state !== 'active' ? ` (${state})` : '';
}

/** When the item last changed, or, for a file with no update date, when it was created. */
function When({ item }: { item: ItemSummary }) {
  const updated = item.updated_at;
  const iso = updated ?? item.created_at ?? null;
  if (!iso) return <span class="when" />;
  return (
    <time class="when" dateTime={iso} title={`${updated ? 'Updated' : 'Created'} ${fullDate(iso)}`}>
      {relativeDate(iso)}
    </time>
  );
}

function rowClass(item: ItemSummary, selected: string, flashed: Set<string>): string {
  const ref = itemRef(item);
  return [
    ref === selected || item.id === selected ? 'selected' : '',
    flashed.has(item.id) || flashed.has(item.path) ? 'flash' : '',
  ].join(' ');
}

export function ListView({ items, byId, selected, flashed, statuses }: ViewProps) {
  const groups = useMemo(() => groupByStatus(items, { order: statuses }), [items, statuses]);
  return (
    <div class="list-view">
      {groups.map((g) => (
        <section class="group" key={g.key} aria-labelledby={`group-${g.key}`} data-status={g.key}>
          <h2 class="group-title" id={`group-${g.key}`}>
            <span class={`dot tone-${statusTone(g.status)}`} aria-hidden="true" />
            {statusLabel(g.status)}
            <span class="count">{g.items.length}</span>
          </h2>
          <ul class="rows">
            {g.items.map((item) => (
              <li key={item.id}>
                <ItemLink item={item} class={`row ${rowClass(item, selected, flashed)}`}>
                  <TypeIcon type={item.type} />
                  <IdLabel item={item} />
                  <span class="row-title">{item.title}</span>
                  <span class="row-meta">
                    <ProjectBadge project={item.project} />
                    <StateBadge state={item.state} />
                    <ParentLabel item={item} byId={byId} />
                    <Tags tags={item.tags} />
                    <When item={item} />
                  </span>
                </ItemLink>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

export function BoardView({
  items,
  byId,
  selected,
  flashed,
  statuses,
  label,
}: ViewProps & { label?: string }) {
  const groups = useMemo(
    () => groupByStatus(items, { order: statuses, columns: statuses }),
    [items, statuses],
  );
  // The board opens at its first column, and goes back to it when the columns change (the backlog's
  // order arriving after the first answer): a snapped board would otherwise keep the column it had.
  const board = useRef<HTMLDivElement>(null);
  const columns = groups.map((g) => g.key).join(',');
  useLayoutEffect(() => {
    if (board.current) board.current.scrollLeft = 0;
  }, [columns]);
  return (
    <div class="board" ref={board} aria-label={label}>
      {groups.map((g) => (
        <section
          class="column"
          key={g.key}
          aria-labelledby={`col-${label ?? ''}${g.key}`}
          data-status={g.key}
        >
          <h2 class="column-title" id={`col-${label ?? ''}${g.key}`}>
            <span class={`dot tone-${statusTone(g.status)}`} aria-hidden="true" />
            {statusLabel(g.status)}
            <span class="count">{g.items.length}</span>
          </h2>
          <ul class="cards">
            {g.items.map((item) => (
              <li key={item.id}>
                <ItemLink item={item} class={`card ${rowClass(item, selected, flashed)}`}>
                  <span class="card-head">
                    <TypeIcon type={item.type} size={14} />
                    <IdLabel item={item} />
                    <StateBadge state={item.state} />
                    <When item={item} />
                  </span>
                  <span class="card-title">{item.title}</span>
                  <span class="card-foot">
                    <ProjectBadge project={item.project} />
                    <ParentLabel item={item} byId={byId} />
                    <Tags tags={item.tags} max={2} />
                  </span>
                </ItemLink>
              </li>
            ))}
            {g.items.length === 0 && <li class="column-empty">Nothing here</li>}
          </ul>
        </section>
      ))}
    </div>
  );
}

interface Folder {
  name: string;
  path: string;
  folders: Map<string, Folder>;
  files: ItemSummary[];
}

/** The folder tree of `items`; `byProject`: one top folder per project (several shown together). */
function buildTree(items: ItemSummary[], byProject = false): Folder {
  const root: Folder = { name: '', path: '', folders: new Map(), files: [] };
  for (const item of items) {
    const parts = (byProject && item.project ? `${item.project}/${item.path}` : item.path).split('/');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      let next = node.folders.get(part);
      if (!next) {
        next = { name: part, path: node.path ? `${node.path}/${part}` : part, folders: new Map(), files: [] };
        node.folders.set(part, next);
      }
      node = next;
    }
    node.files.push(item);
  }
  return root;
}

function countFiles(f: Folder): number {
  let n = f.files.length;
  for (const sub of f.folders.values()) n += countFiles(sub);
  return n;
}

function FolderNode({
  folder,
  selected,
  flashed,
}: {
  folder: Folder;
  selected: string;
  flashed: Set<string>;
}) {
  const folders = [...folder.folders.values()].sort((a, b) => a.name.localeCompare(b.name));
  const files = [...folder.files].sort((a, b) => a.path.localeCompare(b.path));
  return (
    <ul class="tree" role="group">
      {folders.map((f) => (
        <li key={f.path}>
          <details open>
            <summary>
              <FolderIcon size={15} />
              <span>{f.name}</span>
              <span class="count">{countFiles(f)}</span>
            </summary>
            <FolderNode folder={f} selected={selected} flashed={flashed} />
          </details>
        </li>
      ))}
      {files.map((item) => {
        const ref = itemRef(item);
        return (
          <li key={item.id}>
            <a
              class={`file ${ref === selected ? 'selected' : ''} ${flashed.has(item.path) ? 'flash' : ''}`}
              href={hrefFor(getState(), { item: ref })}
              onClick={onNavigate({ item: ref })}
              data-id={item.id}
              aria-current={ref === selected ? 'page' : undefined}
            >
              <TypeIcon type={item.type} size={15} />
              <span class="file-name">{shortId(item)}</span>
              {item.title && item.title !== shortId(item) && <span class="file-title">{item.title}</span>}
            </a>
          </li>
        );
      })}
    </ul>
  );
}

export function FilesView({
  items,
  selected,
  flashed,
}: {
  items: ItemSummary[];
  selected: string;
  flashed: Set<string>;
}) {
  const byProject = useContext(ShowProjectContext);
  const tree = useMemo(
    () =>
      buildTree(
        items.filter((i) => !isTaskLike(i.type)),
        byProject,
      ),
    [items, byProject],
  );
  if (!tree.files.length && !tree.folders.size)
    return <p class="empty">No resource files in this backlog: documents go anywhere outside tasks/.</p>;
  return (
    <nav class="files-view" aria-label="Resources">
      <FolderNode folder={tree} selected={selected} flashed={flashed} />
    </nav>
  );
}
