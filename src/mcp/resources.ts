/**
 * The backlog as MCP resources: every task, epic and document at `mcp://backlog/<path>` (ids work too,
 * `mcp://backlog/TASK-0001`), read through the same path checks as every other read.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BacklogService } from '../service/backlog-service.js';
import { fileType } from '../storage/parse.js';
import { readInsideRoot } from '../storage/root-path.js';
import { kindOf } from './format.js';

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

/** `mcp://backlog/<path>` with each segment percent-encoded (spaces in Backlog.md file names). */
export function itemUri(path: string): string {
  return `mcp://backlog/${path.split('/').map(encodeURIComponent).join('/')}`;
}

export function registerResources(server: McpServer, service: BacklogService): void {
  const template = new ResourceTemplate('mcp://backlog/{+path}', {
    list: () => ({
      resources: service
        .ids()
        .map((id) => service.get(id))
        .sort((a, b) => a.path.localeCompare(b.path))
        .map((item) => ({
          uri: itemUri(item.path),
          name: item.type === 'resource' ? item.path : item.id,
          title: item.title,
          mimeType: mimeOf(item.path),
          description: `${kindOf(item)}${item.type === 'resource' ? '' : ` ${item.path}`}`,
        })),
    }),
  });
  server.registerResource(
    'backlog-item',
    template,
    {
      title: 'Backlog items',
      description:
        'Tasks, epics and documents of the backlog, as files: mcp://backlog/<path relative to the root>; mcp://backlog/TASK-0001 works too.',
    },
    async (uri, variables) => {
      const raw = Array.isArray(variables.path) ? variables.path.join('/') : String(variables.path ?? '');
      let ref = raw;
      try {
        ref = decodeURIComponent(raw);
      } catch {
        // keep it as written
      }
      const id = service.resolve(ref);
      if (!id) throw new McpError(-32002, `Resource not found: ${uri.href}`, { uri: uri.href });
      const item = service.get(id);
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
}
