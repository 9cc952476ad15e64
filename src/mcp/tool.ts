/**
 * What every MCP tool is: a strict zod input schema, an output schema, annotations, and a handler
 * that delegates to BacklogService. `registerTool` adds one to a server: it renames accepted aliases,
 * validates with our own schema (the SDK would silently strip an unknown argument), and turns every
 * failure into a structured error result with a code and a hint.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BacklogError, isBacklogError } from '../errors.js';
import { normalizeArgs, toBacklogError } from '../service/options.js';

export interface ToolOutput {
  structured: Record<string, unknown>;
  text: string;
}

export interface ToolSpec {
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

export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

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
 * The SDK gets a schema that accepts any object but advertises the strict one as JSON Schema (built
 * once per schema: the conversion is not free, and HTTP sessions each get their own server).
 */
const advertised = new Map<z.ZodObject, z.ZodType<Record<string, unknown>>>();
function advertisedInput(strict: z.ZodObject): z.ZodType<Record<string, unknown>> {
  let schema = advertised.get(strict);
  if (!schema) {
    const json = z.toJSONSchema(strict, { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
    delete json.$schema;
    advertised.set(strict, (schema = z.object({}).catchall(z.unknown()).meta(json)));
  }
  return schema;
}

export function registerTool(server: McpServer, name: string, spec: ToolSpec): void {
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
