/**
 * The backlog as MCP resources: every task, epic and document at `mcp://backlog/<path>` (ids work too,
 * `mcp://backlog/TASK-0001`), read through the same path checks as every other read. `resources/list`
 * is paginated (RESOURCES_PAGE per page, `nextCursor` for the next), ordered by path. With several
 * backlogs open, a URI names its project first: `mcp://backlog/<project>/<path>` (docs/workspace.md).
 */
import { ErrorCode, ListResourcesRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RESOURCE_URI_PREFIX, fileType, resourceUri } from '../storage/parse.js';
import { readInsideRoot } from '../storage/root-path.js';
import type { BacklogItem } from '../storage/types.js';
import { isBacklogError } from '../errors.js';
import type { Workspace, WorkspaceProject } from '../workspace/workspace.js';
import { kindOf } from './format.js';

/** Resources per `resources/list` page. */
export const RESOURCES_PAGE = 100;

const MIME: Record<string, string> = {
  md: 'text/markdown',
  mdx: 'text/markdown',
  markdown: 'text/markdown',
  json: 'application/json',
  jsonc: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  html: 'text/html',
  htm: 'text/html',
  xml: 'application/xml',
  sh: 'application/x-sh',
  sql: 'application/sql',
};

function mimeOf(path: string): string {
  return MIME[fileType(path)] ?? 'text/plain';
}

/** `mcp://backlog/<path>`, spelled as every surface spells it (resourceUri). */
export const itemUri = resourceUri;

/** One entry of resources/list: the id as name (a document's file name), title, and the kind. */
function listEntry(ws: Workspace, p: WorkspaceProject, item: BacklogItem) {
  return {
    uri: ws.idOf(p, resourceUri(item.path)),
    name: item.id.startsWith('mcp://')
      ? item.path.slice(item.path.lastIndexOf('/') + 1)
      : ws.idOf(p, item.id),
    title: item.title,
    description: kindOf(item),
    mimeType: mimeOf(item.path),
  };
}

/** The page a cursor points at: the cursor is the offset, as text (opaque to clients). */
function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const n = /^\d{1,9}$/.test(cursor) ? Number(cursor) : NaN;
  if (!Number.isSafeInteger(n))
    throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${JSON.stringify(cursor.slice(0, 50))}`);
  return n;
}

export function registerResources(server: McpServer, ws: Workspace): void {
  server.registerResource(
    'backlog-item',
    new ResourceTemplate('mcp://backlog/{+path}', { list: undefined }),
    {
      title: 'Backlog items',
      description: 'Tasks and documents as files: mcp://backlog/<path>; mcp://backlog/<id> works too.',
    },
    async (uri, variables) => {
      const raw = Array.isArray(variables.path) ? variables.path.join('/') : String(variables.path ?? '');
      const found = locate(ws, raw);
      if (!found) throw new McpError(-32002, `Resource not found: ${uri.href}`, { uri: uri.href });
      const { service } = found.p;
      const item = service.get(found.id);
      // The file as it is now, through the same checks as every read (a file swapped for a link is refused).
      const text = await readInsideRoot(service.dir, item.path).then(
        (r) => r.bytes.toString('utf8'),
        (err: Error) => {
          throw new McpError(-32002, `Resource not readable: ${uri.href} (${err.message})`, {
            uri: uri.href,
          });
        },
      );
      return { contents: [{ uri: uri.href, mimeType: mimeOf(item.path), text }] };
    },
  );
  // The SDK's own resources/list has no pagination: this one replaces it (the template lists nothing itself).
  server.server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const offset = offsetOf(request.params?.cursor);
    // By project (in the order they were opened), then by path.
    const items = ws.projects.flatMap((p) =>
      p.service
        .ids()
        .map((id) => p.service.get(id))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
        .map((item) => [p, item] as const),
    );
    const page = items.slice(offset, offset + RESOURCES_PAGE).map(([p, item]) => listEntry(ws, p, item));
    const next = offset + RESOURCES_PAGE;
    return { resources: page, ...(next < items.length ? { nextCursor: String(next) } : {}) };
  });
}

/** The project and id a resource path names: `<path>` or `<id>`, or `<project>/<path>` with several open. */
function locate(ws: Workspace, raw: string): { p: WorkspaceProject; id: string } | undefined {
  if (!ws.multi) {
    const p = ws.projects[0];
    const id = p?.service.resolve(raw);
    return id === undefined ? undefined : { p, id };
  }
  try {
    return ws.locate(RESOURCE_URI_PREFIX + raw);
  } catch (err) {
    if (isBacklogError(err)) return undefined;
    throw err;
  }
}
