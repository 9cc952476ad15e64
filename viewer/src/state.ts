/** The URL state kept in step with the browser history (see ./state-url.ts for the format). */
import { useEffect, useState } from 'preact/hooks';
import { parseState, serializeState, type UrlState } from './state-url.js';

export { ITEM_TYPES, type ItemType, type UrlState, type View } from './state-url.js';

/** The href of the viewer with `patch` applied to `state` (for real links: middle-click, copy). */
export function hrefFor(state: UrlState, patch: Partial<UrlState>): string {
  return serializeState({ ...state, ...patch }, location.pathname);
}

type Listener = (s: UrlState) => void;
const listeners = new Set<Listener>();
let current = parseState(location.search);

function notify(): void {
  for (const l of listeners) l(current);
}

window.addEventListener('popstate', () => {
  current = parseState(location.search);
  notify();
});

/** Changes the state; `replace` for typing (no history entry per key), push for navigation. */
export function navigate(patch: Partial<UrlState>, replace = false): void {
  current = { ...current, ...patch };
  const href = serializeState(current, location.pathname);
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  notify();
}

export function getState(): UrlState {
  return current;
}

export function useUrlState(): UrlState {
  const [state, setState] = useState(current);
  useEffect(() => {
    listeners.add(setState);
    setState(current);
    return () => void listeners.delete(setState);
  }, []);
  return state;
}
