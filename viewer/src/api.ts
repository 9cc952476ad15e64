/**
 * The viewer's only source of data: the HTTP API of `backlog-search serve`. No index in the browser;
 * search goes through GET /search, which is BacklogService.searchUnified.
 */
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
  const res = await fetch(url(path, params), { signal, headers: { Accept: 'application/json' } });
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

/** Every item matching `params`, paging through /tasks (1000 per request). */
export async function listAll(params: Params = {}, signal?: AbortSignal): Promise<ItemSummary[]> {
  const out: ItemSummary[] = [];
  let offset = 0;
  for (;;) {
    const page = await getJson<List>('tasks', { ...params, limit: 1000, offset }, signal);
    out.push(...page.results);
    if (page.next_offset === undefined) return out;
    offset = page.next_offset;
  }
}

/** What goes in the URL for an item: its id for tasks and epics, its path for resources. */
export function itemRef(item: Pick<ItemSummary, 'id' | 'type' | 'path'>): string {
  return item.type === 'resource' ? item.path : item.id;
}

/** One item by id (`TASK-0001`) or by path (`resources/adr/0001.md`). */
export function getItem(ref: string, signal?: AbortSignal): Promise<ItemDetail> {
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
  /** How the folder is read: `native` or `backlog-md`, with its statuses in board order. */
  format: { name: string; project: string | null; statuses: string[]; task_prefix: string };
}

export function health(): Promise<Health> {
  return getJson<Health>('health');
}
