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
import { errorResult, registerTool, toolDefinition } from './tool.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
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

/** The server's instructions, with this backlog's own vocabulary (statuses, id prefix, kinds of item). */
function instructions(service: BacklogService): string {
  const { name, config } = service.format;
  const words = service.vocabulary();
  const ids = words.example_ids.length ? words.example_ids.join(', ') : `${config.taskPrefix}-1`;
  const vocabulary =
    name === 'backlog-md'
      ? `This is the Backlog.md project "${words.project}": statuses ${config.statuses.map((s) => `"${s}"`).join(', ')}; ids like ${ids} (sub-tasks ${config.taskPrefix}-12.1; a bare number is a task number); types ${words.kinds.map((k) => k.type).join(', ')}. A task's state is its folder: active (tasks/), draft, completed, archived. Lines mark a task that is not active ("[In Progress, archived]"): archived and completed work is not open work. backlog_list shows active tasks and documents unless given state ("all", "archived", ...); search covers every state and ranks archived items lower.`
      : `Statuses ${config.statuses.join(', ')}; ids like ${ids}; types ${words.kinds.map((k) => k.type).join(', ')}.`;
  return `Search and edit the backlog "${words.project}": markdown tasks and documents. ${vocabulary}
Start with backlog_search (words; filters such as status, types, tags, parent_id), then pass result ids to backlog_get for the content, or to backlog_get_metadata for file facts and links. backlog_list browses with filters and no query.
Writes (backlog_create, backlog_update, backlog_delete, backlog_write_resource) are validated strictly and are searchable as soon as they return.
Errors come back as {status: "error", error: {code, message, hint}}; follow the hint.`;
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

/** An MCP server over `service`: eight tools (four when read-only), the backlog as resources, list-changed notifications. */
export function createMcpServer(service: BacklogService, options: McpServerOptions = {}): McpServer {
  // The demo is served when no backlog was found: read-only, and every answer says so.
  const readOnly = options.readOnly === true || service.isDemo;
  const notice = service.isDemo ? DEMO_NOTICE : undefined;
  const text = readOnly ? readOnlyInstructions(instructions(service)) : instructions(service);
  const server = new McpServer(
    { name: 'backlog-search', title: 'Backlog search', version: VERSION },
    { instructions: notice ? `${notice}\n${text}` : text },
  );
  const tools = readOnly ? READ_TOOLS : TOOLS;
  const specs = Object.entries(tools).map(([name, tool]) => [name, tool(service)] as const);
  for (const [name, spec] of specs) registerTool(server, name, spec, notice);
  const definitions = specs.map(([name, spec]) => toolDefinition(name, spec));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions }));
  answerUnknownTools(server, Object.keys(tools), readOnly, notice);
  registerResources(server, service);

  // Coalesce bursts of changes (a bulk create, a git checkout) into one notification.
  let timer: NodeJS.Timeout | undefined;
  const unsubscribe = service.onChange(() => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (server.isConnected()) server.sendResourceListChanged();
    }, 50);
    timer.unref();
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    previous?.();
    unsubscribe();
    if (timer) clearTimeout(timer);
  };
  return server;
}
