/** Loading the backlog from the API and keeping it fresh through /events. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, listAll, subscribeEvents, type ItemSummary, type Live, type Params } from './api.js';
import type { UrlState } from './state.js';

export type { Live };

/**
 * Subscribes to GET /events. `onChange` receives the ids (and paths) changed in a burst, debounced so
 * that a branch switch touching 500 files reloads once.
 */
export function useLiveEvents(onChange: (refs: Set<string>) => void, debounceMs = 120): Live {
  const [live, setLive] = useState<Live>('connecting');
  const cb = useRef(onChange);
  cb.current = onChange;
  useEffect(() => {
    let pending = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = subscribeEvents({
      onState: setLive,
      onChange: (change) => {
        // A malformed event still means something changed.
        if (change) {
          pending.add(change.id);
          pending.add(change.path);
        }
        clearTimeout(timer);
        timer = setTimeout(() => {
          const refs = pending;
          pending = new Set();
          cb.current(refs);
        }, debounceMs);
      },
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [debounceMs]);
  return live;
}

/** The list filters of the URL as /tasks parameters. */
export function listParams(s: UrlState): Params {
  return {
    types: s.types.length ? s.types : undefined,
    state: s.state || undefined,
    status: s.status || undefined,
    parent_id: s.parent || undefined,
    tags: s.tag || undefined,
    project: s.project || undefined,
  };
}

/**
 * Whether an item is of one of `types` (empty: every type). The server reads `resource` as every file
 * that is not a task; the viewer's "Other files" chip means just that kind, so the list checks again.
 */
export function ofTypes(item: Pick<ItemSummary, 'type'>, types: readonly string[]): boolean {
  return !types.length || types.includes(item.type);
}

/** Whether an item is shown under the state filter `state` ('' : active tasks and documents, as /tasks). */
export function inState(item: Pick<ItemSummary, 'state'>, state: string): boolean {
  if (state === 'all') return true;
  if (!state) return item.state === null || item.state === 'active';
  return item.state !== null && state.split(',').includes(item.state);
}

export interface BacklogData {
  /** Every item, whatever its state (for filter choices, titles of parents, the folder tree). */
  all: ItemSummary[] | null;
  /** The items matching the filters, most recently updated first. */
  shown: ItemSummary[] | null;
  /** Without a state filter: by state, the items matching the other filters that the list leaves out. */
  notShown: Record<string, number>;
  error: ApiError | null;
  loading: boolean;
}

/** Loads `all` and the filtered list; reloads when the filters or `version` change. */
export function useBacklog(state: UrlState, version: number): BacklogData {
  const [all, setAll] = useState<ItemSummary[] | null>(null);
  const [shown, setShown] = useState<ItemSummary[] | null>(null);
  const [notShown, setNotShown] = useState<Record<string, number>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const params = listParams(state);
  const filterKey = JSON.stringify(params);

  useEffect(() => {
    const ctrl = new AbortController();
    listAll({ sort: 'id', state: 'all', project: state.project || undefined }, ctrl.signal)
      .then((list) => setAll(list.results))
      .catch((err) => {
        if (!ctrl.signal.aborted) setError(toApiError(err));
      });
    return () => ctrl.abort();
  }, [version, state.project]);

  useEffect(() => {
    const ctrl = new AbortController();
    setLoading(true);
    listAll(params, ctrl.signal)
      .then((list) => {
        setShown(list.results.filter((i) => ofTypes(i, state.types)));
        setNotShown(list.notShown);
        setError(null);
      })
      .catch((err) => {
        if (!ctrl.signal.aborted) setError(toApiError(err));
      })
      .finally(() => {
        if (!ctrl.signal.aborted) setLoading(false);
      });
    return () => ctrl.abort();
  }, [filterKey, version]);

  return { all, shown, notShown, error, loading };
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(
    'NETWORK',
    err instanceof Error ? err.message : String(err),
    'Check that `backlog-search serve` is still running.',
    0,
  );
}
