/** The viewer's shell: top bar, filters, the current view, the detail panel and the spotlight. */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { health, itemRef, type Health, type ItemSummary } from '../api.js';
import { useBacklog, useLiveEvents, type Live } from '../data.js';
import { applyTheme, isMac, statusKey, statusLabel, statusRank, storedTheme, type Theme } from '../format.js';
import {
  ITEM_TYPES,
  getState,
  hrefFor,
  navigate,
  useUrlState,
  type ItemType,
  type UrlState,
  type View,
} from '../state.js';
import { isTaskLike, onNavigate } from './common.js';
import { DetailPanel } from './detail.js';
import {
  AutoIcon,
  BoardIcon,
  FolderIcon,
  ListIcon,
  MoonIcon,
  SearchIcon,
  SunIcon,
  TypeIcon,
} from './icons.js';
import { Spotlight } from './spotlight.js';
import { BoardView, FilesView, ListView } from './views.js';

const VIEWS: { id: View; label: string; icon: typeof ListIcon }[] = [
  { id: 'list', label: 'List', icon: ListIcon },
  { id: 'board', label: 'Board', icon: BoardIcon },
  { id: 'files', label: 'Resources', icon: FolderIcon },
];
const TYPE_LABELS: Record<ItemType, string> = { task: 'Tasks', epic: 'Epics', resource: 'Docs' };
const THEME_NEXT: Record<Theme, Theme> = { system: 'light', light: 'dark', dark: 'system' };

function ThemeButton() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const Icon = theme === 'light' ? SunIcon : theme === 'dark' ? MoonIcon : AutoIcon;
  return (
    <button
      type="button"
      class="icon-btn"
      aria-label={`Theme: ${theme}. Switch to ${THEME_NEXT[theme]}`}
      title={`Theme: ${theme}`}
      onClick={() => {
        const next = THEME_NEXT[theme];
        applyTheme(next);
        setTheme(next);
      }}
    >
      <Icon />
    </button>
  );
}

const LIVE_TEXT: Record<Live, string> = {
  live: 'Live: updates as files change',
  connecting: 'Connecting to live updates…',
  offline: 'Offline: live updates stopped; reload the page',
};

function Filters({
  state,
  all,
  order,
  shownCount,
}: {
  state: UrlState;
  all: ItemSummary[];
  /** Statuses in board order. */
  order: string[];
  shownCount: number | null;
}) {
  // The Docs chip (`resource`) stands for every kind of document.
  const inTypes = (i: ItemSummary) =>
    !state.types.length || state.types.includes(isTaskLike(i.type) ? (i.type as ItemType) : 'resource');
  const statuses = useMemo(() => {
    const counts = new Map<string, { status: string; n: number }>();
    for (const i of all) {
      if (!i.status || !inTypes(i)) continue;
      const k = statusKey(i.status);
      const e = counts.get(k) ?? { status: i.status, n: 0 };
      e.n++;
      counts.set(k, e);
    }
    const position = (s: string) => {
      const i = order.findIndex((o) => statusKey(o) === statusKey(s));
      return i >= 0 ? i : order.length + statusRank(s);
    };
    return [...counts.values()].sort((a, b) => position(a.status) - position(b.status));
  }, [all, state.types.join(','), order]);
  const epics = useMemo(() => all.filter((i) => i.type === 'epic'), [all]);
  const tags = useMemo(() => {
    const counts = new Map<string, number>();
    for (const i of all) if (inTypes(i)) for (const t of i.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  }, [all, state.types.join(',')]);
  const shownTypes = state.types.length ? state.types : [...ITEM_TYPES];
  const toggle = (t: ItemType) => {
    const next = shownTypes.includes(t) ? shownTypes.filter((x) => x !== t) : [...shownTypes, t];
    if (!next.length) return;
    navigate({ types: next.length === ITEM_TYPES.length ? [] : ITEM_TYPES.filter((x) => next.includes(x)) });
  };
  const active = state.status || state.epic || state.tag;
  return (
    <div class="filters" role="group" aria-label="Filters">
      <div class="chips" role="group" aria-label="Type">
        {ITEM_TYPES.map((t) => (
          <button
            type="button"
            key={t}
            class="chip"
            aria-pressed={shownTypes.includes(t)}
            onClick={() => toggle(t)}
          >
            <TypeIcon type={t} size={13} />
            {TYPE_LABELS[t]}
          </button>
        ))}
      </div>
      <label class="select">
        <span>Status</span>
        <select value={state.status} onChange={(e) => navigate({ status: e.currentTarget.value })}>
          <option value="">Any</option>
          {statuses.map((s) => (
            <option value={s.status} key={s.status}>
              {statusLabel(s.status)} ({s.n})
            </option>
          ))}
          {state.status && !statuses.some((s) => s.status === state.status) && (
            <option value={state.status}>{statusLabel(state.status)}</option>
          )}
        </select>
      </label>
      <label class="select">
        <span>Epic</span>
        <select value={state.epic} onChange={(e) => navigate({ epic: e.currentTarget.value })}>
          <option value="">Any</option>
          {epics.map((e) => (
            <option value={e.id} key={e.id}>
              {e.id} · {e.title}
            </option>
          ))}
        </select>
      </label>
      <label class="select">
        <span>Tag</span>
        <select value={state.tag} onChange={(e) => navigate({ tag: e.currentTarget.value })}>
          <option value="">Any</option>
          {tags.map(([t, n]) => (
            <option value={t} key={t}>
              {t} ({n})
            </option>
          ))}
          {state.tag && !tags.some(([t]) => t === state.tag) && (
            <option value={state.tag}>{state.tag}</option>
          )}
        </select>
      </label>
      {active && (
        <button type="button" class="link-btn" onClick={() => navigate({ status: '', epic: '', tag: '' })}>
          Clear filters
        </button>
      )}
      <span class="spacer" />
      {shownCount !== null && (
        <span class="muted result-count" aria-live="polite">
          {shownCount} {shownCount === 1 ? 'item' : 'items'}
        </span>
      )}
    </div>
  );
}

export function App() {
  const state = useUrlState();
  const [version, setVersion] = useState(0);
  const [flashed, setFlashed] = useState<Set<string>>(new Set());
  const [info, setInfo] = useState<Health | null>(null);
  const flashTimer = useRef<ReturnType<typeof setTimeout>>();
  const lastFocus = useRef<HTMLElement | null>(null);

  const live = useLiveEvents((refs) => {
    setVersion((v) => v + 1);
    setFlashed(refs);
    clearTimeout(flashTimer.current);
    flashTimer.current = setTimeout(() => setFlashed(new Set()), 1800);
  });
  const { all, shown, error } = useBacklog(state, version);

  useEffect(() => {
    health()
      .then(setInfo)
      .catch(() => undefined);
  }, [version]);

  const byId = useMemo(() => new Map((all ?? []).map((i) => [i.id, i])), [all]);
  const byPath = useMemo(() => new Map((all ?? []).map((i) => [i.path, i])), [all]);
  const resolve = useCallback(
    (ref: string) => {
      const item = byId.get(ref) ?? byId.get(ref.toUpperCase()) ?? byPath.get(ref);
      return item ? itemRef(item) : undefined;
    },
    [byId, byPath],
  );
  // The configured statuses in board order (Backlog.md's config.yml), then any other a task has.
  const statuses = useMemo(
    () =>
      [
        // A Backlog.md board follows config.yml; the native format's board keeps the workflow order.
        ...(info?.format.name === 'backlog-md' ? info.format.statuses : []),
        ...(all ?? []).filter((i) => isTaskLike(i.type) && i.status).map((i) => i.status as string),
      ].filter((s, i, arr) => arr.findIndex((x) => statusKey(x) === statusKey(s)) === i),
    [all, info],
  );

  const spotlightOpen = state.q !== null;
  const openSpotlight = () => {
    lastFocus.current = document.activeElement as HTMLElement | null;
    navigate({ q: getState().q ?? '' }, true);
  };
  const closeSpotlight = () => {
    navigate({ q: null }, true);
    const back = lastFocus.current;
    lastFocus.current = null;
    setTimeout(() => back?.isConnected && back.focus(), 0);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing =
        e.target instanceof HTMLElement &&
        (e.target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(e.target.tagName));
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        if (getState().q === null) openSpotlight();
        else closeSpotlight();
      } else if (e.key === '/' && !typing && getState().q === null) {
        e.preventDefault();
        openSpotlight();
      } else if (e.key === 'Escape' && getState().q !== null && !e.defaultPrevented) {
        // Escape closes the spotlight wherever the focus is (its input handles it first when it has it).
        e.preventDefault();
        closeSpotlight();
      } else if (e.key === 'Escape' && getState().q === null && getState().item && !typing) {
        navigate({ item: '' });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  // Marks when the list first shows, for the first-paint measurement.
  useEffect(() => {
    if (shown && !performance.getEntriesByName('backlog:list-rendered').length)
      requestAnimationFrame(() => performance.mark('backlog:list-rendered'));
  }, [shown]);

  useEffect(() => {
    const name = state.item ? (resolve(state.item) ?? state.item) : '';
    const title = name ? (byId.get(name)?.title ?? byPath.get(name)?.title ?? name) : '';
    document.title = title ? `${title} · Backlog` : 'Backlog';
  }, [state.item, byId, byPath, resolve]);

  const visible = state.view === 'files' ? all : shown;
  const selected = state.item;

  return (
    <>
      <div class={`app ${selected ? 'has-detail' : ''}`} inert={spotlightOpen || undefined}>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="topbar">
          <a class="brand" href={hrefFor(state, { item: '', q: null })} onClick={onNavigate({ item: '' })}>
            <img src="./favicon.svg" alt="" width="24" height="24" />
            <span class="brand-name">Backlog</span>
            {info && <span class="brand-count">{info.items} items</span>}
          </a>
          <nav class="tabs" aria-label="Views">
            {VIEWS.map((v) => (
              <a
                key={v.id}
                class="tab"
                href={hrefFor(state, { view: v.id })}
                aria-current={state.view === v.id ? 'page' : undefined}
                onClick={onNavigate({ view: v.id })}
              >
                <v.icon />
                <span class="tab-label">{v.label}</span>
              </a>
            ))}
          </nav>
          <span class="spacer" />
          <button
            type="button"
            class="search-trigger"
            onClick={openSpotlight}
            aria-keyshortcuts="Control+K Meta+K"
            aria-label="Search (Ctrl+K)"
          >
            <SearchIcon />
            <span class="search-trigger-text">Search…</span>
            <kbd>{isMac ? '⌘K' : 'Ctrl K'}</kbd>
          </button>
          <span
            class={`live live-${live}`}
            title={LIVE_TEXT[live]}
            role="status"
            aria-label={LIVE_TEXT[live]}
          >
            <span class="dot" aria-hidden="true" />
            <span class="live-text">{live === 'live' ? 'Live' : live === 'offline' ? 'Offline' : '…'}</span>
          </span>
          <ThemeButton />
        </header>
        {state.view !== 'files' && all && (
          <Filters state={state} all={all} order={statuses} shownCount={shown?.length ?? null} />
        )}
        <main class="main" id="content">
          <div class="view" aria-busy={!visible}>
            {error && (
              <div class="notice error" role="alert">
                <strong>{error.message}</strong>
                {error.hint && <p class="muted">{error.hint}</p>}
              </div>
            )}
            {!visible && !error && <div class="skeleton list" aria-label="Loading" />}
            {visible && state.view === 'list' && (
              <ListView
                items={visible}
                byId={byId}
                selected={selected}
                flashed={flashed}
                statuses={statuses}
              />
            )}
            {visible && state.view === 'board' && (
              <BoardView
                items={visible}
                byId={byId}
                selected={selected}
                flashed={flashed}
                statuses={statuses}
              />
            )}
            {visible && state.view === 'files' && (
              <FilesView items={visible} selected={selected} flashed={flashed} />
            )}
            {visible && state.view !== 'files' && visible.length === 0 && (
              <div class="empty">
                <p>No items match these filters.</p>
                <button
                  type="button"
                  class="link-btn"
                  onClick={() => navigate({ status: '', epic: '', tag: '', types: [] })}
                >
                  Show everything
                </button>
              </div>
            )}
          </div>
          {selected && <DetailPanel refId={selected} version={version} byId={byId} resolve={resolve} />}
        </main>
      </div>
      {spotlightOpen && (
        <Spotlight
          state={state}
          version={version}
          onClose={closeSpotlight}
          exampleId={
            (all ?? []).find((i) => isTaskLike(i.type))?.id ??
            (info ? `${info.format.task_prefix}-1` : undefined)
          }
        />
      )}
    </>
  );
}
