/**
 * Output schemas of the tools (zod, advertised to clients as JSON Schema): the ok shape with its fields
 * optional, since an error result carries only `status` and `error`.
 */
import { z } from 'zod';
import { ERROR_CODES } from '../errors.js';

export const errorShape = z
  .object({ code: z.enum(ERROR_CODES), message: z.string(), hint: z.string() })
  .loose()
  .describe('present when status is "error"');

export function output<S extends z.ZodRawShape>(shape: S) {
  return z.object({ status: z.enum(['ok', 'error']), error: errorShape.optional(), ...shape }).loose();
}

export const nullableString = z.string().nullable();
export const summaryShape = z
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
export const searchResultShape = z
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
export const itemShape = z
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
export const writeShape = {
  action: z
    .enum(['created', 'updated', 'deleted', 'archived', 'overwritten', 'appended', 'replaced'])
    .optional(),
  id: z.string().optional(),
  path: z.string().optional(),
  uri: z.string().optional(),
  item: summaryShape.nullable().optional(),
  replacements: z.number().int().optional(),
  orphaned: z.array(z.string()).optional(),
};
