/**
 * The read API over HTTP, for the viewer and for scripts: thin routes over BacklogService.
 *
 * - `GET /search`       searchUnified; the options of `backlog_search` as query parameters
 * - `GET /tasks`        list (the filters of `backlog_list`)
 * - `GET /tasks/:id`    one item by id, resource URI or path, with its metadata and links
 * - `GET /resources/*`  one file by path (relative to the backlog root, or to its `resources/` folder)
 * - `GET /events`       server-sent events: `change` after each file applied to or removed from the index
 *
 * Over a workspace of several backlogs (docs/workspace.md) the routes are the Workspace's: `?project=` (a
 * name, a list, `*`) on /search and /tasks, qualified ids (`demo:TASK-0001`) and project-qualified paths
 * (`/resources/demo:docs/a.md` or `/resources/demo/docs/a.md`), `project` on every event. With one backlog
 * every answer is the service's own, as before.
 *
 * Query parameters: a list is repeated (`status=open&status=blocked`) or comma-separated
 * (`status=open,blocked`); numbers and booleans are read from their text (`limit=5`,
 * `conjunctive=true`). Options are validated by the same zod schemas as the MCP tools, so errors carry
 * the same codes.
 */
import { summarize } from '../service/summary.js';
import { parseQualified, qualify } from '../workspace/ids.js';
import type { Workspace } from '../workspace/workspace.js';
import type { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { z } from 'zod/mini';
import { normalizeArgs } from '../service/options.js';
import type { BacklogChange, BacklogService, ItemSummary } from '../service/backlog-service.js';
import { listOptionsSchema, searchOptionsSchema } from '../service/options.js';
import { resourceUri } from '../storage/parse.js';
import type { HttpEnv } from './respond.js';
import { errors } from '../errors.js';

/** Seconds between keep-alive comments on an idle event stream (proxies drop silent connections). */
const SSE_KEEPALIVE_MS = 25_000;

const TRUE = new Set(['true', '1', 'yes', 'on', '']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** The zod type under `.default()` / `.optional()` wrappers: `boolean`, `number`, `string`, `pipe`, ... */
function baseType(field: z.core.$ZodType): string {
  let def = (field as unknown as { _zod: { def: { type: string; innerType?: z.core.$ZodType } } })._zod.def;
  while (def.innerType) def = (def.innerType as unknown as { _zod: { def: typeof def } })._zod.def;
  return def.type;
}

/**
 * URL query parameters to tool arguments: one value stays a string, a repeated parameter becomes a
 * list, aliases are renamed as the MCP tools do (`q` -> query, `type` -> types), and booleans are read
 * from `true/false/1/0` (numbers are coerced by the schema itself). Anything else is left for the
 * strict schema to reject with a hint.
 */
export function queryToArgs(
  query: Record<string, string[]>,
  schema: z.ZodMiniObject,
): Record<string, unknown> {
  // Own properties only: a parameter named `__proto__` or `constructor` is just an unknown option.
  const raw = Object.fromEntries(
    Object.entries(query).map(([key, values]) => [key, values.length === 1 ? values[0] : values]),
  );
  const known = Object.keys(schema.shape);
  const args = normalizeArgs(raw, known);
  for (const [key, value] of Object.entries(args)) {
    if (!Object.hasOwn(schema.shape, key) || typeof value !== 'string') continue;
    if (baseType(schema.shape[key]) === 'boolean') {
      const v = value.trim().toLowerCase();
      if (TRUE.has(v)) args[key] = true;
      else if (FALSE.has(v)) args[key] = false;
    }
  }
  return args;
}

/** The part of the request's path after `prefix`, %-decoded; a malformed escape is INVALID_INPUT (400), not a 500. */
export function pathAfter(url: string, prefix: string): string {
  const raw = new URL(url).pathname.slice(prefix.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw errors.invalidInput(
      'path',
      `"${raw.slice(0, 200)}" is not a valid %-encoded path`,
      'Encode each segment with encodeURIComponent (a space is %20, "%" itself is %25).',
    );
  }
}

/** One item with its metadata, parent and children (as summaries, so a client can link them). */
export function itemResponse(service: BacklogService, ref: string) {
  const item = service.get(ref);
  const metadata = service.getMetadata(item.id);
  const known = (id: string) => {
    const resolved = service.resolve(id);
    return resolved ? summarize(service.get(resolved)) : null;
  };
  return {
    status: 'ok' as const,
    item: { ...item, uri: resourceUri(item.path) },
    metadata,
    parent: metadata.links.parent ? known(metadata.links.parent) : null,
    children: metadata.links.children.map(known).filter((s): s is ItemSummary => s !== null),
  };
}

/** The answer of GET /tasks/:id and GET /resources/<path>. */
export type ItemDetailResponse = ReturnType<typeof itemResponse>;

/** One item of a workspace of several backlogs: ids qualified, `project` on the item and its links. */
export function workspaceItemResponse(ws: Workspace, ref: string, project?: string[]) {
  const item = ws.get(ref, { project });
  const name = item.project as string;
  const metadata = ws.getMetadata(item.id);
  const known = (id: string) => {
    const resolved = ws.resolve(id);
    if (!resolved) return null;
    const found = ws.get(resolved);
    return { ...summarize(found), project: found.project as string };
  };
  return {
    status: 'ok' as const,
    item: { ...item, uri: qualify(name, resourceUri(item.path)) },
    metadata,
    parent: metadata.links.parent ? known(metadata.links.parent) : null,
    children: metadata.links.children.map(known).filter((s): s is ItemSummary & { project: string } => !!s),
  };
}

/**
 * The reference a workspace reads for `/resources/<path>`: `demo:docs/a.md`, `demo/docs/a.md` (when `demo`
 * is a project and the rest is a file of it) or a bare path; each also relative to the `resources/` folder.
 */
function workspaceResourceRef(ws: Workspace, path: string): string {
  const isProject = (name: string) => ws.byName(name) !== undefined;
  const q = parseQualified(path, isProject);
  const candidates: string[] = [];
  const slash = path.indexOf('/');
  if (q.project) candidates.push(`${q.project}:${q.ref}`, `${q.project}:resources/${q.ref}`);
  else if (slash > 0 && isProject(path.slice(0, slash).toLowerCase())) {
    const [name, rest] = [path.slice(0, slash).toLowerCase(), path.slice(slash + 1)];
    candidates.push(`${name}:${rest}`, `${name}:resources/${rest}`);
  }
  if (!q.project) candidates.push(path, `resources/${path}`);
  // None found: the plain reference, so that get says NOT_FOUND, or AMBIGUOUS_ID with the candidates.
  return candidates.find((r) => ws.resolve(r) !== undefined) ?? (q.project ? candidates[0] : path);
}

/** `?project=` (repeated or comma-separated) taken out of the query; undefined when absent. */
function takeProject(query: Record<string, string[]>): string[] | undefined {
  const values = query.project;
  delete query.project;
  return values?.flatMap((v) => v.split(','));
}

/**
 * Adds the API routes to `app` over one backlog, or over a workspace (several backlogs: the Workspace's
 * reads; one: its service's, as for a lone service); returns a function that ends the open event streams.
 */
export function mountApi(app: Hono<HttpEnv>, ws: Workspace): () => Promise<void> {
  const service = ws.multi ? undefined : ws.projects[0].service;
  // `await`: the routes keep working if searchUnified or list become asynchronous (query embeddings).
  app.get('/search', async (c) => {
    const queries = c.req.queries();
    const project = takeProject(queries);
    const { query, ...options } = queryToArgs(queries, searchOptionsSchema);
    const opts = options as Parameters<BacklogService['searchUnified']>[1];
    if (service) ws.scope(project); // a name this backlog does not have is INVALID_FILTER
    const res = service
      ? await service.searchUnified(query as string, opts)
      : await ws.searchUnified(query as string, { ...opts, project });
    return c.json({ status: 'ok', ...res });
  });

  app.get('/tasks', async (c) => {
    const queries = c.req.queries();
    const project = takeProject(queries);
    const args = queryToArgs(queries, listOptionsSchema) as Parameters<BacklogService['list']>[0];
    if (service) ws.scope(project);
    const res = service ? await service.list(args) : ws.list({ ...args, project });
    return c.json({ status: 'ok', ...res });
  });

  app.get('/tasks/:id', (c) => {
    const ref = pathAfter(c.req.url, '/tasks/');
    if (service) return c.json(itemResponse(service, ref));
    return c.json(workspaceItemResponse(ws, ref, takeProject(c.req.queries())));
  });

  app.get('/resources/*', (c) => {
    const path = pathAfter(c.req.url, '/resources/');
    if (!service) return c.json(workspaceItemResponse(ws, workspaceResourceRef(ws, path)));
    const ref =
      service.resolve(path) !== undefined || service.resolve(`resources/${path}`) === undefined
        ? path
        : `resources/${path}`;
    return c.json(itemResponse(service, ref));
  });

  /** Open event streams, each with the function that ends it. */
  const streams = new Map<SSEStreamingApi, () => void>();
  app.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      const done = new Promise<void>((resolve) => {
        streams.set(stream, resolve);
        stream.onAbort(resolve);
      });
      let id = 0;
      const queue: Array<BacklogChange & { project?: string }> = [];
      let writing = false;
      const drain = async () => {
        if (writing) return;
        writing = true;
        try {
          while (queue.length && !stream.aborted && !stream.closed) {
            const change = queue.shift()!;
            await stream.writeSSE({ event: 'change', id: String(++id), data: JSON.stringify(change) });
          }
        } catch {
          // The client went away; onAbort cleans up.
        } finally {
          writing = false;
        }
      };
      // Several backlogs: each change names its project, and its id is qualified (as every answer's).
      const unsubscribers = ws.projects.map((p) =>
        p.service.onChange((change) => {
          queue.push(ws.multi ? { ...change, id: qualify(p.name, change.id), project: p.name } : change);
          void drain();
        }),
      );
      const keepAlive = setInterval(
        () => void stream.write(': keep-alive\n\n').catch(() => undefined),
        SSE_KEEPALIVE_MS,
      );
      await stream.writeSSE({
        event: 'ready',
        data: JSON.stringify({ items: ws.size }),
        retry: 2000,
      });
      await done;
      clearInterval(keepAlive);
      for (const unsubscribe of unsubscribers) unsubscribe();
      streams.delete(stream);
    }),
  );

  return async () => {
    for (const end of streams.values()) end();
    streams.clear();
  };
}
