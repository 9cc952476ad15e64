import { z } from 'zod';
import type { BacklogService } from '../../service/backlog-service.js';
import { listOptionsSchema } from '../../service/options.js';
import { summaryLine } from '../format.js';
import { output, summaryShape } from '../shapes.js';
import { READ_ONLY, type ToolSpec } from '../tool.js';

export function listTool(service: BacklogService): ToolSpec {
  return {
    title: 'List backlog items',
    description:
      'Items matching filters, without a query: most recently updated first (or sort: "id"), with counts by status over all matches. Same filters as backlog_search; limit 1-1000 (default 100). Example: {"types": "task", "status": "blocked"}',
    strict: listOptionsSchema,
    output: output({
      results: z.array(summaryShape).optional(),
      total: z.number().int().optional(),
      counts_by_status: z.record(z.string(), z.number()).optional(),
      next_offset: z.number().int().optional(),
    }),
    annotations: READ_ONLY,
    nullIsUnset: true,
    run: (args) => {
      const res = service.list(args as Parameters<BacklogService['list']>[0]);
      const counts = Object.entries(res.counts_by_status)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ');
      const lines = [
        `${res.total} item${res.total === 1 ? '' : 's'}${counts ? ` (${counts})` : ''}${res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : ''}`,
        ...res.results.map(summaryLine),
      ];
      return { structured: { ...res }, text: lines.join('\n') };
    },
  };
}
