import type { BacklogService, SearchResult } from '../../service/backlog-service.js';
import type { Workspace } from '../../workspace/workspace.js';
import { searchOptionsSchema } from '../../service/options.js';
import { cut, kindsPhrase, searchText } from '../format.js';
import { extend } from 'zod/mini';
import { READ_ONLY, answer, projectShape, responseFormatShape, takeFormat, type ToolSpec } from '../tool.js';

/** With include_content, content of one result over this many characters is cut (`truncated: true`, `content_length`). */
export const SEARCH_CONTENT_CAP = 4000;

/** A result with its content cut at SEARCH_CONTENT_CAP (read from the item, so a long body is never copied whole). */
function withContent(
  ws: Workspace,
  r: SearchResult,
): SearchResult & { truncated?: boolean; content_length?: number } {
  const body = ws.get(r.id).body;
  const content = cut(body, 0, SEARCH_CONTENT_CAP);
  return { ...r, content, content_length: body.length, truncated: content.length < body.length };
}

const strict = extend(searchOptionsSchema, { ...responseFormatShape, ...projectShape });

export function searchTool(ws: Workspace): ToolSpec {
  const { statuses } = ws.projects[0].service.format.config;
  const example = { query: 'login rate limit', status: statuses.slice(0, 2), limit: 5 };
  return {
    title: 'Search the backlog',
    description:
      `Ranked full-text search over ${kindsPhrase(ws)}: one line per hit with the matched passage; a task that is not active says so ("[Done, archived]"). Filters take a value or a list (values OR, filters AND). Pass ids to backlog_get for content; page with offset = next_offset. ` +
      `Example: ${JSON.stringify(example)}`,
    strict,
    annotations: READ_ONLY,
    nullIsUnset: true,
    run: async (args) => {
      const [format, rest] = takeFormat(args);
      const { query, include_content, ...options } = rest;
      const res = await ws.searchUnified(query as string, {
        ...(options as Parameters<BacklogService['searchUnified']>[1]),
        // The content is added below, cut per result; a value that is not a boolean is left for the schema to refuse.
        include_content: typeof include_content === 'boolean' ? false : (include_content as boolean),
      });
      const results = include_content === true ? res.results.map((r) => withContent(ws, r)) : res.results;
      const start = Number(rest.offset ?? 0); // valid: searchUnified accepted it
      return answer(format, { ...res, results }, () => searchText(res, results, start));
    },
  };
}
