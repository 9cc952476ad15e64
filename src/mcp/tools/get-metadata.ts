import { z } from 'zod';
import type { Workspace } from '../../workspace/workspace.js';
import { exampleId, kindOf, uriOf } from '../format.js';
import { READ_ONLY, answer, parseStrict, projectShape, responseFormatShape, type ToolSpec } from '../tool.js';

export const metadataInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('id, resource URI or path'),
    ...responseFormatShape,
    ...projectShape,
  })
  .strict();

/** A front matter value on one line: strings as written, anything else as JSON. */
function valueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function getMetadataTool(ws: Workspace): ToolSpec {
  return {
    title: 'Get item metadata',
    description:
      'File facts and links of one item, without its content: path, size, modified and indexed times, the whole front matter, parent, children and references. Example: {"id": "' +
      exampleId(ws) +
      '"}',
    strict: metadataInputSchema,
    annotations: READ_ONLY,
    aliases: { ids: 'id', path: 'id', uri: 'id' },
    nullIsUnset: true,
    run: (args) => {
      const { id, response_format, project } = parseStrict(metadataInputSchema, args);
      const md = ws.getMetadata(id, project === undefined ? {} : { project });
      const item = ws.get(md.id);
      const metadata = {
        id: md.id,
        ...(md.project ? { project: md.project } : {}),
        type: md.type,
        title: md.title,
        status: item.status,
        parent_id: item.parent_id,
        tags: item.tags,
        author: item.author,
        assignee: item.assignee,
        priority: item.priority,
        created_at: item.created_at,
        updated_at: item.updated_at,
        path: md.path,
        uri: uriOf(md.path, md.project),
        file_name: md.file_name,
        file_type: md.file_type,
        size: md.size,
        modified_at: md.modified_at,
        indexed_at: md.indexed_at,
        frontmatter: md.frontmatter,
        links: md.links,
      };
      return answer(response_format, { metadata }, () => {
        const { parent, children, references } = md.links;
        const lines = [
          `${md.id} [${kindOf({ type: md.type, status: item.status })}] ${md.title}`,
          `file: ${md.path} (${md.file_type}, ${md.size} bytes), modified ${md.modified_at ?? 'unknown'}, indexed ${md.indexed_at ?? 'never'}`,
          `links: parent ${parent ?? 'none'}; children ${children.join(', ') || 'none'}; references ${references.join(', ') || 'none'}`,
        ];
        const keys = Object.entries(md.frontmatter);
        if (keys.length) lines.push('front matter:', ...keys.map(([k, v]) => `  ${k}: ${valueText(v)}`));
        return lines.join('\n');
      });
    },
  };
}
