import { z } from 'zod';
import type { BacklogService } from '../../service/backlog-service.js';
import { resourceUri } from '../../storage/parse.js';
import { exampleId, kindOf } from '../format.js';
import { READ_ONLY, answer, parseStrict, responseFormatShape, type ToolSpec } from '../tool.js';

export const metadataInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('id, resource URI or path'),
    ...responseFormatShape,
  })
  .strict();

/** A front matter value on one line: strings as written, anything else as JSON. */
function valueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function getMetadataTool(service: BacklogService): ToolSpec {
  return {
    title: 'Get item metadata',
    description:
      'File facts and links of one item, without its content: path, size, modified and indexed times, the whole front matter, parent, children and references. Example: {"id": "' +
      exampleId(service) +
      '"}',
    strict: metadataInputSchema,
    annotations: READ_ONLY,
    aliases: { ids: 'id', path: 'id', uri: 'id' },
    nullIsUnset: true,
    run: (args) => {
      const { id, response_format } = parseStrict(metadataInputSchema, args);
      const md = service.getMetadata(id);
      const item = service.get(md.id);
      const metadata = {
        id: md.id,
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
        uri: resourceUri(md.path),
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
