import { z } from 'zod';
import type { BacklogService } from '../../service/backlog-service.js';
import { resourceUri } from '../../storage/parse.js';
import { exampleId, kindOf } from '../format.js';
import { output, nullableString } from '../shapes.js';
import { READ_ONLY, parseStrict, type ToolSpec } from '../tool.js';

export const metadataInputSchema = z
  .object({
    id: z.string().trim().min(1).describe('id, resource URI or path, e.g. TASK-0001'),
  })
  .strict();

export function getMetadataTool(service: BacklogService): ToolSpec {
  return {
    title: 'Get item metadata',
    description:
      'File facts and links of one item, without its content: path, file name and type, size, modified and indexed times, the whole frontmatter, parent, children and references. Missing values are null, never absent. Example: {"id": "' +
      exampleId(service) +
      '"}',
    strict: metadataInputSchema,
    output: output({
      metadata: z
        .object({
          id: z.string(),
          type: z.string(),
          title: z.string(),
          status: nullableString,
          parent_id: nullableString,
          tags: z.array(z.string()),
          author: nullableString,
          assignee: nullableString,
          priority: nullableString,
          created_at: nullableString,
          updated_at: nullableString,
          path: z.string(),
          uri: z.string(),
          file_name: z.string(),
          file_type: z.string(),
          size: z.number(),
          modified_at: nullableString,
          indexed_at: nullableString,
          frontmatter: z.record(z.string(), z.unknown()),
          links: z.object({
            parent: nullableString,
            children: z.array(z.string()),
            references: z.array(z.string()),
          }),
        })
        .loose()
        .optional(),
    }),
    annotations: READ_ONLY,
    aliases: { ids: 'id', path: 'id', uri: 'id' },
    nullIsUnset: true,
    run: (args) => {
      const { id } = parseStrict(metadataInputSchema, args);
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
      const links = [
        md.links.parent && `parent ${md.links.parent}`,
        `${md.links.children.length} children`,
        `${md.links.references.length} references`,
      ]
        .filter(Boolean)
        .join(', ');
      return {
        structured: { metadata },
        text: `${md.id} [${kindOf({ type: md.type, status: item.status })}] ${md.path}, ${md.size} bytes, modified ${md.modified_at ?? 'unknown'}, indexed ${md.indexed_at ?? 'never'}; ${links}`,
      };
    },
  };
}
