import type { BacklogService } from '../../service/backlog-service.js';
import { writeSchemas } from '../../service/write-inputs.js';
import type { Workspace } from '../../workspace/workspace.js';
import { taskKinds, writeOutput } from '../format.js';
import { projectShape, type ToolSpec } from '../tool.js';

const strict = writeSchemas().create.extend(projectShape);

/** Names agents use for the fields of a write (Backlog.md's `labels`, a `description` for the body). */
export const WRITE_ALIASES = {
  description: 'body',
  content: 'body',
  labels: 'tags',
  parent: 'parent_id',
  tag: 'tags',
};

/** Where a new task goes in this backlog's format. */
function whereOf(service: BacklogService): string {
  const { name, config } = service.format;
  return name === 'backlog-md'
    ? `a Backlog.md task file as \`backlog task create\` writes it (tasks/${config.taskPrefix.toLowerCase()}-N - Title.md, id ${config.taskPrefix}-N, a sub-task ${config.taskPrefix}-N.1; body is the description)`
    : 'a task (or epic) file tasks/<ID>-<slug>.md with the next free id (TASK-0001, EPIC-0001)';
}

function createDescription(ws: Workspace): string {
  const first = ws.projects[0].service;
  const { config } = first.format;
  // Several backlogs: each writes in its own format; `project` names the one (PROJECT_REQUIRED without it).
  const where = ws.multi
    ? `in the backlog named by project, in its format: ${[...new Set(ws.projects.map((p) => whereOf(p.service)))].join('; or ')}`
    : whereOf(first);
  const defaults = ws.multi
    ? "status defaults to the backlog's first status"
    : `status defaults to "${config.defaultStatus}"`;
  return `Creates ${where} and returns the id; it is searchable when this returns. ${defaults}; parent_id must be an existing task. Values are validated strictly (INVALID_FILTER names the field). Example: ${JSON.stringify({ title: 'Add rate-limit to password reset', tags: ['auth'], body: 'Lock the form after five failures.' })}`;
}

export function createTool(ws: Workspace): ToolSpec {
  return {
    title: `Create a ${taskKinds(ws)}`,
    description: createDescription(ws),
    strict,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: WRITE_ALIASES,
    run: async (args) => writeOutput(await ws.create(args as unknown as Parameters<Workspace['create']>[0])),
  };
}
