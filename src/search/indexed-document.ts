/** What the lexical index gives Orama per document: the text fields and the keys the filters match on. */
import { statusKey } from '../storage/ids.js';
import { folderChain, type FilterKeys } from './filters.js';
import { idKey, type Language } from './tokenizer.js';
import type { SearchDocument } from './types.js';

export const SCHEMA = {
  title: 'string',
  tags: 'string',
  author: 'string',
  body: 'string',
  extra: 'string',
  headings: 'string',
  type: 'enum',
  status_key: 'enum',
  state: 'enum',
  tag_keys: 'enum[]',
  author_key: 'enum',
  lineage: 'enum[]',
  path: 'enum',
  folders: 'enum[]',
  file_type: 'enum',
} as const;

/** What Orama is given per document: the searchable text (emptied once indexed) and the keys the filters match on. */
export interface IndexedDocument extends FilterKeys {
  id: string;
  title: string;
  tags: string;
  author: string;
  body: string;
  extra: string;
  headings: string;
  updated_ms: number;
  /** The language the document was analyzed in (LanguageMix.languageOf). */
  lang?: Language;
}

export function toIndexed(doc: SearchDocument): IndexedDocument {
  const { tag_keys, lineage, folders, ...rest } = filterKeys(doc);
  return {
    id: doc.id,
    title: doc.title ?? '',
    tags: (doc.tags ?? []).join(' \n '),
    author: doc.author ?? '',
    body: doc.body ?? '',
    extra: doc.extra ?? '',
    headings: headingsOf(doc.body ?? ''),
    tag_keys,
    lineage,
    folders,
    updated_ms: doc.updated_ms ?? 0,
    ...rest,
  };
}

/** What the `where` filters match a document on (filters.ts buildWhere, matchesWhere). */
export function filterKeys(doc: FilterSource): FilterKeys {
  const out: FilterKeys = { tag_keys: [], lineage: [], folders: [] };
  for (const field of FILTER_FIELDS) {
    const value = filterKey(doc, field);
    if (value !== undefined) (out as unknown as Record<string, unknown>)[field] = value;
  }
  return out;
}

/** The filter fields in the order a document has them. */
const FILTER_FIELDS = [
  'tag_keys',
  'lineage',
  'folders',
  'type',
  'status_key',
  'state',
  'author_key',
  'path',
  'file_type',
] as const satisfies readonly (keyof FilterKeys)[];

/** One filter key of a document (undefined: the document has none), computed alone (matchesWhere asks for the clauses' fields only). */
export function filterKey(doc: FilterSource, field: keyof FilterKeys): string | string[] | undefined {
  switch (field) {
    case 'tag_keys':
      return (doc.tags ?? []).map((t) => t.toLowerCase());
    case 'lineage':
      return [idKey(doc.id), ...(doc.ancestors ?? (doc.parent_id ? [doc.parent_id] : [])).map(idKey)];
    case 'folders':
      return folderChain(doc.folder ?? '');
    case 'type':
      return doc.type || undefined;
    case 'status_key':
      return doc.status ? statusKey(doc.status) : undefined;
    case 'state':
      // Documents get `none`, so one filter can ask for "active tasks and every document" (list's default).
      return doc.state ?? 'none';
    case 'author_key':
      return doc.author ? doc.author.toLowerCase() : undefined;
    case 'path':
      return doc.path || undefined;
    case 'file_type':
      return doc.file_type ? doc.file_type.toLowerCase() : undefined;
  }
}

/** The fields of a search document the filter keys come from. */
export type FilterSource = Pick<
  SearchDocument,
  | 'id'
  | 'type'
  | 'state'
  | 'status'
  | 'tags'
  | 'author'
  | 'parent_id'
  | 'ancestors'
  | 'path'
  | 'folder'
  | 'file_type'
>;

/** The text of the markdown headings of a body (outside fenced code), one per line. */
export function headingsOf(body: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const line of body.split('\n')) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) {
      const m = /^\s{0,3}#{1,6}\s+(.*?)[\s#]*$/.exec(line);
      if (m && m[1]) out.push(m[1]);
    }
  }
  return out.join('\n');
}
