/**
 * The read API over HTTP, for the viewer and for scripts: thin routes over BacklogService.
 *
 * - `GET /search`       searchUnified; the options of `backlog_search` as query parameters
 * - `GET /tasks`        list (the filters of `backlog_list`)
 * - `GET /tasks/:id`    one item by id, resource URI or path, with its metadata and links
 * - `GET /resources/*`  one file by path (relative to the backlog root, or to its `resources/` folder)
 * - `GET /events`       server-sent events: `change` after each file applied to or removed from the index
 *
 * Query parameters: a list is repeated (`status=open&status=blocked`) or comma-separated
 * (`status=open,blocked`); numbers and booleans are read from their text (`limit=5`,
 * `conjunctive=true`). Options are validated by the same zod schemas as the MCP tools, so errors carry
 * the same codes.
 */
import { summarize } from '../service/summary.js';
import type { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { z } from 'zod';
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
function baseType(field: z.ZodType): string {
  let def = (field as unknown as { _zod: { def: { type: string; innerType?: z.ZodType } } })._zod.def;
  while (def.innerType) def = (def.innerType as unknown as { _zod: { def: typeof def } })._zod.def;
  return def.type;
}

/**
 * URL query parameters to tool arguments: one value stays a string, a repeated parameter becomes a
 * list, aliases are renamed as the MCP tools do (`q` -> query, `type` -> types), and booleans are read
 * from `true/false/1/0` (numbers are coerced by the schema itself). Anything else is left for the
 * strict schema to reject with a hint.
 */
export function queryToArgs(query: Record<string, string[]>, schema: z.ZodObject): Record<string, unknown> {
  // Own properties only: a parameter named `__proto__` or `constructor` is just an unknown option.
  const raw = Object.fromEntries(
    Object.entries(query).map(([key, values]) => [key, values.length === 1 ? values[0] : values]),
  );
  const known = Object.keys(schema.shape);
  const args = normalizeArgs(raw, known);
  for (const [key, value] of Object.entries(args)) {
    if (!Object.hasOwn(schema.shape, key) || typeof value !== 'string') continue;
    if (baseType(schema.shape[key] as z.ZodType) === 'boolean') {
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

/** Adds the API routes to `app`; returns a function that ends the open event streams. */
export function mountApi(app: Hono<HttpEnv>, service: BacklogService): () => Promise<void> {
  // `await`: the routes keep working if searchUnified or list become asynchronous (query embeddings).
  app.get('/search', async (c) => {
    const { query, ...options } = queryToArgs(c.req.queries(), searchOptionsSchema);
    const res = await service.searchUnified(
      query as string,
      options as Parameters<BacklogService['searchUnified']>[1],
    );
    return c.json({ status: 'ok', ...res });
  });

  app.get('/tasks', async (c) => {
    const args = queryToArgs(c.req.queries(), listOptionsSchema);
    const res = await service.list(args as Parameters<BacklogService['list']>[0]);
    return c.json({ status: 'ok', ...res });
  });

  app.get('/tasks/:id', (c) => c.json(itemResponse(service, pathAfter(c.req.url, '/tasks/'))));

  app.get('/resources/*', (c) => {
    const path = pathAfter(c.req.url, '/resources/');
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
      const queue: BacklogChange[] = [];
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
      const unsubscribe = service.onChange((change) => {
        queue.push(change);
        void drain();
      });
      const keepAlive = setInterval(
        () => void stream.write(': keep-alive\n\n').catch(() => undefined),
        SSE_KEEPALIVE_MS,
      );
      await stream.writeSSE({
        event: 'ready',
        data: JSON.stringify({ items: service.size }),
        retry: 2000,
      });
      await done;
      clearInterval(keepAlive);
      unsubscribe();
      streams.delete(stream);
    }),
  );

  return async () => {
    for (const end of streams.values()) end();
    streams.clear();
  };
}
