import type { BacklogService } from '../../service/backlog-service.js';
import { createInputSchema } from '../../service/write-inputs.js';
import { taskKinds, writeOutput } from '../format.js';
import { type ToolSpec } from '../tool.js';

/** Names agents use for the fields of a write (Backlog.md's `labels`, a `description` for the body). */
export const WRITE_ALIASES = {
  description: 'body',
  content: 'body',
  labels: 'tags',
  parent: 'parent_id',
  tag: 'tags',
};

function createDescription(service: BacklogService): string {
  const { name, config } = service.format;
  const where =
    name === 'backlog-md'
      ? `a Backlog.md task file as \`backlog task create\` writes it (tasks/${config.taskPrefix.toLowerCase()}-N - Title.md, id ${config.taskPrefix}-N, a sub-task ${config.taskPrefix}-N.1; body is the description)`
      : 'a task (or epic) file tasks/<ID>-<slug>.md with the next free id (TASK-0001, EPIC-0001)';
  return `Creates ${where} and returns the id; it is searchable when this returns. status defaults to "${config.defaultStatus}"; parent_id must be an existing task. Values are validated strictly (INVALID_FILTER names the field). Example: ${JSON.stringify({ title: 'Add rate-limit to password reset', tags: ['auth'], body: 'Lock the form after five failures.' })}`;
}

export function createTool(service: BacklogService): ToolSpec {
  return {
    title: `Create a ${taskKinds(service)}`,
    description: createDescription(service),
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
