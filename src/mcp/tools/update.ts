import type { Workspace } from '../../workspace/workspace.js';
import { writeSchemas } from '../../service/write-inputs.js';
import { exampleId, taskKinds, writeOutput } from '../format.js';
import { projectShape, type ToolSpec } from '../tool.js';
import { WRITE_ALIASES } from './create.js';

const strict = writeSchemas().update.extend(projectShape);

export function updateTool(ws: Workspace): ToolSpec {
  return {
    title: `Update a ${taskKinds(ws)}`,
    description: `Patches a ${taskKinds(ws)}: only the fields given change, in place (null clears one; comments and every other line stay as written), and the update date is set. Body edits: body replaces it, append adds to it, old_string + new_string edits one passage (CONFLICT if absent or ambiguous). expected_updated_at guards against lost updates. Example: ${JSON.stringify({ id: exampleId(ws), status: ws.projects[0].service.format.config.statuses.at(-1), append: 'Shipped in 2.4.' })}`,
    strict,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: { ...WRITE_ALIASES, ids: 'id' },
    run: async (args) => writeOutput(await ws.update(args as unknown as Parameters<Workspace['update']>[0])),
  };
}
