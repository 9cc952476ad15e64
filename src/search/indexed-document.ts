/** What the lexical index gives Orama per document: the text fields and the keys the filters match on. */
import { statusKey } from '../storage/ids.js';
import { folderChain } from './filters.js';
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
export interface IndexedDocument {
  id: string;
  title: string;
  tags: string;
  author: string;
  body: string;
  extra: string;
  headings: string;
  type?: string;
  status_key?: string;
  state?: string;
  tag_keys: string[];
  author_key?: string;
  lineage: string[];
  path?: string;
  folders: string[];
  file_type?: string;
  updated_ms: number;
  /** The language the document was analyzed in (LanguageMix.languageOf). */
  lang?: Language;
}

export function toIndexed(doc: SearchDocument): IndexedDocument {
  const lineage = [idKey(doc.id), ...(doc.ancestors ?? (doc.parent_id ? [doc.parent_id] : [])).map(idKey)];
  const out: IndexedDocument = {
    id: doc.id,
    title: doc.title ?? '',
    tags: (doc.tags ?? []).join(' \n '),
    author: doc.author ?? '',
    body: doc.body ?? '',
    extra: doc.extra ?? '',
    headings: headingsOf(doc.body ?? ''),
    tag_keys: (doc.tags ?? []).map((t) => t.toLowerCase()),
    lineage,
    folders: folderChain(doc.folder ?? ''),
    updated_ms: doc.updated_ms ?? 0,
  };
  if (doc.type) out.type = doc.type;
  if (doc.status) out.status_key = statusKey(doc.status);
  // Documents get `none`, so one filter can ask for "active tasks and every document" (list's default).
  out.state = doc.state ?? 'none';
  if (doc.author) out.author_key = doc.author.toLowerCase();
  if (doc.path) out.path = doc.path;
  if (doc.file_type) out.file_type = doc.file_type.toLowerCase();
  return out;
}

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
