import { z } from 'zod';
import type { BacklogService, SearchResult } from '../../service/backlog-service.js';
import { searchOptionsSchema } from '../../service/options.js';
import { cut, kindOf, oneLine } from '../format.js';
import { output, searchResultShape } from '../shapes.js';
import { READ_ONLY, type ToolSpec } from '../tool.js';

/** Content of one search result over this many characters is cut (`truncated: true`, `content_length`). */
export const SEARCH_CONTENT_CAP = 4000;

/** A result with its content cut at SEARCH_CONTENT_CAP (read from the item, so a long body is never copied whole). */
function withContent(
  service: BacklogService,
  r: SearchResult,
): SearchResult & { truncated?: boolean; content_length?: number } {
  const body = service.get(r.id).body;
  const content = cut(body, 0, SEARCH_CONTENT_CAP);
  return { ...r, content, content_length: body.length, truncated: content.length < body.length };
}

export function searchTool(service: BacklogService): ToolSpec {
  return {
    title: 'Search the backlog',
    description:
      'Full-text search over tasks, epics and resource documents, ranked by relevance (or sort: "recent"). Filters (status, types, tags, parent_id, author, path, folder, file_type) take a value or a list; lists OR, filters AND. Returns up to `limit` (default 20) results with a snippet each; pass result ids to backlog_get for the content. Use next_offset to page. include_content adds each content (cut at ' +
      `${SEARCH_CONTENT_CAP} characters). Example: ${JSON.stringify({ query: 'login rate limit', status: service.format.config.statuses.slice(0, 2), limit: 5 })}`,
    strict: searchOptionsSchema,
    output: output({
      results: z.array(searchResultShape).optional(),
      total: z.number().int().optional(),
      query: z.string().optional(),
      search_mode: z.string().optional(),
      next_offset: z.number().int().optional(),
      took_ms: z.number().optional(),
      warnings: z.array(z.string()).optional(),
    }),
    annotations: READ_ONLY,
    nullIsUnset: true,
    run: async (args) => {
      const { query, include_content, ...options } = args;
      const res = await service.searchUnified(query as string, {
        ...(options as Parameters<BacklogService['searchUnified']>[1]),
        // The content is added below, cut per result; a value that is not a boolean is left for the schema to refuse.
        include_content: typeof include_content === 'boolean' ? false : (include_content as boolean),
      });
      const results =
        include_content === true ? res.results.map((r) => withContent(service, r)) : res.results;
      const start = Number(args.offset ?? 0); // valid: searchUnified accepted it
      const from = results.length ? ` (${start + 1}-${start + results.length})` : '';
      const lines = [
        `${res.total} result${res.total === 1 ? '' : 's'} for "${res.query}"${from}, ${res.search_mode}${res.next_offset !== undefined ? `, next_offset ${res.next_offset}` : ''}`,
      ];
      for (const w of res.warnings ?? []) lines.push(`warning: ${w}`);
      for (const r of results)
        lines.push(
          `${r.id} [${kindOf(r)}]${r.match === 'semantic' ? ' [semantic]' : ''} ${r.title}${r.snippet.text ? ` — ${oneLine(r.snippet.text)}` : ''}`,
        );
      return { structured: { ...res, results }, text: lines.join('\n') };
    },
  };
}
