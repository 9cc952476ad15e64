import type { BacklogService } from '../../service/backlog-service.js';
import { createInputSchema } from '../../service/write-inputs.js';
import { writeOutput } from '../format.js';
import { type ToolSpec } from '../tool.js';

/** Names agents use for the fields of a write (Backlog.md's `labels`, a `description` for the body). */
export const WRITE_ALIASES = {
  description: 'body',
  content: 'body',
  labels: 'tags',
  parent: 'parent_id',
  tag: 'tags',
};

export function createTool(service: BacklogService): ToolSpec {
  return {
    title: 'Create a task or epic',
    description:
      'Creates a task (or epic) file tasks/<ID>-<slug>.md with the next free id (TASK-0001, EPIC-0001) and returns the id; it is searchable when this returns. status defaults to open; parent_id must be an existing task or epic. Values are validated strictly (INVALID_FILTER names the field). Example: {"title": "Add rate-limit to password reset", "parent_id": "EPIC-0001", "tags": ["auth"], "body": "## Context\\n..."}',
    strict: createInputSchema,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: WRITE_ALIASES,
    run: async (args) => writeOutput(await service.create(args as Parameters<BacklogService['create']>[0])),
  };
}
