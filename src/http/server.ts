/**
 * The HTTP surface: one Hono app. `GET /health`, MCP Streamable HTTP at `/mcp`, the read API
 * (`/search`, `/tasks`, `/tasks/:id`, `/resources/*`, `/events`; see ./api.ts) and the viewer's
 * static files at `/` (./viewer.ts). Add routes to the app returned by `createHttpApp` (the
 * Host/Origin guard and the JSON error handlers already cover them).
 */
import { serve, type HttpBindings } from '@hono/node-server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBacklogError } from '../errors.js';
import { createMcpServer } from '../mcp/server.js';
import type { BacklogService } from '../service/backlog-service.js';
import { VERSION } from '../version.js';
import { mountApi } from './api.js';
import { viewerHandler } from './viewer.js';

export interface HttpAppOptions {
  /**
   * Host names (without port) accepted in the Host header, besides localhost, 127.0.0.1 and [::1].
   * `'*'` turns the Host check off (only behind a proxy that checks it).
   */
  allowedHosts?: string[];
  /**
   * Origins (`https://app.example.com`, scheme + host + port) accepted in the Origin header, besides
   * loopback origins on any port. `'*'` turns the Origin check off. Requests without Origin (not
   * from a browser) are accepted.
   */
  allowedOrigins?: string[];
  /** MCP sessions idle this long are closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** At most this many MCP sessions; the least recently used is closed beyond it (default 100). */
  maxSessions?: number;
  /**
   * The built viewer (a folder with index.html); default dist/viewer of this package. `false` serves
   * no viewer.
   */
  viewerDir?: string | false;
}

export type HttpEnv = { Bindings: HttpBindings };
export type HttpApp = Hono<HttpEnv>;

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/** JSON error body of every HTTP failure (the MCP tools use the same `{status, error}` shape). */
export function httpError(
  c: Context,
  status: 400 | 403 | 404 | 405 | 409 | 413 | 500,
  code: string,
  message: string,
  hint: string,
): Response {
  return c.json({ status: 'error', error: { code, message, hint } }, status);
}

/** `example.com:3030` -> `example.com`; `[::1]:3030` -> `[::1]`. */
function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

/**
 * DNS-rebinding protection: a page on evil.example whose name resolves to 127.0.0.1 still sends
 * `Host: evil.example` and `Origin: http://evil.example`; both are refused with 403.
 */
export function hostOriginGuard(
  options: Pick<HttpAppOptions, 'allowedHosts' | 'allowedOrigins'> = {},
): MiddlewareHandler<HttpEnv> {
  const hosts = new Set([...LOOPBACK, ...(options.allowedHosts ?? []).map(hostnameOf)]);
  const anyHost = hosts.has('*');
  const origins = new Set(
    (options.allowedOrigins ?? []).map((o) => o.trim().toLowerCase().replace(/\/+$/, '')),
  );
  const anyOrigin = origins.has('*');
  return async (c, next) => {
    const host = c.req.header('host');
    if (!anyHost && (!host || !hosts.has(hostnameOf(host)))) {
      return httpError(
        c,
        403,
        'FORBIDDEN',
        `Host "${host ?? ''}" is not allowed`,
        `This server answers to ${[...hosts].join(', ')}; start it with --allow-host <name> to add one.`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !anyOrigin) {
      let ok = origins.has(origin.toLowerCase());
      if (!ok) {
        try {
          const url = new URL(origin);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.includes(url.hostname);
        } catch {
          ok = false;
        }
      }
      if (!ok)
        return httpError(
          c,
          403,
          'FORBIDDEN',
          `Origin "${origin}" is not allowed`,
          'Only pages served from localhost may call this server; start it with --allow-origin <origin> to add one.',
        );
    }
    await next();
  };
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
}

/** MCP Streamable HTTP with sessions (so list-changed notifications reach clients on the GET stream). */
function mountMcp(app: HttpApp, service: BacklogService, options: HttpAppOptions): () => Promise<void> {
  const sessions = new Map<string, Session>();
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 100;

  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.server.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) if (now - s.lastSeen > idleMs) void closeSession(id);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  app.all('/mcp', async (c) => {
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session)
        return c.json(
          {
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found; initialize a new session' },
            id: null,
          },
          404,
        );
      session.lastSeen = Date.now();
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') {
      return c.json(
        {
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Bad request: no mcp-session-id; start with an initialize POST' },
          id: null,
        },
        400,
      );
    }
    const server = createMcpServer(service);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastSeen: Date.now() });
        if (sessions.size > maxSessions) {
          const oldest = [...sessions].sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0][0];
          void closeSession(oldest);
        }
      },
      onsessionclosed: (id) => void closeSession(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    if (!transport.sessionId || !sessions.has(transport.sessionId))
      await server.close().catch(() => undefined);
    return response;
  });

  return async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.keys()].map(closeSession));
  };
}

const disposers = new WeakMap<HttpApp, () => Promise<void>>();

/** The HTTP status of each error code: 400 for bad input, 403, 404, 409, 413, 500. */
export function statusOf(code: string): 400 | 403 | 404 | 409 | 413 | 500 {
  switch (code) {
    case 'FORBIDDEN_PATH':
      return 403;
    case 'INPUT_TOO_LARGE':
      return 413;
    case 'NOT_FOUND':
      return 404;
    case 'CONFLICT':
      return 409;
    case 'INTERNAL':
      return 500;
    default:
      return 400;
  }
}

/**
 * The HTTP app over `service`: Host/Origin guard on every route, JSON errors, `GET /health`, MCP
 * at `/mcp`, the read API and the viewer. Pass it to `startHttpServer`, or to any Hono adapter; `disposeHttpApp` closes its MCP sessions.
 */
export function createHttpApp(service: BacklogService, options: HttpAppOptions = {}): HttpApp {
  const app = new Hono<HttpEnv>();
  app.use('*', hostOriginGuard(options));
  app.onError((err, c) => {
    if (isBacklogError(err)) return httpError(c, statusOf(err.code), err.code, err.message, err.hint);
    process.stderr.write(`backlog-search http: ${err.stack ?? err.message}\n`);
    return httpError(
      c,
      500,
      'INTERNAL',
      err.message,
      'Unexpected failure; please report it with the request you made.',
    );
  });
  const viewer = options.viewerDir === false ? undefined : viewerHandler(options.viewerDir);
  // The viewer's files are served where no route matched, so routes added to the app later still win.
  app.notFound(
    async (c) =>
      (await viewer?.(c)) ??
      httpError(
        c,
        404,
        'NOT_FOUND',
        `No route ${c.req.method} ${c.req.path}`,
        'Routes: GET /search, /tasks, /tasks/:id, /resources/<path>, /events, /health; POST|GET|DELETE /mcp; the viewer at /.',
      ),
  );

  app.get('/health', (c) =>
    c.json({
      status: 'ok',
      name: 'backlog-search',
      version: VERSION,
      items: service.size,
      search_mode: service.diagnostics().search_mode,
    }),
  );

  const closeMcp = mountMcp(app, service, options);
  const closeEvents = mountApi(app, service);
  disposers.set(app, async () => {
    await closeEvents();
    await closeMcp();
  });
  return app;
}

/** Closes the MCP sessions of an app made by `createHttpApp`. */
export async function disposeHttpApp(app: HttpApp): Promise<void> {
  await disposers.get(app)?.();
}

export interface StartHttpServerOptions extends HttpAppOptions {
  service: BacklogService;
  /** Default 127.0.0.1: reachable from this machine only. */
  host?: string;
  /** Default 3030; 0 picks a free port. */
  port?: number;
  /** An app to serve instead of a new `createHttpApp(service, options)`. */
  app?: HttpApp;
}

export interface RunningHttpServer {
  /** `http://127.0.0.1:3030` */
  url: string;
  host: string;
  port: number;
  app: HttpApp;
  server: Server;
  close(): Promise<void>;
}

export async function startHttpServer(options: StartHttpServerOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const app = options.app ?? createHttpApp(options.service, options);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 3030 }, () =>
      resolve(s as Server),
    ) as Server;
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    app,
    server,
    close: async () => {
      await disposeHttpApp(app);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
