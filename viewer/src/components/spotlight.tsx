/**
 * Spotlight (Ctrl/Cmd+K): search as you type through GET /search. Arrow keys and Enter, type chips,
 * relevant/recent, the search mode of the answer, snippets highlighted after escaping, an empty
 * state that says why, and recent searches.
 */
import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, itemRef, search, type Search, type SearchResult } from '../api.js';
import { toApiError } from '../data.js';
import { forgetSearches, isMac, recentSearches, rememberSearch } from '../format.js';
import { highlightHtml } from '../highlight.js';
import { SEARCH_DEBOUNCE_MS, spotlightParams } from '../search-params.js';
import { ITEM_TYPES, navigate, type ItemType, type UrlState } from '../state.js';
import { spotlightKinds } from '../vocabulary.js';
import { IdLabel, ProjectBadge, StateBadge, StatusPill, useVocabulary } from './common.js';
import { ClockIcon, CloseIcon, SearchIcon, TypeIcon } from './icons.js';

const MODE_LABELS: Record<string, string> = { bm25: 'BM25', hybrid: 'Hybrid', semantic: 'Semantic' };
const MODE_TITLES: Record<string, string> = {
  bm25: 'Keyword search (BM25F): matches words and their forms',
  hybrid: 'Hybrid search: keywords and meaning (embeddings) combined',
  semantic: 'Semantic search: by meaning (embeddings)',
};

/** `a, b and c`. */
function listWords(words: string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The project of a qualified id: `api:TASK-0001`, `mcp://backlog/api/docs/a.md`. */
function projectOf(id: string): string {
  return id.startsWith('mcp://backlog/') ? (id.split('/')[3] ?? id) : id.slice(0, id.indexOf(':'));
}

/** "also in api, web": the copies of this document in other projects the hit stands for. */
function AlsoIn({ ids }: { ids: string[] | undefined }) {
  if (!ids?.length) return null;
  const projects = [...new Set(ids.map(projectOf))];
  return (
    <span class="sl-also" title={`Also in ${ids.join(', ')}`} data-also={ids.join(' ')}>
      also in {projects.join(', ')}
    </span>
  );
}

function Html({ html, class: cls }: { html: string; class?: string }) {
  // `html` comes from highlightHtml: the text escaped, then our <mark> tags added.
  return <span class={cls} dangerouslySetInnerHTML={{ __html: html }} />;
}

function ResultOption({
  r,
  index,
  active,
  query,
  onPick,
  onHover,
}: {
  r: SearchResult;
  index: number;
  active: boolean;
  query: string;
  onPick: (r: SearchResult) => void;
  onHover: (i: number) => void;
}) {
  const snippet = r.snippet?.text ?? '';
  const field = r.snippet?.field;
  return (
    <li
      role="option"
      id={`sl-opt-${index}`}
      aria-selected={active}
      class={`sl-option ${active ? 'active' : ''}`}
      data-id={r.id}
      onMouseDown={(e) => e.preventDefault()}
      onClick={() => onPick(r)}
      onMouseMove={() => !active && onHover(index)}
    >
      <TypeIcon type={r.type} size={18} />
      <div class="sl-main">
        <div class="sl-line">
          <Html class="sl-title" html={highlightHtml(r.title, query)} />
          <StateBadge state={r.state} />
          <AlsoIn ids={r.also_in} />
        </div>
        {snippet && field !== 'title' && (
          <div class="sl-snippet">
            {field && field !== 'body' && <span class="sl-field">{field}: </span>}
            <Html html={highlightHtml(snippet, query)} />
          </div>
        )}
      </div>
      <div class="sl-side">
        <ProjectBadge project={r.project} />
        <IdLabel item={r} />
        {r.status && r.type !== 'resource' && <StatusPill status={r.status} />}
      </div>
    </li>
  );
}

export function Spotlight({
  state,
  version,
  onClose,
  exampleId = 'TASK-0001',
}: {
  state: UrlState;
  version: number;
  onClose: () => void;
  /** An id as this backlog writes them (`BACK-1` in a Backlog.md folder), for the hints. */
  exampleId?: string;
}) {
  const [value, setValue] = useState(state.q ?? '');
  const [response, setResponse] = useState<Search | null>(null);
  /** The options the shown response answers: `query|types|sort` (for tests and stale checks). */
  const [responseKey, setResponseKey] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(false);
  const [active, setActive] = useState(0);
  const [elsewhere, setElsewhere] = useState<number | null>(null);
  const [recent, setRecent] = useState(recentSearches);
  const input = useRef<HTMLInputElement>(null);
  const dialog = useRef<HTMLDivElement>(null);
  const listRef = useRef<HTMLUListElement>(null);

  const vocabulary = useVocabulary();
  const kinds = spotlightKinds(vocabulary);
  const query = value.trim();
  const types = state.qtypes;
  const sort = state.qsort;

  // Focus before the browser handles the next event: a key typed right after Ctrl+K or `/` lands here.
  useLayoutEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);

  // Back/forward may change the query in the URL.
  useEffect(() => {
    if ((state.q ?? '') !== value) setValue(state.q ?? '');
  }, [state.q]);

  useEffect(() => {
    if (!query) {
      setResponse(null);
      setError(null);
      setLoading(false);
      setElsewhere(null);
      return;
    }
    const ctrl = new AbortController();
    setLoading(true);
    const timer = setTimeout(async () => {
      try {
        const res = await search(spotlightParams(query, types, sort, state.project), ctrl.signal);
        if (ctrl.signal.aborted) return;
        setResponse(res);
        // The project goes in the key only when one is chosen: one backlog's keys stay as they were.
        setResponseKey(`${query}|${types.join(',')}|${sort}${state.project ? `|${state.project}` : ''}`);
        setError(null);
        setActive((a) => (a < res.results.length ? a : 0));
        setElsewhere(null);
        if (res.total === 0 && types.length) {
          const all = await search(
            { query, limit: 1, ...(state.project ? { project: state.project } : {}) },
            ctrl.signal,
          );
          if (!ctrl.signal.aborted) setElsewhere(all.total);
        }
      } catch (err) {
        if (ctrl.signal.aborted) return;
        setError(toApiError(err));
        setResponse(null);
      } finally {
        if (!ctrl.signal.aborted) setLoading(false);
      }
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      ctrl.abort();
    };
  }, [query, types.join(','), sort, version, state.project]);

  const results = query ? (response?.results ?? []) : [];
  const recentShown = query ? [] : recent;
  const optionCount = query ? results.length : recentShown.length;

  useEffect(() => {
    listRef.current?.querySelector(`#sl-opt-${active}`)?.scrollIntoView({ block: 'nearest' });
  }, [active, optionCount]);

  const pick = (r: SearchResult) => {
    rememberSearch(query);
    navigate({ item: itemRef(r), q: null });
  };
  /** Runs `q` as the search (a recent search or a suggestion picked). */
  const useRecent = (q: string) => {
    setValue(q);
    navigate({ q }, true);
    setActive(0);
    input.current?.focus();
  };

  const onInput = (e: JSX.TargetedEvent<HTMLInputElement>) => {
    const v = e.currentTarget.value;
    setValue(v);
    setActive(0);
    navigate({ q: v }, true);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!optionCount) return;
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (a + step + optionCount) % optionCount);
    } else if (e.key === 'Home' && optionCount && e.ctrlKey) {
      setActive(0);
    } else if (e.key === 'End' && optionCount && e.ctrlKey) {
      setActive(optionCount - 1);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (query && results[active]) pick(results[active]);
      else if (!query && recentShown[active]) useRecent(recentShown[active]);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    }
  };

  // Tab stays inside the dialog.
  const trapTab = (e: KeyboardEvent) => {
    if (e.key !== 'Tab' || !dialog.current) return;
    const focusable = Array.from(
      dialog.current.querySelectorAll<HTMLElement>('input, button:not([disabled]), [tabindex="0"]'),
    );
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  const toggleType = (t: ItemType) => {
    const next = types.includes(t) ? types.filter((x) => x !== t) : [...types, t];
    navigate({ qtypes: ITEM_TYPES.filter((x) => next.includes(x)) }, true);
    input.current?.focus();
  };
  const setSort = (s: 'relevant' | 'recent') => {
    navigate({ qsort: s }, true);
    input.current?.focus();
  };

  const mode = response?.search_mode;
  const shownQuery = response?.query ?? query;
  const typeNames = types.length
    ? types.map((t) => (kinds.find((k) => k.type === t)?.plural ?? t).toLowerCase()).join(' or ')
    : 'items';
  const searchWhat = `Search ${listWords(vocabulary.kinds.map((k) => k.plural.toLowerCase()))}`;
  const empty = useMemo(() => {
    if (!query || loading || error || !response || results.length) return null;
    // `suggestions` is optional: servers before "did you mean" do not send it. The service's own
    // "nothing matched" warning says what the heading says (and the suggestions), so it is left out.
    const warnings = (response.warnings ?? []).filter((w) => !w.startsWith('nothing matched'));
    const suggestions = Array.isArray(response.suggestions) ? response.suggestions.filter(Boolean) : [];
    return (
      <div class="sl-empty" role="status">
        <p class="sl-empty-title">
          No {typeNames} match “{shownQuery}”
        </p>
        {suggestions.length > 0 && (
          <p class="sl-suggestions">
            <span class="muted">Did you mean</span>
            {suggestions.map((s) => (
              <button type="button" class="chip sl-suggestion" key={s} onClick={() => useRecent(s)}>
                {s}
              </button>
            ))}
          </p>
        )}
        {elsewhere ? (
          <p>
            {elsewhere} {elsewhere === 1 ? 'result' : 'results'} in other types.{' '}
            <button
              type="button"
              class="link-btn"
              onClick={() => {
                navigate({ qtypes: [] }, true);
                input.current?.focus();
              }}
            >
              Search all types
            </button>
          </p>
        ) : (
          !suggestions.length && (
            <p class="muted">
              None of these words appear in any title, description, tag or document. Check the spelling, use
              fewer words, or search an id such as {exampleId}.
            </p>
          )
        )}
        {warnings.length ? (
          <ul class="sl-warnings" aria-label="Notes from the search">
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }, [query, loading, error, response, results.length, elsewhere, typeNames, shownQuery]);

  const activeId = optionCount ? `sl-opt-${Math.min(active, optionCount - 1)}` : undefined;

  return (
    <div class="sl-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        class="spotlight"
        role="dialog"
        aria-modal="true"
        aria-label="Search the backlog"
        ref={dialog}
        onKeyDown={trapTab}
      >
        <div class="sl-input-row">
          <SearchIcon size={20} class="sl-search-icon" />
          <input
            ref={input}
            class="sl-input"
            type="text"
            role="combobox"
            aria-label={searchWhat}
            aria-expanded={optionCount > 0}
            aria-controls="sl-list"
            aria-activedescendant={activeId}
            aria-autocomplete="list"
            placeholder={`${searchWhat}…`}
            autoComplete="off"
            spellcheck={false}
            value={value}
            onInput={onInput}
            onKeyDown={onKeyDown}
          />
          {loading && <span class="spinner" aria-label="Searching" role="status" />}
          {mode && (
            <span class={`mode-badge mode-${mode}`} title={MODE_TITLES[mode] ?? mode} data-mode={mode}>
              {MODE_LABELS[mode] ?? mode}
            </span>
          )}
          <button type="button" class="icon-btn" onClick={onClose} aria-label="Close search">
            <CloseIcon />
          </button>
        </div>
        <div class="sl-controls">
          <div class="chips" role="group" aria-label="Types to search">
            {kinds.map((k) => (
              <button
                type="button"
                key={k.type}
                class="chip"
                aria-pressed={types.includes(k.type)}
                onClick={() => toggleType(k.type)}
              >
                <TypeIcon type={k.type} size={13} />
                {k.plural}
              </button>
            ))}
          </div>
          <div class="segmented" role="group" aria-label="Order">
            <button type="button" aria-pressed={sort === 'relevant'} onClick={() => setSort('relevant')}>
              Relevant
            </button>
            <button type="button" aria-pressed={sort === 'recent'} onClick={() => setSort('recent')}>
              Recent
            </button>
          </div>
        </div>
        <div class="sl-results">
          {error && (
            <div class="sl-empty" role="alert">
              <p class="sl-empty-title">{error.message}</p>
              {error.hint && <p class="muted">{error.hint}</p>}
            </div>
          )}
          {empty}
          {!query && (
            <div class="sl-section-head">
              {recentShown.length ? (
                <>
                  <span>Recent searches</span>
                  <button
                    type="button"
                    class="link-btn"
                    onClick={() => {
                      forgetSearches();
                      setRecent([]);
                      input.current?.focus();
                    }}
                  >
                    Clear
                  </button>
                </>
              ) : (
                <span class="muted">
                  Type to search titles, descriptions, tags and documents — or an id such as {exampleId}.
                </span>
              )}
            </div>
          )}
          <ul
            id="sl-list"
            role="listbox"
            aria-label={query ? 'Results' : 'Recent searches'}
            ref={listRef}
            data-key={query && response ? responseKey : undefined}
            data-total={query && response ? response.total : undefined}
          >
            {query
              ? results.map((r, i) => (
                  <ResultOption
                    key={r.id}
                    r={r}
                    index={i}
                    active={i === active}
                    query={shownQuery}
                    onPick={pick}
                    onHover={setActive}
                  />
                ))
              : recentShown.map((q, i) => (
                  <li
                    key={q}
                    role="option"
                    id={`sl-opt-${i}`}
                    aria-selected={i === active}
                    class={`sl-option recent ${i === active ? 'active' : ''}`}
                    onMouseDown={(e) => e.preventDefault()}
                    onClick={() => useRecent(q)}
                    onMouseMove={() => i !== active && setActive(i)}
                  >
                    <ClockIcon size={16} />
                    <span class="sl-title">{q}</span>
                  </li>
                ))}
          </ul>
        </div>
        <div class="sl-footer">
          <span>
            <kbd>↑</kbd>
            <kbd>↓</kbd> navigate
          </span>
          <span>
            <kbd>↵</kbd> open
          </span>
          <span>
            <kbd>esc</kbd> close
          </span>
          <span class="spacer" />
          {response && query && (
            <span class="sl-stats" aria-live="polite">
              {response.total} {response.total === 1 ? 'result' : 'results'}
              {response.total > results.length ? ` · top ${results.length}` : ''} · {response.took_ms} ms
            </span>
          )}
          <span class="muted">{isMac ? '⌘K' : 'Ctrl K'}</span>
        </div>
      </div>
    </div>
  );
}
