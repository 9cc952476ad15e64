import type { BacklogService } from '../../service/backlog-service.js';
import { writeResourceInputSchema } from '../../service/write-inputs.js';
import { writeOutput } from '../format.js';
import { type ToolSpec } from '../tool.js';

export function writeResourceTool(service: BacklogService): ToolSpec {
  return {
    title: 'Write a resource document',
    description:
      'Writes a document (not a task) under the backlog root: mode create (default; CONFLICT if it exists), overwrite, append, or replace (old_string -> new_string, CONFLICT if absent or ambiguous; the default when old_string is given). The path stays inside the root: no "..", absolute paths or hidden folders. Example: {"path": "resources/notes/2026-05-retro.md", "content": "# Retro\\n..."}',
    strict: writeResourceInputSchema,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: { text: 'content', body: 'content', file: 'path', uri: 'path', id: 'path' },
    run: async (args) =>
      writeOutput(await service.writeResource(args as Parameters<BacklogService['writeResource']>[0])),
  };
}
