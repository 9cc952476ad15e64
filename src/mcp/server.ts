/**
 * The MCP server: thin tools over BacklogService. Every tool returns `structuredContent`
 * (`{status: "ok", ...}` or `{status: "error", error: {code, message, hint}}` with `isError: true`)
 * plus one compact text block.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, type CallToolResult, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BacklogError, ERROR_CODES, errors, isBacklogError } from '../errors.js';
import type { BacklogService, ItemSummary, SearchResult, WriteResult } from '../service/backlog-service.js';
import {
  OPTION_ALIASES,
  listOptionsSchema,
  oneOrMany,
  searchOptionsSchema,
  toBacklogError,
} from '../service/options.js';
import {
  createInputSchema,
  deleteInputSchema,
  updateInputSchema,
  writeResourceInputSchema,
} from '../service/writes.js';
import { fileType, resourceUri } from '../storage/parse.js';
import { readInsideRoot } from '../storage/root-path.js';
import type { BacklogItem } from '../storage/types.js';
import { VERSION } from '../version.js';

/** Content of one search result over this many characters is cut (`truncated: true`, `content_length`). */
export const SEARCH_CONTENT_CAP = 4000;
/** Default and maximum characters of content per item returned by backlog_get. */
export const GET_CONTENT_DEFAULT = 20_000;
export const GET_CONTENT_MAX = 200_000;

export { ERROR_CODES };

const INSTRUCTIONS = `Search and edit a backlog of markdown tasks, epics and documents.
Start with backlog_search (words; filters such as status, types, tags, parent_id), then pass result ids to backlog_get for the content, or to backlog_get_metadata for file facts and links. backlog_list browses with filters and no query.
Writes (backlog_create, backlog_update, backlog_delete, backlog_write_resource) are validated strictly and are searchable as soon as they return.
Errors come back as {status: "error", error: {code, message, hint}}; follow the hint.`;

// ---------------------------------------------------------------------------------------------
// Tool schemas. Input is validated by our own strict zod schemas, so that an unknown argument is an
// error with a hint (the SDK would strip it silently) and every failure has our error shape. The SDK
// gets a schema that accepts any object but advertises the strict one as JSON Schema.

export const getInputSchema = z
  .object({
    ids: oneOrMany(z.string()).describe(
      'one id or a list: TASK-0001, EPIC-0002, mcp://backlog/resources/adr/0001-x.md, or a path relative to the backlog root',
    ),
    max_chars: z.coerce
      .number()
      .int()
      .min(1)
      .max(GET_CONTENT_MAX)
      .default(GET_CONTENT_DEFAULT)
      .describe(
        `characters of content per item (default ${GET_CONTENT_DEFAULT}); longer content is cut with truncated: true`,
      ),
    content_offset: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('start of the content window (use next_content_offset to read on)'),
  })
  .strict();

export const metadataInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('id, resource URI or path, e.g. TASK-0001'),
  })
  .strict();

function advertised(strict: z.ZodObject): z.ZodType<Record<string, unknown>> {
  const json = z.toJSONSchema(strict, { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return z.object({}).catchall(z.unknown()).meta(json);
}

const errorShape = z
  .object({ code: z.enum(ERROR_CODES), message: z.string(), hint: z.string() })
  .loose()
  .describe('present when status is "error"');

/** Output schemas: the ok shape with its fields optional, since an error result carries only status and error. */
function output<S extends z.ZodRawShape>(shape: S) {
  return z.object({ status: z.enum(['ok', 'error']), error: errorShape.optional(), ...shape }).loose();
}

const nullableString = z.string().nullable();
const summaryShape = z
  .object({
    id: z.string(),
    type: z.string(),
    title: z.string(),
    status: nullableString,
    parent_id: nullableString,
    path: z.string(),
    tags: z.array(z.string()),
    updated_at: nullableString,
  })
  .loose();
const searchResultShape = z
  .object({
    id: z.string().describe('pass to backlog_get'),
    type: z.string(),
    title: z.string(),
    status: nullableString,
    parent_id: nullableString,
    path: z.string(),
    snippet: z.object({ field: z.string(), text: z.string(), matched_fields: z.array(z.string()) }).loose(),
    matched_fields: z.array(z.string()),
    score: z.number().optional(),
    content: z.string().optional(),
    content_length: z.number().int().optional(),
    truncated: z.boolean().optional(),
  })
  .loose();
const itemShape = z
  .object({
    id: z.string(),
    type: z.string(),
    title: z.string(),
    status: nullableString,
    parent_id: nullableString,
    path: z.string(),
    uri: z.string(),
    tags: z.array(z.string()),
    author: nullableString,
    assignee: nullableString,
    priority: nullableString,
    references: z.array(z.string()),
    created_at: nullableString,
    updated_at: nullableString,
    content: z.string(),
    content_length: z.number().int(),
    truncated: z.boolean(),
    next_content_offset: z.number().int().optional(),
  })
  .loose();
const writeShape = {
  action: z.enum(['created', 'updated', 'deleted', 'overwritten', 'appended', 'replaced']).optional(),
  id: z.string().optional(),
  path: z.string().optional(),
  uri: z.string().optional(),
  item: summaryShape.nullable().optional(),
  replacements: z.number().int().optional(),
  orphaned: z.array(z.string()).optional(),
};

const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

interface ToolSpec {
  title: string;
  description: string;
  strict: z.ZodObject;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** Names agents guess for this tool's options, beyond OPTION_ALIASES. */
  aliases?: Record<string, string>;
  /** `null` means "not given" (read tools); in writes null clears a field, so it is kept. */
  nullIsUnset?: boolean;
  run: (args: Record<string, unknown>) => Promise<ToolOutput> | ToolOutput;
}

interface ToolOutput {
  structured: Record<string, unknown>;
  text: string;
}

// ---------------------------------------------------------------------------------------------
// Arguments

/** Renames accepted aliases (q -> query, top_k -> limit, id -> ids, ...); anything else unknown is left for the strict schema to reject. */
export function normalizeArgs(
  raw: unknown,
  known: readonly string[],
  aliases: Record<string, string> = {},
  nullIsUnset = false,
): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new BacklogError(
      'INVALID_FILTER',
      'arguments must be an object',
      'Pass the options as a JSON object, e.g. {"query": "login"}.',
    );
  // A Map, then own properties: a key named `__proto__` stays an (unknown) option, never a prototype.
  const out = new Map<string, unknown>();
  const entries = Object.entries(raw as Record<string, unknown>).filter(
    ([, v]) => !(nullIsUnset && v === null),
  );
  for (const [key, value] of entries) if (known.includes(key)) out.set(key, value);
  for (const [key, value] of entries) {
    if (known.includes(key)) continue;
    const target = Object.hasOwn(aliases, key)
      ? aliases[key]
      : Object.hasOwn(OPTION_ALIASES, key)
        ? OPTION_ALIASES[key]
        : undefined;
    if (target === undefined || !known.includes(target)) {
      out.set(key, value);
      continue;
    }
    if (out.has(target))
      throw new BacklogError(
        'INVALID_FILTER',
        `"${key}" and "${target}" were both given`,
        `"${key}" is another name for "${target}"; pass only "${target}".`,
        { field: key },
      );
    out.set(target, value);
  }
  return Object.fromEntries(out);
}

function parseStrict<S extends z.ZodObject>(schema: S, args: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw toBacklogError(parsed.error, Object.keys(schema.shape));
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// Results

function errorResult(err: unknown): CallToolResult {
  const e = isBacklogError(err)
    ? err
    : new BacklogError(
        'INTERNAL',
        err instanceof Error ? err.message : String(err),
        'Unexpected failure; retry once, then report it with the call you made.',
      );
  if (e.code === 'INTERNAL')
    process.stderr.write(
      `backlog-search mcp: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  return {
    isError: true,
    content: [{ type: 'text', text: `error ${e.code}: ${e.message}\nhint: ${e.hint}` }],
    structuredContent: { status: 'error', error: e.toJSON() },
  };
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function kindOf(x: { type: string; status: string | null }): string {
  return x.status ? `${x.type}/${x.status}` : x.type;
}

/** Cuts `text` to at most `max` characters without splitting a surrogate pair. */
function cut(text: string, start: number, max: number): string {
  let end = Math.min(text.length, start + max);
  if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return text.slice(start, end);
}

/** A result with its content cut at SEARCH_CONTENT_CAP (read from the item, so a long body is never copied whole). */
function withContent(
  service: BacklogService,
  r: SearchResult,
): SearchResult & { truncated?: boolean; content_length?: number } {
  const body = service.get(r.id).body;
  const content = cut(body, 0, SEARCH_CONTENT_CAP);
  return { ...r, content, content_length: body.length, truncated: content.length < body.length };
}

function itemView(item: BacklogItem, maxChars: number, offset: number): z.infer<typeof itemShape> {
  const content = cut(item.body, Math.min(offset, item.body.length), maxChars);
  const end = Math.min(offset, item.body.length) + content.length;
  const view: z.infer<typeof itemShape> = {
    id: item.id,
    type: item.type,
    title: item.title,
    status: item.status,
    parent_id: item.parent_id,
    path: item.path,
    uri: resourceUri(item.path),
    tags: item.tags,
    author: item.author,
    assignee: item.assignee,
    priority: item.priority,
    references: item.references,
    created_at: item.created_at,
    updated_at: item.updated_at,
    content,
    content_length: item.body.length,
    truncated: end < item.body.length,
  };
  if (end < item.body.length) view.next_content_offset = end;
  return view;
}

function itemText(view: z.infer<typeof itemShape>): string {
  const facts = [
    view.parent_id && `parent: ${view.parent_id}`,
    view.tags.length && `tags: ${view.tags.join(', ')}`,
    view.assignee && `assignee: ${view.assignee}`,
    view.priority && `priority: ${view.priority}`,
    view.updated_at && `updated: ${view.updated_at}`,
  ].filter(Boolean);
  const lines = [`${view.id} [${kindOf(view)}] ${view.title} (${view.path})`];
  if (facts.length) lines.push(facts.join(' | '));
  lines.push('', view.content.trim());
  if (view.truncated)
    lines.push(
      `[cut: ${view.content.length} of ${view.content_length} characters; pass content_offset ${view.next_content_offset} for more]`,
    );
  return lines.join('\n');
}

function summaryLine(s: ItemSummary): string {
  return `${s.id} [${kindOf(s)}] ${s.title}`;
}

function writeOutput(result: WriteResult): ToolOutput {
  const extra = [
    result.replacements !== undefined &&
      `${result.replacements} replacement${result.replacements === 1 ? '' : 's'}`,
    result.orphaned?.length && `children left without parent: ${result.orphaned.join(', ')}`,
  ].filter(Boolean);
  const title = result.item ? ` "${result.item.title}"` : '';
  return {
    structured: { ...result },
    text: `${result.action} ${result.id}${title} (${result.path})${extra.length ? `; ${extra.join('; ')}` : ''}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Tools

function tools(service: BacklogService): Record<string, ToolSpec> {
  const writeAliases = {
    description: 'body',
    content: 'body',
    labels: 'tags',
    parent: 'parent_id',
    tag: 'tags',
  };
  return {
    backlog_search: {
      title: 'Search the backlog',
      description:
        'Full-text search over tasks, epics and resource documents, ranked by relevance (or sort: "recent"). Filters (status, types, tags, parent_id, author, path, folder, file_type) take a value or a list; lists OR, filters AND. Returns up to `limit` (default 20) results with a snippet each; pass result ids to backlog_get for the content. Use next_offset to page. include_content adds each content (cut at ' +
        `${SEARCH_CONTENT_CAP} characters). Example: {"query": "login rate limit", "status": ["open", "in_progress"], "limit": 5}`,
      strict: searchOptionsSchema,
      output: output({
        results: z.array(searchResultShape).optional(),
        total: z.number().int().optional(),
        query: z.string().optional(),
        search_mode: z.string().optional(),
        next_offset: z.number().int().optional(),
        took_ms: z.number().optional(),
        warnings: z.array(z.string()).optional(),
      }),
      annotations: READ_ONLY,
      nullIsUnset: true,
      run: async (args) => {
        const { query, include_content, ...options } = args;
        const res = await service.searchUnified(query as string, {
          ...(options as Parameters<BacklogService['searchUnified']>[1]),
          // The content is added below, cut per result; a value that is not a boolean is left for the schema to refuse.
          include_content: typeof include_content === 'boolean' ? false : (include_content as boolean),
        });
        const results =
          include_content === true ? res.results.map((r) => withContent(service, r)) : res.results;
        const start = Number(args.offset ?? 0); // valid: searchUnified accepted it
        const from = results.length ? ` (${start + 1}-${start + results.length})` : '';
        const lines = [
          `${res.total} result${res.total === 1 ? '' : 's'} for "${res.query}"${from}, ${res.search_mode}${res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : ''}`,
        ];
        for (const w of res.warnings ?? []) lines.push(`warning: ${w}`);
        for (const r of results)
          lines.push(
            `${r.id} [${kindOf(r)}] ${r.title}${r.snippet.text ? ` — ${oneLine(r.snippet.text)}` : ''}`,
          );
        return { structured: { ...res, results }, text: lines.join('\n') };
      },
    },

    backlog_get: {
      title: 'Get backlog items',
      description:
        'Content and fields of one item or a list: task/epic ids (TASK-0001), resource URIs (mcp://backlog/resources/...) or paths, as returned by backlog_search. In a list, an unknown id gets its own NOT_FOUND entry and the others are returned; a single unknown id is a NOT_FOUND error. ' +
        `Content over max_chars (default ${GET_CONTENT_DEFAULT}) is cut with truncated: true; read on with content_offset. Example: {"ids": ["TASK-0001", "EPIC-0001"]}`,
      strict: getInputSchema,
      output: output({
        items: z
          .array(
            z.union([
              z.object({ id: z.string(), status: z.literal('ok'), item: itemShape }),
              z.object({ id: z.string(), status: z.literal('error'), error: errorShape }),
            ]),
          )
          .optional(),
        found: z.number().int().optional(),
        missing: z.number().int().optional(),
      }),
      annotations: READ_ONLY,
      aliases: { id: 'ids', items: 'ids', paths: 'ids', path: 'ids', uri: 'ids', uris: 'ids' },
      nullIsUnset: true,
      run: (args) => {
        const input = parseStrict(getInputSchema, args);
        if (input.ids.length === 0)
          throw new BacklogError(
            'INVALID_FILTER',
            'ids is empty',
            'Pass at least one id, e.g. {"ids": "TASK-0001"}.',
            { field: 'ids' },
          );
        if (input.ids.length === 1) service.get(input.ids[0]); // a single unknown id is an error, not an entry
        const found = service.get(input.ids);
        const chars = found.reduce(
          (n, e) =>
            n +
            (e.status === 'ok'
              ? Math.min(input.max_chars, Math.max(0, e.item.body.length - input.content_offset))
              : 0),
          0,
        );
        if (chars > service.limits.maxResponseChars)
          throw errors.inputTooLarge(
            'ids',
            `the content asked for is ${chars} characters, over the budget of ${service.limits.maxResponseChars} (limits.maxResponseChars)`,
            'Ask for fewer ids, or a smaller max_chars, and read on with content_offset.',
            { limit: service.limits.maxResponseChars },
          );
        const entries = found.map((e) =>
          e.status === 'ok'
            ? {
                id: e.id,
                status: 'ok' as const,
                item: itemView(e.item, input.max_chars, input.content_offset),
              }
            : e,
        );
        const ok = entries.filter((e) => e.status === 'ok').length;
        const text = entries
          .map((e) =>
            e.status === 'ok' ? itemText(e.item) : `${e.id}: error ${e.error.code}: ${e.error.message}`,
          )
          .join('\n\n---\n\n');
        return { structured: { items: entries, found: ok, missing: entries.length - ok }, text };
      },
    },

    backlog_get_metadata: {
      title: 'Get item metadata',
      description:
        'File facts and links of one item, without its content: path, file name and type, size, modified and indexed times, the whole frontmatter, parent, children and references. Missing values are null, never absent. Example: {"id": "TASK-0001"}',
      strict: metadataInputSchema,
      output: output({
        metadata: z
          .object({
            id: z.string(),
            type: z.string(),
            title: z.string(),
            status: nullableString,
            parent_id: nullableString,
            tags: z.array(z.string()),
            author: nullableString,
            assignee: nullableString,
            priority: nullableString,
            created_at: nullableString,
            updated_at: nullableString,
            path: z.string(),
            uri: z.string(),
            file_name: z.string(),
            file_type: z.string(),
            size: z.number(),
            modified_at: nullableString,
            indexed_at: nullableString,
            frontmatter: z.record(z.string(), z.unknown()),
            links: z.object({
              parent: nullableString,
              children: z.array(z.string()),
              references: z.array(z.string()),
            }),
          })
          .loose()
          .optional(),
      }),
      annotations: READ_ONLY,
      aliases: { ids: 'id', path: 'id', uri: 'id' },
      nullIsUnset: true,
      run: (args) => {
        const { id } = parseStrict(metadataInputSchema, args);
        const md = service.getMetadata(id);
        const item = service.get(md.id);
        const metadata = {
          id: md.id,
          type: md.type,
          title: md.title,
          status: item.status,
          parent_id: item.parent_id,
          tags: item.tags,
          author: item.author,
          assignee: item.assignee,
          priority: item.priority,
          created_at: item.created_at,
          updated_at: item.updated_at,
          path: md.path,
          uri: resourceUri(md.path),
          file_name: md.file_name,
          file_type: md.file_type,
          size: md.size,
          modified_at: md.modified_at,
          indexed_at: md.indexed_at,
          frontmatter: md.frontmatter,
          links: md.links,
        };
        const links = [
          md.links.parent && `parent ${md.links.parent}`,
          `${md.links.children.length} children`,
          `${md.links.references.length} references`,
        ]
          .filter(Boolean)
          .join(', ');
        return {
          structured: { metadata },
          text: `${md.id} [${kindOf({ type: md.type, status: item.status })}] ${md.path}, ${md.size} bytes, modified ${md.modified_at ?? 'unknown'}, indexed ${md.indexed_at ?? 'never'}; ${links}`,
        };
      },
    },

    backlog_list: {
      title: 'List backlog items',
      description:
        'Items matching filters, without a query: most recently updated first (or sort: "id"), with counts by status over all matches. Same filters as backlog_search; limit 1-1000 (default 100). Example: {"types": "task", "status": "blocked"}',
      strict: listOptionsSchema,
      output: output({
        results: z.array(summaryShape).optional(),
        total: z.number().int().optional(),
        counts_by_status: z.record(z.string(), z.number()).optional(),
        next_offset: z.number().int().optional(),
      }),
      annotations: READ_ONLY,
      nullIsUnset: true,
      run: (args) => {
        const res = service.list(args as Parameters<BacklogService['list']>[0]);
        const counts = Object.entries(res.counts_by_status)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ');
        const lines = [
          `${res.total} item${res.total === 1 ? '' : 's'}${counts ? ` (${counts})` : ''}${res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : ''}`,
          ...res.results.map(summaryLine),
        ];
        return { structured: { ...res }, text: lines.join('\n') };
      },
    },

    backlog_create: {
      title: 'Create a task or epic',
      description:
        'Creates a task (or epic) file tasks/<ID>-<slug>.md with the next free id (TASK-0001, EPIC-0001) and returns the id; it is searchable when this returns. status defaults to open; parent_id must be an existing task or epic. Values are validated strictly (INVALID_FILTER names the field). Example: {"title": "Add rate-limit to password reset", "parent_id": "EPIC-0001", "tags": ["auth"], "body": "## Context\\n..."}',
      strict: createInputSchema,
      output: output(writeShape),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      aliases: writeAliases,
      run: async (args) => writeOutput(await service.create(args as Parameters<BacklogService['create']>[0])),
    },

    backlog_update: {
      title: 'Update a task or epic',
      description:
        'Patches a task or epic: only the fields given change (null clears one), updated_at is set. Body edits: body replaces it, append adds to it, old_string + new_string edits one passage (CONFLICT if absent or ambiguous). expected_updated_at guards against lost updates. Example: {"id": "TASK-0001", "status": "done", "append": "Shipped in 2.4."}',
      strict: updateInputSchema,
      output: output(writeShape),
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      aliases: { ...writeAliases, ids: 'id' },
      run: async (args) => writeOutput(await service.update(args as Parameters<BacklogService['update']>[0])),
    },

    backlog_delete: {
      title: 'Delete an item',
      description:
        'Deletes the file of a task, epic or resource (by id, resource URI or path); it leaves the index when this returns. A task or epic with children is refused with CONFLICT unless force: true. Example: {"id": "TASK-0042"}',
      strict: deleteInputSchema,
      output: output(writeShape),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      aliases: { ids: 'id', path: 'id', uri: 'id' },
      run: async (args) => writeOutput(await service.delete(args as Parameters<BacklogService['delete']>[0])),
    },

    backlog_write_resource: {
      title: 'Write a resource document',
      description:
        'Writes a document (not a task) under the backlog root: mode create (default; CONFLICT if it exists), overwrite, append, or replace (old_string -> new_string, CONFLICT if absent or ambiguous; the default when old_string is given). The path stays inside the root: no "..", absolute paths or hidden folders. Example: {"path": "resources/notes/2026-05-retro.md", "content": "# Retro\\n..."}',
      strict: writeResourceInputSchema,
      output: output(writeShape),
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
      aliases: { text: 'content', body: 'content', file: 'path', uri: 'path', id: 'path' },
      run: async (args) =>
        writeOutput(await service.writeResource(args as Parameters<BacklogService['writeResource']>[0])),
    },
  };
}

// Built once: the JSON Schema conversion is not free, and HTTP sessions each get their own server.
let advertisedInputs: Map<z.ZodObject, z.ZodType<Record<string, unknown>>> | undefined;
function advertisedInput(strict: z.ZodObject): z.ZodType<Record<string, unknown>> {
  advertisedInputs ??= new Map();
  let schema = advertisedInputs.get(strict);
  if (!schema) advertisedInputs.set(strict, (schema = advertised(strict)));
  return schema;
}

// ---------------------------------------------------------------------------------------------
// Resources

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

function registerResources(server: McpServer, service: BacklogService): void {
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

// ---------------------------------------------------------------------------------------------

/** An MCP server over `service`: eight tools, the backlog as resources, list-changed notifications. */
export function createMcpServer(service: BacklogService): McpServer {
  const server = new McpServer(
    { name: 'backlog-search', title: 'Backlog search', version: VERSION },
    { instructions: INSTRUCTIONS },
  );

  for (const [name, spec] of Object.entries(tools(service))) {
    const known = Object.keys(spec.strict.shape);
    server.registerTool(
      name,
      {
        title: spec.title,
        description: spec.description,
        inputSchema: advertisedInput(spec.strict),
        outputSchema: spec.output,
        annotations: { title: spec.title, ...spec.annotations },
      },
      async (raw: Record<string, unknown>): Promise<CallToolResult> => {
        try {
          const args = normalizeArgs(raw, known, spec.aliases, spec.nullIsUnset);
          const { structured, text } = await spec.run(args);
          return { content: [{ type: 'text', text }], structuredContent: { status: 'ok', ...structured } };
        } catch (err) {
          return errorResult(err);
        }
      },
    );
  }

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
