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
    status: s.status || undefined,
    parent_id: s.epic || undefined,
    tags: s.tag || undefined,
  };
}

export interface BacklogData {
  /** Every item (for filter choices, titles of parents, the folder tree). */
  all: ItemSummary[] | null;
  /** The items matching the filters, most recently updated first. */
  shown: ItemSummary[] | null;
  error: ApiError | null;
  loading: boolean;
}

/** Loads `all` and the filtered list; reloads when `filterKey` or `version` changes. */
export function useBacklog(state: UrlState, version: number): BacklogData {
  const [all, setAll] = useState<ItemSummary[] | null>(null);
  const [shown, setShown] = useState<ItemSummary[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const params = listParams(state);
  const filterKey = JSON.stringify(params);

  useEffect(() => {
    const ctrl = new AbortController();
    listAll({ sort: 'id' }, ctrl.signal)
      .then((items) => setAll(items))
      .catch((err) => {
        if (!ctrl.signal.aborted) setError(toApiError(err));
      });
    return () => ctrl.abort();
  }, [version]);

  useEffect(() => {
    const ctrl = new AbortController();
    setLoading(true);
    listAll(params, ctrl.signal)
      .then((items) => {
        setShown(items);
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

  return { all, shown, error, loading };
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
