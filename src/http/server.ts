/**
 * The HTTP surface: one Hono app. `GET /health`, MCP Streamable HTTP at `/mcp`, the read API
 * (`/search`, `/tasks`, `/tasks/:id`, `/resources/*`, `/events`; see ./api.ts) and the viewer's
 * static files at `/` (./viewer.ts). Add routes to the app returned by `createHttpApp` (the
 * Host/Origin guard and the JSON error handlers already cover them).
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBacklogError } from '../errors.js';
import type { BacklogService } from '../service/backlog-service.js';
import { VERSION } from '../version.js';
import { projectSlug } from '../workspace/ids.js';
import { Workspace } from '../workspace/workspace.js';
import { mountApi } from './api.js';
import { DEFAULT_MAX_BODY_BYTES, bearerAuth, checkAccess, limitBody } from './auth.js';
import { hostOriginGuard } from './guard.js';
import { mountMcp, type McpMountOptions } from './mcp.js';
import { httpError, statusOf, type HttpApp, type HttpEnv } from './respond.js';
import { viewerHandler } from './viewer.js';

export { hostOriginGuard } from './guard.js';
export { checkAccess, isLoopbackHost, tokenMatches } from './auth.js';
export { mcpSessionStats } from './mcp.js';
export { httpError, statusOf, type HttpApp, type HttpEnv } from './respond.js';

export interface HttpAppOptions extends McpMountOptions {
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
  /**
   * The built viewer (a folder with index.html); default dist/viewer of this package. `false` serves
   * no viewer.
   */
  viewerDir?: string | false;
  /**
   * A bearer token every request must carry (`Authorization: Bearer <token>`), except `GET /health`
   * (which then answers only `{status}`) and the viewer's static files. Compared in constant time; at
   * least 16 characters. Required to bind beyond loopback (`startHttpServer` refuses otherwise).
   */
  token?: string;
}

const disposers = new WeakMap<HttpApp, () => Promise<void>>();

/** What `GET /health` says of one backlog, and `GET /projects` of each. */
function describeBacklog(service: BacklogService, readOnly: boolean) {
  return {
    items: service.size,
    project: service.projectName,
    vocabulary: service.vocabulary(),
    search_mode: service.index.defaultMode(),
    read_only: readOnly || service.isDemo,
    demo: service.isDemo,
    format: {
      name: service.format.name,
      project: service.format.config.project,
      statuses: service.format.config.statuses,
      task_prefix: service.format.config.taskPrefix,
    },
  };
}

/** A lone service as a workspace of one (its reads stay the service's own: see api.ts). */
function asWorkspace(target: BacklogService | Workspace): Workspace {
  if (target instanceof Workspace) return target;
  return new Workspace([{ name: projectSlug(target.projectName), dir: target.dir, service: target }]);
}

/** Fields of an error body beyond code, message and hint: an ambiguous id's candidates, the projects a write may go to. */
function errorExtra(details: Record<string, unknown>, code: string): Record<string, unknown> | undefined {
  if (code === 'AMBIGUOUS_ID') return { candidates: details.candidates };
  if (code === 'PROJECT_REQUIRED') return { projects: details.projects };
  return undefined;
}

/**
 * The HTTP app over `service` (one backlog) or a Workspace (several, docs/workspace.md): Host/Origin guard
 * on every route, JSON errors, `GET /health`, `GET /projects`, MCP at `/mcp`, the read API and the viewer.
 * Pass it to `startHttpServer`, or to any Hono adapter; `disposeHttpApp` closes its MCP sessions.
 */
export function createHttpApp(target: BacklogService | Workspace, options: HttpAppOptions = {}): HttpApp {
  const ws = asWorkspace(target);
  const service = ws.projects[0].service;
  const readOnly = options.readOnly === true;
  const app = new Hono<HttpEnv>();
  app.use('*', hostOriginGuard(options));
  app.use('*', bearerAuth(options.token));
  app.use('*', limitBody(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
  app.onError((err, c) => {
    if (isBacklogError(err))
      return httpError(
        c,
        statusOf(err.code),
        err.code,
        err.message,
        err.hint,
        errorExtra(err.details, err.code),
      );
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
        'Routes: GET /search, /tasks, /tasks/:id, /resources/<path>, /events, /health, /projects; POST|GET|DELETE /mcp; the viewer at /.',
      ),
  );

  // Each open backlog as /health describes one, with its name in the workspace; and those that failed.
  const projects = () => ({
    projects: ws.projects.map((p) => ({ name: p.name, ...describeBacklog(p.service, readOnly) })),
    problems: ws.problems.map(({ name, code, message, hint }) => ({ name, code, message, hint })),
  });
  const problems = () => (ws.problems.length ? { problems: projects().problems } : {});
  app.get('/health', (c) =>
    c.json(
      !c.get('authorized')
        ? { status: 'ok' }
        : ws.multi
          ? {
              status: 'ok',
              name: 'backlog-search',
              version: VERSION,
              items: ws.size,
              // Several backlogs: no one project, vocabulary or format; each is in `projects`.
              project: null,
              read_only: readOnly,
              demo: false,
              ...projects(),
            }
          : {
              status: 'ok',
              name: 'backlog-search',
              version: VERSION,
              ...describeBacklog(service, readOnly),
              ...problems(),
            },
    ),
  );
  app.get('/projects', (c) => c.json({ status: 'ok', ...projects() }));

  // One backlog: its service, exactly as before; several: /mcp serves every project.
  const closeMcp = mountMcp(app, ws.multi ? ws : service, options);
  const closeEvents = mountApi(app, ws);
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
  /** One backlog, or a Workspace of several (openWorkspace). */
  service: BacklogService | Workspace;
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

/**
 * Binds the app. A host beyond loopback without `token` is refused (UNAUTHORIZED, with a hint), so a
 * backlog is never served to the network without authentication.
 */
export async function startHttpServer(options: StartHttpServerOptions): Promise<RunningHttpServer> {
  const host = options.host ?? '127.0.0.1';
  checkAccess(host, options.token);
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
