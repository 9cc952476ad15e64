import type { BacklogService } from '../../service/backlog-service.js';
import { updateInputSchema } from '../../service/write-inputs.js';
import { exampleId, taskKinds, writeOutput } from '../format.js';
import { type ToolSpec } from '../tool.js';
import { WRITE_ALIASES } from './create.js';

export function updateTool(service: BacklogService): ToolSpec {
  return {
    title: `Update a ${taskKinds(service)}`,
    description: `Patches a ${taskKinds(service)}: only the fields given change, in place (null clears one; comments and every other line stay as written), and the update date is set. Body edits: body replaces it, append adds to it, old_string + new_string edits one passage (CONFLICT if absent or ambiguous). expected_updated_at guards against lost updates. Example: ${JSON.stringify({ id: exampleId(service), status: service.format.config.statuses.at(-1), append: 'Shipped in 2.4.' })}`,
    strict: updateInputSchema,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: { ...WRITE_ALIASES, ids: 'id' },
    run: async (args) => writeOutput(await service.update(args as Parameters<BacklogService['update']>[0])),
  };
}
