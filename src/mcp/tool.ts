/**
 * What every MCP tool is: a strict zod input schema, annotations, and a handler that delegates to
 * BacklogService. `registerTool` adds one to a server: it renames accepted aliases, validates with our
 * own schema (the SDK would silently strip an unknown argument), and turns every failure into a
 * structured error result with a code and a hint.
 *
 * Answers are sized for an agent's context (docs/mcp.md, "Response size"): the read tools take
 * `response_format`; `concise` (the default) answers with one text block and no `structuredContent`,
 * so a client that forwards either of them, or both, pays for the answer once; `detailed` adds every
 * field as `structuredContent` with its JSON as the text block, as the MCP specification asks of
 * structured results. No tool advertises an output schema: with one, every answer would have to carry
 * `structuredContent`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ZodMiniObject } from 'zod/mini';
import { BacklogError, isBacklogError } from '../errors.js';
import { normalizeArgs, toBacklogError } from '../service/options.js';

export interface ToolOutput {
  text: string;
  /** Sent as `structuredContent` (`{status: "ok", ...structured}`) when present. */
  structured?: Record<string, unknown>;
}

export interface ToolSpec {
  title: string;
  description: string;
  /** The search and list options are zod/mini objects (service/options.ts), the others classic ones. */
  strict: z.ZodObject | ZodMiniObject;
  annotations: ToolAnnotations;
  /** Names agents guess for this tool's options, beyond OPTION_ALIASES. */
  aliases?: Record<string, string>;
  /** Options another tool's schema documents (backlog_list's filters): advertised without descriptions. */
  sharedOptions?: readonly string[];
  /** `null` means "not given" (read tools); in writes null clears a field, so it is kept. */
  nullIsUnset?: boolean;
  run: (args: Record<string, unknown>) => Promise<ToolOutput> | ToolOutput;
}

/** destructiveHint and idempotentHint mean something only for tools that write, so they are left out. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

export const RESPONSE_FORMATS = ['concise', 'detailed'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** The option every read tool takes. */
export const responseFormatShape = {
  response_format: z
    .enum(RESPONSE_FORMATS)
    .default('concise')
    .describe('concise: lean text; detailed: every field, as structuredContent'),
};

/**
 * The option every tool takes: which backlogs (a workspace, docs/workspace.md). Always accepted; it is
 * advertised only when the server may have more than one (toolDefinition), with the names open.
 */
export const projectShape = {
  project: z.union([z.string(), z.array(z.string())]).optional(),
};

/** Takes `response_format` out of a read tool's arguments (validated), leaving the rest for the service. */
export function takeFormat(args: Record<string, unknown>): [ResponseFormat, Record<string, unknown>] {
  const { response_format, ...rest } = args;
  const parsed = responseFormatShape.response_format.safeParse(response_format);
  if (!parsed.success)
    throw new BacklogError(
      'INVALID_FILTER',
      `response_format: ${JSON.stringify(response_format)?.slice(0, 100)} is not a format`,
      'Use "concise" (the default: lean text) or "detailed" (every field, as structuredContent).',
      { field: 'response_format' },
    );
  return [parsed.data, rest];
}

/** A read tool's answer: the concise text, or every field as structured content with its JSON as text. */
export function answer(
  format: ResponseFormat,
  structured: Record<string, unknown>,
  concise: () => string,
): ToolOutput {
  if (format === 'concise') return { text: concise() };
  return { structured, text: JSON.stringify({ status: 'ok', ...structured }) };
}

/** Validates `args` with a strict schema; an unknown or wrong argument is a BacklogError with a hint. */
export function parseStrict<S extends z.ZodObject>(schema: S, args: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw toBacklogError(parsed.error, Object.keys(schema.shape));
  return parsed.data;
}

/** A failure as a tool result: `isError`, one text line with the code and hint, and the structured error. */
export function errorResult(err: unknown): CallToolResult {
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

/**
 * Keeps an advertised JSON Schema short without changing what it accepts: a "value or list of
 * strings" is advertised as a list (one of either is still accepted), and the safe-integer bounds zod
 * adds to every integer are dropped.
 */
export function leanJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(leanJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'maximum' || key === 'minimum') && Math.abs(value as number) === Number.MAX_SAFE_INTEGER)
      continue;
    out[key] = leanJsonSchema(value);
  }
  const anyOf = out.anyOf as Array<Record<string, unknown>> | undefined;
  if (anyOf?.length === 2 && anyOf[0].type === 'string' && anyOf[1].type === 'array') {
    delete out.anyOf;
    return { ...out, ...anyOf[1] };
  }
  return out;
}

/** The strict schema as JSON Schema, as tools/list advertises it (built once per schema). */
const advertised = new Map<ToolSpec['strict'], Record<string, unknown>>();
function advertisedJson(spec: ToolSpec): Record<string, unknown> {
  let json = advertised.get(spec.strict);
  if (!json) {
    json = leanJsonSchema(
      z.toJSONSchema(spec.strict, { io: 'input', target: 'draft-7', unrepresentable: 'any' }),
    ) as Record<string, unknown>;
    delete json.$schema;
    const properties = json.properties as Record<string, Record<string, unknown>>;
    for (const key of spec.sharedOptions ?? []) delete properties[key]?.description;
    advertised.set(spec.strict, json);
  }
  return json;
}

/**
 * A tool as tools/list describes it. The server answers tools/list from these (server.ts) rather than
 * with the SDK's list, which adds `$schema` and `execution: {taskSupport: "forbidden"}` to every tool
 * (both are what a client assumes when they are absent) and converts the schema again on every call.
 */
export function toolDefinition(name: string, spec: ToolSpec, projects?: ProjectsAdvertised): Tool {
  const schema = advertisedJson(spec);
  const { project, ...others } = schema.properties as Record<string, Record<string, unknown>>;
  // `project` is advertised only where it can choose between backlogs; with one it is accepted, unlisted.
  const properties =
    projects && project ? { ...others, project: { ...project, description: projects.description } } : others;
  return {
    name,
    title: spec.title,
    description: spec.description,
    inputSchema: { ...schema, properties } as Tool['inputSchema'],
    annotations: spec.annotations,
  };
}

/** What the `project` option says when it is advertised: the names open, and what it means for this tool. */
export interface ProjectsAdvertised {
  description: string;
}

/** Any object: the SDK lets every call through to the handler, which validates with the strict schema. */
const ANY_ARGUMENTS = z.object({}).catchall(z.unknown());

/**
 * `notice`: a text block every answer ends with (and `notice` in its structured content), e.g. DEMO_NOTICE;
 * a function is asked at each call (a server over a workspace whose projects change).
 */
export function registerTool(
  server: McpServer,
  name: string,
  spec: ToolSpec,
  noticeOf?: string | (() => string | undefined),
): void {
  const known = Object.keys(spec.strict.shape);
  server.registerTool(
    name,
    {
      title: spec.title,
      description: spec.description,
      inputSchema: ANY_ARGUMENTS,
      annotations: spec.annotations,
    },
    async (raw: Record<string, unknown>): Promise<CallToolResult> => {
      const notice = typeof noticeOf === 'function' ? noticeOf() : noticeOf;
      try {
        const args = normalizeArgs(raw, known, spec.aliases, spec.nullIsUnset);
        const { structured, text } = await spec.run(args);
        // The notice is a block of its own, after the answer: content[0] (JSON in detailed mode) stays as it is.
        const result: CallToolResult = { content: [{ type: 'text', text }] };
        if (notice) result.content.push({ type: 'text', text: notice });
        if (structured)
          result.structuredContent = { status: 'ok', ...structured, ...(notice ? { notice } : {}) };
        return result;
      } catch (err) {
        const result = errorResult(err);
        if (notice) result.content.push({ type: 'text', text: notice });
        return result;
      }
    },
  );
}
