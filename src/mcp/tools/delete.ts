import type { BacklogService } from '../../service/backlog-service.js';
import { deleteInputSchema } from '../../service/write-inputs.js';
import { exampleId, taskKinds, writeOutput } from '../format.js';
import { type ToolSpec } from '../tool.js';

export function deleteTool(service: BacklogService): ToolSpec {
  return {
    title: 'Delete an item',
    description: `Deletes the file of a ${taskKinds(service)} or document (by id, resource URI or path); it leaves the index when this returns. In a Backlog.md backlog a task is archived (moved to archive/tasks/) unless permanent: true. A task with children is refused with CONFLICT unless force: true. Example: {"id": "${exampleId(service)}"}`,
    strict: deleteInputSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    aliases: { ids: 'id', path: 'id', uri: 'id' },
    run: async (args) => writeOutput(await service.delete(args as Parameters<BacklogService['delete']>[0])),
  };
}
