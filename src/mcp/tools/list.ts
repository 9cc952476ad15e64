import type { BacklogService, ListResponse } from '../../service/backlog-service.js';
import type { Workspace } from '../../workspace/workspace.js';
import { filterShape, listOptionsSchema } from '../../service/options.js';
import { summaryLine } from '../format.js';
import { extend } from 'zod/mini';
import { READ_ONLY, answer, projectShape, responseFormatShape, takeFormat, type ToolSpec } from '../tool.js';

const strict = extend(listOptionsSchema, { ...responseFormatShape, ...projectShape });

function listText(res: ListResponse): string {
  const hidden = Object.entries(res.not_shown ?? {}).map(([state, n]) => `${n} ${state}`);
  const notShown = hidden.length ? `not shown: ${hidden.join(', ')} (state: "all" lists them)` : '';
  if (res.total === 0) return ['No items match these filters.', notShown].filter(Boolean).join(' ');
  const counts = Object.entries(res.counts_by_status)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const more = res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : '';
  return [
    `${res.total} item${res.total === 1 ? '' : 's'}${counts ? ` (${counts})` : ''}${more}`,
    ...res.results.map(summaryLine),
    ...(notShown ? [notShown] : []),
  ].join('\n');
}

export function listTool(ws: Workspace): ToolSpec {
  return {
    title: 'List backlog items',
    description:
      'Items matching filters, without a query: most recently updated first (or sort: "id"), with counts by status over all matches. Filters as in backlog_search; by default only live items (active tasks and documents, as the backlog\'s own tool lists them; state: "all" or "archived" for the rest). limit 1-1000 (default 100). Example: {"types": "task", "status": "' +
      (ws.projects[0].service.format.config.statuses[0] ?? 'open') +
      '"}',
    strict,
    sharedOptions: Object.keys(filterShape),
    annotations: READ_ONLY,
    nullIsUnset: true,
    run: (args) => {
      const [format, rest] = takeFormat(args);
      const res = ws.list(rest as Parameters<BacklogService['list']>[0]);
      return answer(format, { ...res }, () => listText(res));
    },
  };
}
