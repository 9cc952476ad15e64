import { z } from 'zod';
import { BacklogError, errors } from '../../errors.js';
import type { Workspace } from '../../workspace/workspace.js';
import { exampleId, itemText, itemView, responseBudget } from '../format.js';
import { READ_ONLY, answer, parseStrict, projectShape, responseFormatShape, type ToolSpec } from '../tool.js';

/** Default and maximum characters of content per item returned by backlog_get. */
export const GET_CONTENT_DEFAULT = 20_000;
export const GET_CONTENT_MAX = 200_000;

export const getInputSchema = z
  .object({
    ids: z
      .union([z.string(), z.array(z.string())])
      .describe('ids, resource URIs or paths, as search returns them'),
    max_chars: z.coerce
      .number()
      .int()
      .min(1)
      .max(GET_CONTENT_MAX)
      .default(GET_CONTENT_DEFAULT)
      .describe('content characters per item; longer content is cut'),
    content_offset: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('where the content window starts, to read on'),
    ...responseFormatShape,
    ...projectShape,
  })
  .strict();

/**
 * The ids a call names. A list is taken as given; one string is one id, URI or path when it names an
 * item (a file name may hold commas: `back-299 - Fix-...-(Codex,-Gemini,-Claude).md`), else a
 * comma-separated list of them.
 */
function idsOf(ws: Workspace, ids: string | string[]): string[] {
  if (Array.isArray(ids)) return ids.map((s) => s.trim()).filter(Boolean);
  const one = ids.trim();
  if (!one.includes(',') || ws.resolve(one) !== undefined) return one ? [one] : [];
  return one
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function getTool(ws: Workspace): ToolSpec {
  return {
    title: 'Get backlog items',
    description:
      `Content and fields of one item or a list. An unknown id in a list gets its own NOT_FOUND line; a single unknown id is a NOT_FOUND error. ` +
      `Content over max_chars (default ${GET_CONTENT_DEFAULT}) is cut; read on with content_offset. Example: {"ids": ["${exampleId(ws)}"]}`,
    strict: getInputSchema,
    annotations: READ_ONLY,
    aliases: { id: 'ids', items: 'ids', paths: 'ids', path: 'ids', uri: 'ids', uris: 'ids' },
    nullIsUnset: true,
    run: (args) => {
      const input = parseStrict(getInputSchema, args);
      const ids = idsOf(ws, input.ids);
      const scope = input.project === undefined ? {} : { project: input.project };
      if (ids.length === 0)
        throw new BacklogError(
          'INVALID_FILTER',
          'ids is empty',
          'Pass at least one id, e.g. {"ids": "TASK-0001"}.',
          { field: 'ids' },
        );
      if (ids.length === 1) ws.get(ids[0], scope); // a single unknown id is an error, not an entry
      const found = ws.get(ids, scope);
      const chars = found.reduce(
        (n, e) =>
          n +
          (e.status === 'ok'
            ? Math.min(input.max_chars, Math.max(0, e.item.body.length - input.content_offset))
            : 0),
        0,
      );
      const budget = responseBudget(ws);
      if (chars > budget)
        throw errors.inputTooLarge(
          'ids',
          `the content asked for is ${chars} characters, over the budget of ${budget} (limits.maxResponseChars)`,
          'Ask for fewer ids, or a smaller max_chars, and read on with content_offset.',
          { limit: budget },
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
      return answer(input.response_format, { items: entries, found: ok, missing: entries.length - ok }, () =>
        entries
          .map((e) =>
            e.status === 'ok' ? itemText(e.item) : `${e.id}: error ${e.error.code}: ${e.error.message}`,
          )
          .join('\n\n---\n\n'),
      );
    },
  };
}
