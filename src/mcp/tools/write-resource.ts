import type { Workspace } from '../../workspace/workspace.js';
import { writeSchemas } from '../../service/write-inputs.js';
import { writeOutput } from '../format.js';
import { projectShape, type ToolSpec } from '../tool.js';

const strict = writeSchemas().writeResource.extend(projectShape);

export function writeResourceTool(ws: Workspace): ToolSpec {
  return {
    title: 'Write a resource document',
    description:
      'Writes a document (not a task) under the backlog root: mode create (default; CONFLICT if it exists), overwrite, append, or replace (old_string -> new_string, CONFLICT if absent or ambiguous; the default when old_string is given). The path stays inside the root: no "..", absolute paths or hidden folders. Example: {"path": "resources/notes/2026-05-retro.md", "content": "# Retro\\n..."}',
    strict,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    aliases: { text: 'content', body: 'content', file: 'path', uri: 'path', id: 'path' },
    run: async (args) =>
      writeOutput(await ws.writeResource(args as unknown as Parameters<Workspace['writeResource']>[0])),
  };
}
