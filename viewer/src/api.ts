/**
 * The viewer's only source of data: the HTTP API of `backlog-search serve`. No index in the browser;
 * search goes through GET /search, which is BacklogService.searchUnified.
 */
import type { Vocabulary } from './vocabulary.js';
import type { ItemDetailResponse, ItemSummary, ListResponse, SearchResponse, SearchResult } from './types.js';

export type { ItemSummary, SearchResult };

export type Search = SearchResponse & { status: 'ok' };
export type List = ListResponse & { status: 'ok' };
export type ItemDetail = ItemDetailResponse & { status: 'ok' };

export type Params = Record<string, string | number | boolean | string[] | undefined>;

/** An error answered by the API: `{status: 'error', error: {code, message, hint}}`. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'backlog-search-token';

/**
 * The server's bearer token, when it was started with one (`serve --token`). The viewer learns it from
 * the address `serve` prints, `http://host:port/#token=...`: a fragment never reaches the server, its
 * logs or a Referer. It is kept in sessionStorage for this tab and removed from the address bar. A page
 * opened without it asks once, when the server first answers 401.
 */
let token: string | null = takeToken();

function takeToken(): string | null {
  try {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (m) {
      const t = decodeURIComponent(m[1]);
      sessionStorage.setItem(TOKEN_KEY, t);
      history.replaceState(history.state, '', location.pathname + location.search);
      return t;
    }
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function authHeaders(): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

let asking: Promise<boolean> | undefined;
/** Asks the person for the token (once for concurrent 401s); true when one was given. */
function askForToken(): Promise<boolean> {
  asking ??= Promise.resolve().then(() => {
    const given =
      typeof prompt === 'function'
        ? prompt('This server needs its access token (backlog-search serve --token):')
        : null;
    asking = undefined;
    if (!given?.trim()) return false;
    token = given.trim();
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Private mode: the token lasts until the page is closed.
    }
    return true;
  });
  return asking;
}

/** Relative to the page, so the viewer also works behind a path prefix. */
function url(path: string, params: Params = {}): string {
  const qs = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    qs.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const q = qs.toString();
  return `${path}${q ? `?${q}` : ''}`;
}

async function getJson<T>(path: string, params?: Params, signal?: AbortSignal): Promise<T> {
  const get = () =>
    fetch(url(path, params), { signal, headers: { Accept: 'application/json', ...authHeaders() } });
  let res = await get();
  if (res.status === 401 && (await askForToken())) res = await get();
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(
      'INTERNAL',
      `The server answered ${res.status} without JSON`,
      'Is the server running?',
      res.status,
    );
  }
  const b = body as { status?: string; error?: { code: string; message: string; hint: string } };
  if (!res.ok || b.status === 'error') {
    const e = b.error ?? { code: 'INTERNAL', message: `HTTP ${res.status}`, hint: '' };
    throw new ApiError(e.code, e.message, e.hint, res.status);
  }
  return body as T;
}

export function search(params: Params, signal?: AbortSignal): Promise<Search> {
  return getJson<Search>('search', params, signal);
}

/** Every item matching `params` (paging through /tasks, 1000 per request), and what the default left out. */
export async function listAll(
  params: Params = {},
  signal?: AbortSignal,
): Promise<{ results: ItemSummary[]; notShown: Record<string, number> }> {
  const out: ItemSummary[] = [];
  let offset = 0;
  for (;;) {
    const page = await getJson<List>('tasks', { ...params, limit: 1000, offset }, signal);
    out.push(...page.results);
    if (page.next_offset === undefined)
      return { results: out, notShown: (page.not_shown ?? {}) as Record<string, number> };
    offset = page.next_offset;
  }
}

/**
 * What goes in the URL for an item: its id for tasks and epics, its path for resources (`demo:docs/a.md`
 * when the server serves several backlogs).
 */
export function itemRef(item: Pick<ItemSummary, 'id' | 'type' | 'path' | 'project'>): string {
  if (item.type !== 'resource') return item.id;
  return item.project ? `${item.project}:${item.path}` : item.path;
}

/** One item by id (`TASK-0001`) or by path (`resources/adr/0001.md`). */
export function getItem(ref: string, signal?: AbortSignal): Promise<ItemDetail> {
  // `demo:docs/a.md`: a path (has a slash) in a project; `demo:TASK-1` and URIs go to /tasks/.
  if (ref.includes('/') && !ref.startsWith('mcp://')) {
    return getJson<ItemDetail>(`resources/${ref.split('/').map(encodeURIComponent).join('/')}`, {}, signal);
  }
  return getJson<ItemDetail>(`tasks/${encodeURIComponent(ref)}`, {}, signal);
}

export interface Health {
  status: 'ok';
  version: string;
  items: number;
  search_mode: string;
  /** The project's name (Backlog.md's project_name, else the folder above backlog/). */
  project?: string;
  /** How the backlog names things; absent from servers before it. */
  vocabulary?: Partial<Vocabulary>;
  /** The server takes no edits (its MCP write tools are off). */
  read_only?: boolean;
  /** The built-in demo backlog, served because no backlog was found. */
  demo?: boolean;
  /** How the folder is read: `native` or `backlog-md`, with its statuses in board order. */
  format: { name: string; project: string | null; statuses: string[]; task_prefix: string };
}

/** One backlog of several served (GET /health `projects`): what /health says of a lone backlog, and its name. */
export type ProjectInfo = Omit<Health, 'status' | 'version'> & { name: string };

/** GET /health when the server serves several backlogs: no one project, vocabulary or format, but `projects`. */
export interface WorkspaceHealth extends Omit<Health, 'format' | 'project' | 'vocabulary'> {
  project: null;
  format?: undefined;
  vocabulary?: undefined;
  projects: ProjectInfo[];
  /** Folders that could not be opened, each with its error code. */
  problems: { name: string; code: string; message: string; hint: string }[];
}

export function health(): Promise<Health | WorkspaceHealth> {
  return getJson<Health | WorkspaceHealth>('health');
}

export type Live = 'connecting' | 'live' | 'offline';

export interface EventHandlers {
  onState: (state: Live) => void;
  /** One `change` event's data (`{id, path, ...}`), or null when it could not be read. */
  onChange: (change: { id: string; path: string } | null) => void;
}

function parseChange(data: string): { id: string; path: string } | null {
  try {
    return JSON.parse(data) as { id: string; path: string };
  } catch {
    return null;
  }
}

/**
 * Follows GET /events (server-sent events). Without a token through EventSource; with one through
 * fetch (EventSource cannot send an Authorization header), reconnecting after 2 s. Returns a function
 * that stops it.
 */
export function subscribeEvents(handlers: EventHandlers): () => void {
  if (!token) {
    if (typeof EventSource === 'undefined') return () => undefined;
    const source = new EventSource('events');
    source.addEventListener('ready', () => handlers.onState('live'));
    source.addEventListener('open', () => handlers.onState('live'));
    source.addEventListener('error', () =>
      handlers.onState(source.readyState === EventSource.CLOSED ? 'offline' : 'connecting'),
    );
    source.addEventListener('change', (e) =>
      handlers.onChange(parseChange((e as MessageEvent<string>).data)),
    );
    return () => source.close();
  }
  const abort = new AbortController();
  const run = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const res = await fetch('events', {
          signal: abort.signal,
          headers: { Accept: 'text/event-stream', ...authHeaders() },
        });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        handlers.onState('live');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: ?(.*)$/m.exec(block)?.[1];
            const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n');
            if (event === 'change') handlers.onChange(parseChange(data));
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      handlers.onState('connecting');
      await new Promise((r) => setTimeout(r, 2000));
    }
  };
  void run();
  return () => abort.abort();
}
