import picomatch from 'picomatch';
import { statusKey } from '../storage/ids.js';
import { idKey } from './tokenizer.js';
import type { SearchFilters } from './types.js';

/** Orama `where` clause over the enum properties of the schema (see `SCHEMA` in orama-search-service). */
export type WhereClause = Record<string, { in?: string[]; containsAny?: string[] }>;

/** The enum fields of the index's schema (indexed-document.ts): what a document's `where` filters match on. */
export interface FilterKeys {
  type?: string;
  status_key?: string;
  state?: string;
  tag_keys: string[];
  author_key?: string;
  lineage: string[];
  path?: string;
  folders: string[];
  file_type?: string;
}

/** Folders a path lies in: `resources/adr/x.md` -> `['resources', 'resources/adr']`. */
export function folderChain(folder: string): string[] {
  if (!folder) return [];
  const parts = folder.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

export function normalizeFolder(folder: string): string {
  return folder
    .replace(/\\/g, '/')
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '');
}

const lower = (values: string[]) => values.map((v) => v.toLowerCase());

/** Backlog.md's kinds of document; `resource` (any file that is not a task) stands for them too. */
const DOCUMENT_KINDS = ['document', 'decision', 'milestone'];

/** `types` as the index matches them: `resource` is every kind of document, Backlog.md's included. */
export function withDocumentKinds(types: readonly string[]): string[] {
  return types.includes('resource') ? [...new Set([...types, ...DOCUMENT_KINDS])] : [...types];
}

/**
 * Builds the `where` clause. `path` globs are resolved against the known paths here (Orama has no
 * glob operator), so the clause stays a plain `in`. Returns `null` when a filter can match nothing.
 */
export function buildWhere(filters: SearchFilters, knownPaths: () => Iterable<string>): WhereClause | null {
  const where: WhereClause = {};
  if (filters.types?.length) where.type = { in: withDocumentKinds(filters.types) };
  if (filters.status?.length) where.status_key = { in: filters.status.map(statusKey) };
  if (filters.state?.length) where.state = { in: filters.state };
  if (filters.parent_id?.length) where.lineage = { containsAny: filters.parent_id.map(idKey) };
  if (filters.tags?.length) where.tag_keys = { containsAny: lower(filters.tags) };
  if (filters.author?.length) where.author_key = { in: lower(filters.author) };
  if (filters.file_type?.length)
    where.file_type = { in: lower(filters.file_type.map((t) => t.replace(/^\./, ''))) };
  if (filters.folder?.length) where.folders = { containsAny: filters.folder.map(normalizeFolder) };
  if (filters.path?.length) {
    const patterns = filters.path.map(normalizeFolder);
    const isMatch = picomatch(patterns, { dot: true });
    const matched = [...knownPaths()].filter((p) => isMatch(p));
    if (matched.length === 0) return null;
    where.path = { in: matched };
  }
  return where;
}

/**
 * Whether a document passes `where`: what the index's enum filters answer (`in`: its value is one of
 * them; `containsAny`: one of its values is), without the index (BacklogService.list). `keyOf` gives the
 * document's key of a field (indexed-document.ts filterKey), asked for the clauses' fields only.
 */
export function matchesWhere(
  keyOf: (field: keyof FilterKeys) => string | string[] | undefined,
  where: WhereClause,
): boolean {
  for (const field in where) {
    const clause = where[field];
    const value = keyOf(field as keyof FilterKeys);
    if (clause.in && !(typeof value === 'string' && clause.in.includes(value))) return false;
    if (clause.containsAny && !(Array.isArray(value) && value.some((v) => clause.containsAny!.includes(v))))
      return false;
  }
  return true;
}
