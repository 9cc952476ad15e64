/**
 * The MCP server: eight tools, each a schema plus a handler that delegates to BacklogService (one module
 * per tool in ./tools), the backlog as resources (./resources.ts), and list-changed notifications. Every
 * tool returns `structuredContent` (`{status: "ok", ...}` or `{status: "error", error: {code, message,
 * hint}}` with `isError: true`) plus one compact text block.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BacklogService } from '../service/backlog-service.js';
import { VERSION } from '../version.js';
import { registerResources } from './resources.js';
import { errorResult, registerTool, toolDefinition, type ProjectsAdvertised } from './tool.js';
import { Workspace, type WorkspaceProject } from '../workspace/workspace.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { BacklogError } from '../errors.js';
import { createTool } from './tools/create.js';
import { deleteTool } from './tools/delete.js';
import { getMetadataTool } from './tools/get-metadata.js';
import { getTool } from './tools/get.js';
import { listTool } from './tools/list.js';
import { searchTool } from './tools/search.js';
import { updateTool } from './tools/update.js';
import { writeResourceTool } from './tools/write-resource.js';

export { ERROR_CODES } from '../errors.js';
export { itemUri } from './resources.js';
export { SEARCH_CONTENT_CAP } from './tools/search.js';
export { GET_CONTENT_DEFAULT, GET_CONTENT_MAX, getInputSchema } from './tools/get.js';
export { metadataInputSchema } from './tools/get-metadata.js';

/** What one backlog's instructions say of its vocabulary (statuses, id prefix, kinds of item). */
function vocabularyOf(service: BacklogService): string {
  const { name, config } = service.format;
  const words = service.vocabulary();
  const ids = words.example_ids.length ? words.example_ids.join(', ') : `${config.taskPrefix}-1`;
  return name === 'backlog-md'
    ? `This is the Backlog.md project "${words.project}": statuses ${config.statuses.map((s) => `"${s}"`).join(', ')}; ids like ${ids} (sub-tasks ${config.taskPrefix}-12.1; a bare number is a task number); types ${words.kinds.map((k) => k.type).join(', ')}. ${BACKLOG_MD_STATES}`
    : `Statuses ${config.statuses.join(', ')}; ids like ${ids}; types ${words.kinds.map((k) => k.type).join(', ')}.`;
}

const BACKLOG_MD_STATES = `A task's state is its folder: active (tasks/), draft, completed, archived. Lines mark a task that is not active ("[In Progress, archived]"): archived and completed work is not open work. backlog_list shows active tasks and documents unless given state ("all", "archived", ...); search covers every state and ranks archived items lower.`;

/** What every server's instructions end with: how to use the tools. */
const HOW = `Start with backlog_search (words; filters such as status, types, tags, parent_id), then pass result ids to backlog_get for the content, or to backlog_get_metadata for file facts and links. backlog_list browses with filters and no query.
Writes (backlog_create, backlog_update, backlog_delete, backlog_write_resource) are validated strictly and are searchable as soon as they return.
Errors come back as {status: "error", error: {code, message, hint}}; follow the hint.`;

/** How answers name projects, when several backlogs may be open. */
const PROJECTS = `When more than one is open, results and items carry project and ids come qualified as <project>:<id> (pass them on as returned); reads cover every project unless given project (a name, a list, or "*"), and a write needs project.`;

/** The server's instructions, with the backlogs' own vocabulary (statuses, id prefix, kinds of item). */
function instructions(ws: Workspace, roots: boolean): string {
  if (roots)
    return `Search and edit the backlogs of your roots: each root's backlog/ folder (or the root itself, if it is one) is a project, opened when the roots are listed and followed as they change; the tools' project option lists the open ones. ${PROJECTS}
${HOW}`;
  if (!ws.multi) {
    const service = ws.projects[0].service;
    return `Search and edit the backlog "${service.vocabulary().project}": markdown tasks and documents. ${vocabularyOf(service)}
${HOW}`;
  }
  // Compact: one clause per project (agents pay for every token of the instructions).
  const each = ws.projects.map((p) => {
    const { name, config } = p.service.format;
    const ids = p.service.vocabulary().example_ids[0] ?? `${config.taskPrefix}-1`;
    return `${p.name} (${name === 'backlog-md' ? 'Backlog.md; ' : ''}statuses ${config.statuses.join(', ')}; ids like ${p.name}:${ids})`;
  });
  const backlogMd = ws.projects.some((p) => p.service.format.name === 'backlog-md')
    ? ` In Backlog.md projects: ${BACKLOG_MD_STATES}`
    : '';
  return `Search and edit ${ws.projects.length} backlogs of markdown tasks and documents, one per project: ${each.join('; ')}. ${PROJECTS}${backlogMd}
${HOW}`;
}

/** Said first in the instructions, and last in every tool answer, when the server fell back to the demo backlog. */
export const DEMO_NOTICE =
  'NOTE: no backlog was found, so this server shows the built-in DEMO backlog, read-only: its items are examples, not your project. Start the server with --dir /path/to/your/backlog (or BACKLOG_DIR).';

const READ_TOOLS = {
  backlog_search: searchTool,
  backlog_get: getTool,
  backlog_get_metadata: getMetadataTool,
  backlog_list: listTool,
};

/** The instructions of a read-only server: no write tools to mention. */
function readOnlyInstructions(text: string): string {
  return text.replace(/\nWrites \([^\n]*\n/, '\nThis server is read-only: it has no write tools.\n');
}

const TOOLS = {
  ...READ_TOOLS,
  backlog_create: createTool,
  backlog_update: updateTool,
  backlog_delete: deleteTool,
  backlog_write_resource: writeResourceTool,
};

export interface McpServerOptions {
  /** Register only the read tools (search, get, get_metadata, list): the write tools are not listed. */
  readOnly?: boolean;
  /**
   * The server follows the client's MCP roots (roots.ts): the instructions say so to a client that
   * declares roots, every tool advertises `project`, and warnings may go out as log messages.
   */
  roots?: boolean;
  /** Warnings to end the next tool answer with (said once each), e.g. a root without a backlog. */
  warnings?: () => string[];
}

/**
 * A call of a tool this server does not have gets our structured error (a code and a hint) instead of
 * the SDK's plain-text "Tool x not found": FORBIDDEN for a write tool of a read-only server,
 * INVALID_INPUT otherwise. The SDK keeps its tools/call handler in a private map; if that changes,
 * the SDK's own answer stays (the stress bench's MCP fuzzing counts it as an error without a code).
 */
function answerUnknownTools(server: McpServer, names: string[], readOnly: boolean, notice?: string): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const original = handlers?.get('tools/call');
  if (!handlers || !original) return;
  const known = new Set(names);
  handlers.set('tools/call', (request, extra) => {
    const name = (request as { params?: { name?: unknown } }).params?.name;
    if (typeof name !== 'string' || known.has(name)) return original(request, extra);
    const write = Object.hasOwn(TOOLS, name);
    const result = errorResult(
      readOnly && write
        ? new BacklogError(
            'FORBIDDEN',
            `${name} is not available: this server is read-only`,
            'Use the read tools (backlog_search, backlog_get, backlog_get_metadata, backlog_list), or a server started without --read-only.',
            { tool: name },
          )
        : new BacklogError(
            'INVALID_INPUT',
            `no tool named "${name.slice(0, 100)}"`,
            `Tools: ${names.join(', ')}.`,
            { tool: name.slice(0, 100) },
          ),
    );
    if (notice) result.content.push({ type: 'text', text: notice });
    return Promise.resolve(result);
  });
}
type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/** The only backlog open is the built-in demo: read-only, and every answer says so. */
function demoOnly(ws: Workspace): boolean {
  return ws.projects.length === 1 && ws.projects[0].service.isDemo;
}

/** What `project` says in a tool's advertised schema: the open names (several backlogs, or roots). */
function projectsOption(ws: Workspace, write: boolean): ProjectsAdvertised {
  const names = ws.names().join(', ');
  return {
    description: write
      ? `where to write: ${names} (needed when more than one is open)`
      : `${names}; a list, or "*" for all (default: all)`,
  };
}

/**
 * An MCP server over one backlog (a BacklogService) or a workspace of several (docs/workspace.md): eight
 * tools (four when read-only), the backlogs as resources, list-changed notifications. With one backlog
 * every answer is the one the service gives; a workspace whose projects change (roots) changes the
 * listed tools' descriptions and says so (tools/list_changed, resources/list_changed).
 */
export function createMcpServer(
  target: BacklogService | Workspace,
  options: McpServerOptions = {},
): McpServer {
  const ws = target instanceof Workspace ? target : Workspace.of(target);
  const roots = options.roots === true;
  // The demo is served when no backlog was found: read-only, and every answer says so.
  const readOnly = options.readOnly === true || (!roots && demoOnly(ws));
  const noticeOf = (): string | undefined => {
    const lines = [
      ...(demoOnly(ws) ? [DEMO_NOTICE] : []),
      ...(options.warnings?.() ?? []).map((w) => `warning: ${w}`),
    ];
    return lines.length ? lines.join('\n') : undefined;
  };
  const text = instructionsOf(ws, readOnly, false);
  const server = new McpServer(
    { name: 'backlog-search', title: 'Backlog search', version: VERSION },
    { instructions: text, ...(roots ? { capabilities: { logging: {} } } : {}) },
  );
  const tools = readOnly ? READ_TOOLS : TOOLS;
  const notice = roots ? noticeOf : noticeOf();
  for (const [name, tool] of Object.entries(tools)) registerTool(server, name, tool(ws), notice);
  // Built when listed, again after the projects change (their names and examples are in the descriptions).
  let definitions: Tool[] | undefined;
  server.server.setRequestHandler(ListToolsRequestSchema, () => {
    // `project` is listed where it can choose: several backlogs open, or a client's roots followed.
    const following = roots && Boolean(server.server.getClientCapabilities()?.roots);
    const choose = ws.multi || following;
    // The demo without roots to come: its read tools only, as a server started without --dir always had.
    const demo = roots && !following && demoOnly(ws);
    definitions ??= Object.entries(tools)
      .filter(([name]) => !(demo && !Object.hasOwn(READ_TOOLS, name)))
      .map(([name, tool]) =>
        toolDefinition(
          name,
          tool(ws),
          choose ? projectsOption(ws, !Object.hasOwn(READ_TOOLS, name)) : undefined,
        ),
      );
    return { tools: definitions };
  });
  answerUnknownTools(server, Object.keys(tools), readOnly, typeof notice === 'string' ? notice : undefined);
  registerResources(server, ws);
  if (roots) describeAtInitialize(server, ws, options.readOnly === true);

  // Coalesce bursts of changes (a bulk create, a git checkout) into one notification.
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (server.isConnected()) server.sendResourceListChanged();
    }, 50);
    timer.unref();
  };
  const watching = new Map<WorkspaceProject, () => void>();
  const follow = () => {
    for (const [p, stop] of watching)
      if (!ws.projects.includes(p)) {
        stop();
        watching.delete(p);
      }
    for (const p of ws.projects) if (!watching.has(p)) watching.set(p, p.service.onChange(changed));
  };
  follow();
  const unfollow = ws.onProjectsChange(() => {
    follow();
    definitions = undefined;
    changed();
    if (server.isConnected()) server.sendToolListChanged();
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    previous?.();
    unfollow();
    for (const stop of watching.values()) stop();
    if (timer) clearTimeout(timer);
  };
  return server;
}

/** The instructions for the backlogs open now (the demo's start with its notice). */
function instructionsOf(ws: Workspace, readOnly: boolean, roots: boolean): string {
  const text = readOnly ? readOnlyInstructions(instructions(ws, roots)) : instructions(ws, roots);
  return !roots && demoOnly(ws) ? `${DEMO_NOTICE}\n${text}` : text;
}

/**
 * A server that follows roots learns at `initialize` whether the client has any: if it declares the
 * roots capability the instructions describe the roots' projects (opened after `initialized`), else the
 * backlog open now (the working directory's, or the demo), as a server started with --dir would. The
 * SDK keeps its handlers in a private map (as answerUnknownTools uses); if that changes, the
 * instructions given at creation stay.
 */
function describeAtInitialize(server: McpServer, ws: Workspace, readOnly: boolean): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const original = handlers?.get('initialize');
  if (!handlers || !original) return;
  handlers.set('initialize', async (request, extra) => {
    const result = (await original(request, extra)) as Record<string, unknown>;
    const declared = Boolean(
      (request as { params?: { capabilities?: { roots?: unknown } } }).params?.capabilities?.roots,
    );
    return { ...result, instructions: instructionsOf(ws, readOnly || (!declared && demoOnly(ws)), declared) };
  });
}
