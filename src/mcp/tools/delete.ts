import type { Workspace } from '../../workspace/workspace.js';
import { writeSchemas } from '../../service/write-inputs.js';
import { exampleId, taskKinds, writeOutput } from '../format.js';
import { projectShape, type ToolSpec } from '../tool.js';

const strict = writeSchemas().delete.extend(projectShape);

export function deleteTool(ws: Workspace): ToolSpec {
  return {
    title: 'Delete an item',
    description: `Deletes the file of a ${taskKinds(ws)} or document (by id, resource URI or path); it leaves the index when this returns. In a Backlog.md backlog a task is archived (moved to archive/tasks/) unless permanent: true. A task with children is refused with CONFLICT unless force: true. Example: {"id": "${exampleId(ws)}"}`,
    strict,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    aliases: { ids: 'id', path: 'id', uri: 'id' },
    run: async (args) => writeOutput(await ws.delete(args as unknown as Parameters<Workspace['delete']>[0])),
  };
}
