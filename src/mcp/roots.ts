/**
 * MCP roots (issue #22, docs/mcp.md "Roots"): a stdio server started without --dir asks a client that
 * declares the `roots` capability for its roots after `notifications/initialized`, opens the backlog under
 * each root (`<root>/backlog/`, else the root itself when it is a backlog) into the workspace, and follows
 * `notifications/roots/list_changed`: a new root's backlog is opened, a removed root's project is taken
 * out and its service closed. While no root has a backlog, the backlog opened at start (the working
 * directory's, else the read-only demo) is served. A root without a backlog is a warning, said once.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  InitializeRequestSchema,
  InitializedNotificationSchema,
  RootsListChangedNotificationSchema,
  type JSONRPCMessage,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';
import { realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SharedEmbeddingPool } from '../embeddings/shared-pool.js';
import type { EmbeddingProvider } from '../embeddings/types.js';
import { closeBacklog, type OpenBacklogOptions } from '../service/open-backlog.js';
import { addBacklog, backlogFolder } from '../workspace/open-workspace.js';
import { Workspace, type WorkspaceProject } from '../workspace/workspace.js';
import type { BacklogService } from '../service/backlog-service.js';

/** At most this many roots are opened (a client listing more gets a warning). */
export const MAX_ROOTS = 50;
/** How long the client has to answer roots/list (some clients declare roots and never answer: then the fallback). */
const LIST_TIMEOUT_MS = 5_000;

export interface RootsOptions {
  ws: Workspace;
  /** The backlog opened at start (the working directory's, else the demo): served while no root has one. */
  fallback: WorkspaceProject;
  /** How each root's backlog is opened (the server's options: watch, embeddings in the background, ...). */
  open: Omit<OpenBacklogOptions, 'dir'>;
  /** Where warnings are printed for people (stderr). */
  log?: (line: string) => void;
}

export class Roots {
  private server?: McpServer;
  private declared = false;
  /** Each root backlog's folder (real path) and its project in the workspace. */
  private readonly opened = new Map<string, WorkspaceProject>();
  private readonly warned = new Set<string>();
  private pending: string[] = [];
  private syncing: Promise<void> = Promise.resolve();
  private readonly open: Omit<OpenBacklogOptions, 'dir'>;

  constructor(private readonly options: RootsOptions) {
    const provider =
      options.open.embeddings ?? (process.env.BACKLOG_EMBEDDINGS as EmbeddingProvider | undefined) ?? 'auto';
    // One model for every root's backlog, as openWorkspace shares one (embeddings/shared-pool.ts).
    this.open =
      provider === 'none' || options.open.sharedEmbeddingPool
        ? options.open
        : {
            ...options.open,
            sharedEmbeddingPool: new SharedEmbeddingPool({
              provider,
              transformers: options.open.transformers,
            }),
          };
  }

  get ws(): Workspace {
    return this.options.ws;
  }

  /** The server whose client is asked (roots/list) and told (log messages). */
  attach(server: McpServer): this {
    this.server = server;
    return this;
  }

  /** runStdioServer's `watch`: attaches the server, and sees each message (watch). */
  watchServer = (server: McpServer) => this.attach(server).watch;

  /**
   * Sees each message from the client before the server does (runStdioServer's `watch`): returns the
   * work that later tool calls must wait for (opening the roots' backlogs) after `initialized` and after
   * every `roots/list_changed`, when the client declared roots.
   */
  watch = (message: JSONRPCMessage): Promise<void> | undefined => {
    const method = 'method' in message ? message.method : undefined;
    if (method === 'initialize') {
      const init = InitializeRequestSchema.safeParse(message);
      this.declared = init.success && Boolean(init.data.params.capabilities.roots);
      return undefined;
    }
    if (
      !this.declared ||
      (method !== 'notifications/initialized' && method !== 'notifications/roots/list_changed')
    )
      return undefined;
    if (
      !InitializedNotificationSchema.safeParse(message).success &&
      !RootsListChangedNotificationSchema.safeParse(message).success
    )
      return undefined;
    // After the message itself is handled; one sync at a time, in the order the client asked.
    this.syncing = this.syncing
      .then(() => this.sync())
      .catch((err: unknown) =>
        this.warn(`roots not followed: ${(err as Error)?.message ?? String(err)}`, 'sync'),
      );
    return this.syncing;
  };

  /** Warnings not yet given in a tool answer (each is given once). */
  takeWarnings = (): string[] => this.pending.splice(0);

  /** Closes every root's backlog and the fallback. */
  async close(): Promise<void> {
    await this.syncing;
    const services = new Set([...this.opened.values(), this.options.fallback].map((p) => p.service));
    await Promise.all([...services].map((s) => closeBacklog(s)));
  }

  /** Lists the roots and makes the workspace's projects those of the roots (the fallback when none has one). */
  private async sync(): Promise<void> {
    const { ws, fallback } = this.options;
    let roots: Root[];
    try {
      roots = (await this.server!.server.listRoots(undefined, { timeout: LIST_TIMEOUT_MS })).roots;
    } catch (err) {
      this.warn(`roots/list failed (${(err as Error).message}); serving ${fallback.dir}`, 'roots/list');
      return;
    }
    if (roots.length > MAX_ROOTS)
      this.warn(`${roots.length} roots; the first ${MAX_ROOTS} are opened`, 'max-roots');
    const wanted = new Set<string>();
    for (const root of roots.slice(0, MAX_ROOTS)) {
      const found = await backlogOfRoot(root.uri);
      if ('problem' in found) {
        this.warn(`root ${root.uri}: ${found.problem}`, root.uri);
        continue;
      }
      if (wanted.has(found.dir)) continue;
      if (!this.opened.has(found.dir)) {
        const p = await this.openRoot(found.dir);
        if ('code' in p) {
          this.warn(`root ${root.uri}: ${p.code}: ${p.message}`, root.uri);
          continue;
        }
        this.opened.set(found.dir, p);
      }
      wanted.add(found.dir);
    }
    // Added first, removed after: the workspace is never empty.
    const kept = [...this.opened].filter(([dir]) => wanted.has(dir)).map(([, p]) => p);
    if (wanted.size === 0 && !ws.projects.some((p) => p.service === fallback.service))
      ws.add({ ...fallback, name: ws.uniqueName(fallback.name) });
    for (const [dir, p] of [...this.opened])
      if (!wanted.has(dir)) {
        this.opened.delete(dir);
        // The fallback's service stays served when no root has a backlog (it was added above).
        if (wanted.size > 0 || p.service !== fallback.service) ws.remove(p.name);
        if (p.service !== fallback.service) await closeBacklog(p.service);
      }
    if (wanted.size > 0)
      for (const p of ws.projects) if (p.service === fallback.service && !kept.includes(p)) ws.remove(p.name);
  }

  /** A root's backlog as a project of the workspace; the fallback's service when it is the same folder. */
  private async openRoot(dir: string): Promise<WorkspaceProject | { code: string; message: string }> {
    const { ws, fallback } = this.options;
    const same = await realpath(fallback.dir).catch(() => fallback.dir);
    if (same === dir) {
      const served = ws.projects.find((p) => p.service === fallback.service);
      if (served) return served;
      const p = { ...fallback, name: ws.uniqueName(fallback.name) };
      ws.add(p);
      return p;
    }
    return addBacklog(ws, { dir }, this.open);
  }

  /** Once per key: on stderr, as an MCP log message, and at the end of the next tool answer. */
  private warn(text: string, key: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.log?.(`backlog-search: warning: ${text}\n`);
    this.pending.push(text);
    this.server?.server
      .sendLoggingMessage({ level: 'warning', logger: 'backlog-search', data: text })
      .catch(() => undefined);
  }
}

/**
 * The backlog folder (real path) under a root: `<root>/backlog/`, else the root itself when it is a
 * backlog (a config.yml or a tasks/ folder). Only a local `file://` URI naming a directory is taken.
 */
export async function backlogOfRoot(uri: string): Promise<{ dir: string } | { problem: string }> {
  let path: string;
  try {
    const url = new URL(uri);
    if (url.protocol !== 'file:') return { problem: 'not a file:// URI; skipped' };
    if (url.host && url.host !== 'localhost') return { problem: 'a file:// URI on another host; skipped' };
    path = resolve(fileURLToPath(url));
  } catch {
    return { problem: 'not a valid file:// URI; skipped' };
  }
  const real = await realpath(path).catch(() => null);
  if (!real || !(await stat(real)).isDirectory()) return { problem: 'no such folder; skipped' };
  const inner = join(real, 'backlog');
  if ((await stat(inner).catch(() => null))?.isDirectory()) return { dir: inner };
  try {
    return { dir: await backlogFolder(real) };
  } catch {
    return {
      problem: 'no backlog (no backlog/ folder, and the root is not a backlog itself); not served',
    };
  }
}

/** The roots of a server started on `service` (the working directory's backlog, or the demo) without --dir. */
export function followRoots(service: BacklogService, open: Omit<OpenBacklogOptions, 'dir'>): Roots {
  const ws = Workspace.of(service);
  return new Roots({ ws, fallback: ws.projects[0], open, log: (line) => process.stderr.write(line) });
}
