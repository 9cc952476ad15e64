/**
 * The MCP server: eight tools, each a schema plus a handler that delegates to BacklogService (one module
 * per tool in ./tools), the backlog as resources (./resources.ts), and list-changed notifications. Every
 * tool returns `structuredContent` (`{status: "ok", ...}` or `{status: "error", error: {code, message,
 * hint}}` with `isError: true`) plus one compact text block.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BacklogService } from '../service/backlog-service.js';
import { DEMO_NOTICE, SERVER_INFO, demoOnly, instructionsOf } from './instructions.js';
import { registerResources } from './resources.js';
import { errorResult, registerTool, toolDefinition, type ProjectsAdvertised } from './tool.js';
import { Workspace, type WorkspaceProject } from '../workspace/workspace.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
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
export { DEMO_NOTICE } from './instructions.js';
export { itemUri } from './resources.js';
export { SEARCH_CONTENT_CAP } from './tools/search.js';
export { GET_CONTENT_DEFAULT, GET_CONTENT_MAX, getInputSchema } from './tools/get.js';
export { metadataInputSchema } from './tools/get-metadata.js';

const READ_TOOLS = {
  backlog_search: searchTool,
  backlog_get: getTool,
  backlog_get_metadata: getMetadataTool,
  backlog_list: listTool,
};

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
  /** The instructions, when they were already given (mcp/early.ts answered `initialize`). */
  instructions?: string;
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

/**
 * The SDK validates elicitation answers with a JSON Schema validator, by default an Ajv instance with
 * its formats, made with every server (22 ms of the main thread in a profile of a start on a busy machine; the bundle leaves ajv out:
 * scripts/bundle-cli.mjs). This server never elicits.
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => {
    throw new Error('backlog-search does not elicit: no JSON Schema validator');
  },
};

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
  const text = options.instructions ?? instructionsOf(ws, readOnly, false);
  const server = new McpServer(SERVER_INFO, {
    instructions: text,
    ...(roots ? { capabilities: { logging: {} } } : {}),
    jsonSchemaValidator: NO_ELICITATION,
  });
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
