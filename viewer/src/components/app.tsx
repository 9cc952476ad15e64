/** The viewer's shell: top bar, filters, the current view, the detail panel and the spotlight. */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  health,
  itemRef,
  type Health,
  type ItemSummary,
  type ProjectInfo,
  type WorkspaceHealth,
} from '../api.js';
import { inState, ofTypes, useBacklog, useLiveEvents, type Live } from '../data.js';
import { applyTheme, isMac, statusKey, statusLabel, statusRank, storedTheme, type Theme } from '../format.js';
import { getState, hrefFor, navigate, useUrlState, type UrlState, type View } from '../state.js';
import {
  STATE_LABELS,
  mergeVocabularies,
  parentLabel,
  selectedKinds,
  toggleKind,
  vocabularyOf,
} from '../vocabulary.js';
import { ShowProjectContext, VocabularyContext, isTaskLike, onNavigate, useVocabulary } from './common.js';
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

/** `455 completed, 46 archived, 16 drafts`: what the list left out, largest first. */
function notShownText(notShown: Record<string, number>): string {
  return Object.entries(notShown)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([state, n]) => `${n} ${state === 'draft' ? (n === 1 ? 'draft' : 'drafts') : state}`)
    .join(', ');
}

/** Which tasks the list shows by where they stand: a select where the backlog has states (Backlog.md). */
function StateFilter({ state, all }: { state: UrlState; all: ItemSummary[] }) {
  const vocabulary = useVocabulary();
  const counts = useMemo(() => {
    const n: Record<string, number> = { '': 0, all: 0 };
    for (const i of all) {
      if (!ofTypes(i, state.types)) continue;
      n.all++;
      if (inState(i, '')) n['']++;
      if (i.state && i.state !== 'active') n[i.state] = (n[i.state] ?? 0) + 1;
    }
    return n;
  }, [all, state.types.join(',')]);
  const options: [string, string][] = [
    ['', 'Active'],
    ...vocabulary.states
      .filter((s) => s !== 'active')
      .map((s): [string, string] => [s, STATE_LABELS[s] ?? s]),
    ['all', 'All'],
  ];
  return (
    <label class="select">
      <span id="filter-state">State</span>
      <select
        aria-labelledby="filter-state"
        value={state.state}
        onChange={(e) => navigate({ state: e.currentTarget.value })}
      >
        {options.map(([value, label]) => (
          <option value={value} key={value}>
            {label} ({counts[value] ?? 0})
          </option>
        ))}
        {state.state && !options.some(([v]) => v === state.state) && (
          <option value={state.state}>{state.state.replace(/,/g, ', ')}</option>
        )}
      </select>
    </label>
  );
}

function Filters({
  state,
  all,
  order,
  shownCount,
  notShown,
}: {
  state: UrlState;
  all: ItemSummary[];
  /** Statuses in board order. */
  order: string[];
  /** How many items the list shows: the one count of the page. */
  shownCount: number | null;
  notShown: Record<string, number>;
}) {
  const vocabulary = useVocabulary();
  const inFilters = (i: ItemSummary) => ofTypes(i, state.types) && inState(i, state.state);
  const filterKey = `${state.types.join(',')}|${state.state}`;
  const statuses = useMemo(() => {
    const counts = new Map<string, { status: string; n: number }>();
    for (const i of all) {
      if (!i.status || !inFilters(i)) continue;
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
  }, [all, filterKey, order]);
  // The epics (native), or the tasks that have sub-tasks (Backlog.md's parent tasks).
  const parents = useMemo(() => {
    if (vocabulary.parent === 'epic') return all.filter((i) => i.type === 'epic');
    const ids = new Set(all.map((i) => i.parent_id));
    return all.filter((i) => isTaskLike(i.type) && ids.has(i.id));
  }, [all, vocabulary.parent]);
  const tags = useMemo(() => {
    const counts = new Map<string, number>();
    for (const i of all) if (inFilters(i)) for (const t of i.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  }, [all, filterKey]);
  const selected = selectedKinds(vocabulary, state.types);
  const active = state.status || state.parent || state.tag;
  const hidden = notShownText(notShown);
  return (
    <div class="filters" role="group" aria-label="Filters">
      <div class="chips" role="group" aria-label="Type">
        {vocabulary.kinds.map((k) => (
          <button
            type="button"
            key={k.type}
            class="chip"
            aria-pressed={selected.includes(k.type)}
            onClick={() => navigate({ types: toggleKind(vocabulary, state.types, k.type) })}
          >
            <TypeIcon type={k.type} size={13} />
            {k.plural}
          </button>
        ))}
      </div>
      {vocabulary.states.length > 1 && <StateFilter state={state} all={all} />}
      <label class="select">
        <span id="filter-status">Status</span>
        <select
          aria-labelledby="filter-status"
          value={state.status}
          onChange={(e) => navigate({ status: e.currentTarget.value })}
        >
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
      {(parents.length > 0 || state.parent) && (
        <label class="select">
          <span id="filter-parent">{parentLabel(vocabulary)}</span>
          <select
            aria-labelledby="filter-parent"
            value={state.parent}
            onChange={(e) => navigate({ parent: e.currentTarget.value })}
          >
            <option value="">Any</option>
            {parents.map((p) => (
              <option value={p.id} key={p.id}>
                {p.id} · {p.title}
                {p.state && p.state !== 'active' ? ` (${p.state})` : ''}
              </option>
            ))}
            {state.parent && !parents.some((p) => p.id === state.parent) && (
              <option value={state.parent}>{state.parent}</option>
            )}
          </select>
        </label>
      )}
      <label class="select">
        <span id="filter-tag">Tag</span>
        <select
          aria-labelledby="filter-tag"
          value={state.tag}
          onChange={(e) => navigate({ tag: e.currentTarget.value })}
        >
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
        <button type="button" class="link-btn" onClick={() => navigate({ status: '', parent: '', tag: '' })}>
          Clear filters
        </button>
      )}
      <span class="spacer" />
      {shownCount !== null && (
        <span class="muted result-count" aria-live="polite">
          {shownCount} {shownCount === 1 ? 'item' : 'items'}
        </span>
      )}
      {!state.state && hidden && (
        <button
          type="button"
          class="link-btn not-shown"
          onClick={() => navigate({ state: 'all' })}
          title="Show every state"
        >
          Not shown: {hidden}
        </button>
      )}
    </div>
  );
}

/**
 * A board's columns: the configured statuses in board order (Backlog.md's config.yml; the native format's
 * board keeps the workflow order), then the statuses of the tasks the state filter shows (no "Won't do"
 * column for archived tasks unseen).
 */
function boardStatuses(format: Health['format'] | undefined, items: ItemSummary[], state: string): string[] {
  return [
    ...(format?.name === 'backlog-md' ? format.statuses : []),
    ...items
      .filter((i) => isTaskLike(i.type) && i.status && inState(i, state))
      .map((i) => i.status as string),
  ].filter((s, i, arr) => arr.findIndex((x) => statusKey(x) === statusKey(s)) === i);
}

/** Several backlogs served: the project shown (all, or one), kept in the URL as `project=`. */
function ProjectSwitcher({ projects, current }: { projects: ProjectInfo[]; current: string }) {
  return (
    <label class="select project-switcher">
      <span id="project-switcher" class="sr-only">
        Project
      </span>
      <select
        aria-labelledby="project-switcher"
        value={current}
        // Another project has other parents (qualified ids); status, tag and types keep their meaning.
        onChange={(e) => navigate({ project: e.currentTarget.value, parent: '' })}
      >
        <option value="">All projects</option>
        {projects.map((p) => (
          <option value={p.name} key={p.name}>
            {p.name} ({p.items})
          </option>
        ))}
        {current && !projects.some((p) => p.name === current) && <option value={current}>{current}</option>}
      </select>
    </label>
  );
}

/** Says that the server takes no edits: the built-in demo, or a backlog served read-only. */
function ReadOnlyBanner({ info }: { info: Pick<Health, 'read_only' | 'demo'> }) {
  if (!info.read_only && !info.demo) return null;
  return (
    <div class="banner" role="status" data-read-only={info.demo ? 'demo' : 'read-only'}>
      {info.demo ? (
        <>
          <strong>Demo backlog, read-only.</strong> No backlog was found, so this is the built-in example;
          nothing can be changed here. Serve your own with{' '}
          <code>backlog-search serve --dir path/to/backlog</code>.
        </>
      ) : (
        <>
          <strong>Read-only.</strong> This viewer serves this backlog read-only: the server takes no edits.
        </>
      )}
    </div>
  );
}

export function App() {
  const state = useUrlState();
  const [version, setVersion] = useState(0);
  const [flashed, setFlashed] = useState<Set<string>>(new Set());
  const [served, setInfo] = useState<Health | WorkspaceHealth | null>(null);
  const [healthAnswered, setHealthAnswered] = useState(false);
  const flashTimer = useRef<ReturnType<typeof setTimeout>>();
  const lastFocus = useRef<HTMLElement | null>(null);

  const live = useLiveEvents((refs) => {
    setVersion((v) => v + 1);
    setFlashed(refs);
    clearTimeout(flashTimer.current);
    flashTimer.current = setTimeout(() => setFlashed(new Set()), 1800);
  });
  const { all, shown, notShown, error } = useBacklog(state, version);
  // Several backlogs served: the switcher's choice, or all of them; one backlog: /health says it all.
  const projects = served && 'projects' in served && served.projects.length > 1 ? served.projects : null;
  const allProjects = projects !== null && !state.project;
  const info: Omit<Health, 'status' | 'version'> | null = projects
    ? (projects.find((p) => p.name === state.project) ?? null)
    : (served as Health | null);
  const vocabulary = useMemo(
    () =>
      allProjects
        ? mergeVocabularies(
            projects.map((p) => vocabularyOf(p.vocabulary)),
            'All projects',
          )
        : vocabularyOf(info?.vocabulary ?? (info ? { project: info.project } : null)),
    [info, allProjects, projects],
  );
  // Under "All projects" the switcher says the scope; the name says how many.
  const project = allProjects
    ? `${projects.length} projects`
    : projects && !info
      ? state.project
      : info
        ? (info.project ?? vocabulary.project)
        : '';

  useEffect(() => {
    health()
      .then(setInfo)
      .catch(() => undefined)
      .finally(() => setHealthAnswered(true));
  }, [version]);

  const byId = useMemo(() => new Map((all ?? []).map((i) => [i.id, i])), [all]);
  // Several backlogs: paths repeat across projects, so they are known as `project:path` (as itemRef writes them).
  const byPath = useMemo(
    () => new Map((all ?? []).map((i) => [i.project ? `${i.project}:${i.path}` : i.path, i])),
    [all],
  );
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
      allProjects
        ? projects
            .flatMap((p) =>
              boardStatuses(
                p.format,
                (all ?? []).filter((i) => i.project === p.name),
                state.state,
              ),
            )
            .filter((s, i, arr) => arr.findIndex((x) => statusKey(x) === statusKey(s)) === i)
        : boardStatuses(info?.format, all ?? [], state.state),
    [all, info, state.state, allProjects, projects],
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
    // Nothing had focus (the spotlight opened before an item's title took it): the open item's title.
    setTimeout(() => {
      const target =
        back?.isConnected && back !== document.body
          ? back
          : document.querySelector<HTMLElement>('.detail-title');
      target?.focus({ preventScroll: true });
    }, 0);
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
    const site = allProjects ? 'All projects' : project || 'Backlog';
    document.title = title ? `${title} · ${site}` : site;
  }, [state.item, byId, byPath, resolve, project]);

  const visible = state.view === 'files' ? all : shown;
  const selected = state.item;

  return (
    <VocabularyContext.Provider value={vocabulary}>
      <ShowProjectContext.Provider value={allProjects}>
        <div class={`app ${selected ? 'has-detail' : ''}`} inert={spotlightOpen || undefined}>
          <a class="skip" href="#content">
            Skip to content
          </a>
          <header class="topbar">
            <a class="brand" href={hrefFor(state, { item: '', q: null })} onClick={onNavigate({ item: '' })}>
              <img src="./favicon.svg" alt="" width="24" height="24" />
              <span class="brand-name">{project}</span>
            </a>
            {projects && <ProjectSwitcher projects={projects} current={state.project ?? ''} />}
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
                  <span class="tab-label">
                    {v.id === 'files' && vocabulary.format !== 'native' ? 'Files' : v.label}
                  </span>
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
          {served && <ReadOnlyBanner info={info ?? served} />}
          {served && 'problems' in served && served.problems?.length ? (
            <div class="banner problems" role="status">
              Not opened: {served.problems.map((p) => `${p.name} (${p.code}: ${p.message})`).join('; ')}
            </div>
          ) : null}
          {/* After /health (or its failure): the chips are the backlog's kinds, not the native ones first. */}
          {state.view !== 'files' && all && healthAnswered && (
            <Filters
              state={state}
              all={all}
              order={statuses}
              shownCount={shown?.length ?? null}
              notShown={notShown}
            />
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
              {visible && state.view === 'board' && allProjects && (
                <ProjectBoards
                  projects={projects}
                  items={visible}
                  byId={byId}
                  all={all ?? []}
                  selected={selected}
                  flashed={flashed}
                  state={state.state}
                />
              )}
              {visible && state.view === 'board' && !allProjects && (
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
                    onClick={() => navigate({ status: '', parent: '', tag: '', types: [], state: 'all' })}
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
              vocabulary.example_ids[0] ??
              (all ?? []).find((i) => isTaskLike(i.type))?.id ??
              (info ? `${info.format.task_prefix}-1` : undefined)
            }
          />
        )}
      </ShowProjectContext.Provider>
    </VocabularyContext.Provider>
  );
}

/**
 * The board of several projects shown together: a board's columns are one project's statuses, so each
 * project gets its own section, with its own columns (docs/viewer.md).
 */
function ProjectBoards({
  projects,
  items,
  all,
  byId,
  selected,
  flashed,
  state,
}: {
  projects: ProjectInfo[];
  items: ItemSummary[];
  /** Every item of every state (a column for each status of the tasks the state filter shows). */
  all: ItemSummary[];
  byId: Map<string, ItemSummary>;
  selected: string;
  flashed: Set<string>;
  state: string;
}) {
  return (
    <div class="board-stack">
      {projects.map((p) => {
        const mine = items.filter((i) => i.project === p.name);
        return (
          <section
            class="board-section"
            key={p.name}
            data-project={p.name}
            aria-labelledby={`board-${p.name}`}
          >
            <h2 class="board-project" id={`board-${p.name}`}>
              <a
                href={hrefFor(getState(), { project: p.name })}
                onClick={onNavigate({ project: p.name, parent: '' })}
              >
                {p.project ?? p.name}
              </a>
              <span class="count">{mine.length}</span>
            </h2>
            {/* The section names the project: no badge on each of its cards. */}
            <ShowProjectContext.Provider value={false}>
              <BoardView
                items={mine}
                byId={byId}
                selected={selected}
                flashed={flashed}
                statuses={boardStatuses(
                  p.format,
                  all.filter((i) => i.project === p.name),
                  state,
                )}
                label={p.name}
              />
            </ShowProjectContext.Provider>
          </section>
        );
      })}
    </div>
  );
}
