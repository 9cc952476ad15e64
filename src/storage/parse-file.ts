/**
 * A file read into a BacklogItem, as its format reads it. Loaded when a file is first read
 * (storage/backlog-store.ts's loadFile): a command that answers from the cache never loads it, nor the
 * front matter's YAML parser and zod it brings (issue #23).
 */
import { FRONTMATTER_EXTENSIONS, baseName, fileType } from './file-names.js';
import { nativeFormat } from './formats/native.js';
import type { BacklogFormat, Flag } from './formats/types.js';
import { parseFrontmatter } from './frontmatter.js';
import { resourceUri, type FileFacts, type ParseResult } from './parse.js';
import { FIELD_ALIASES } from './schema.js';
import type { BacklogItem, Diagnostic, ItemType } from './types.js';
import { asList, asText } from './values.js';

function firstHeading(body: string): string | null {
  const m = /^#\s+(.+?)\s*#*\s*$/m.exec(body);
  return m ? m[1].trim() : null;
}

function pick(fm: Record<string, unknown>, field: string): unknown {
  for (const name of FIELD_ALIASES[field] ?? [field]) if (fm[name] !== undefined) return fm[name];
  return undefined;
}

/**
 * Parses one file as `format` reads it. Lenient: values outside the format's schema are kept as
 * written and flagged; a file whose front matter cannot be parsed is reported and still indexed from a
 * line-by-line reading (never rewritten). Returns no item for a file the format does not index.
 */
export function parseFile(facts: FileFacts, text: string, format: BacklogFormat = nativeFormat): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const { path } = facts;
  const role = format.roleOf(path);
  if (!role) return { item: null, diagnostics };
  const type = fileType(path);
  const flag: Flag = (code, message, level = 'warning', line = null) =>
    diagnostics.push({ level, path, line, code, message });

  let fm: Record<string, unknown> = {};
  let body = text;
  if (FRONTMATTER_EXTENSIONS.has(type)) {
    const parsed = parseFrontmatter(text, format.prepareFrontmatter);
    fm = parsed.data;
    body = parsed.content;
    const error = parsed.error;
    if (error?.code === 'frontmatter_language_refused') {
      flag(error.code, error.message, 'error', error.line);
    } else if (error) {
      // The file stays searchable: its front matter is read line by line (`key: value`), nothing else.
      flag(
        error.code,
        `${error.code === 'frontmatter_unparseable' ? 'frontmatter is not valid YAML' : 'frontmatter not read'} (${error.message}); indexed from a line-by-line reading, file left as written`,
        'error',
        error.line,
      );
      fm = readFrontmatterLines(parsed.block);
    }
  }

  const folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  const title =
    asText(fm.title) ?? (FRONTMATTER_EXTENSIONS.has(type) ? firstHeading(body) : null) ?? baseName(path);
  let id: string;
  let itemType: ItemType = role.type;
  if (role.type === 'task') {
    const written = asText(fm.id) ?? format.idFromFileName(path);
    if (!written) flag('missing_id', 'task has no id in frontmatter or file name; addressed by its path');
    id = written ?? resourceUri(path);
    if (format.isEpic(fm, id)) itemType = 'epic';
    format.checkTask(fm, flag);
  } else {
    // Backlog.md's documents, decisions and milestones carry ids of their own (`doc-001`, `m-6`).
    id = (role.type !== 'resource' && asText(fm.id)) || resourceUri(path);
  }

  const status = asText(fm.status);
  const item: BacklogItem = {
    id,
    type: itemType,
    state: role.state,
    title,
    status: status === null ? null : format.canonicalStatus(status),
    parent_id: asText(pick(fm, 'parent_id')),
    tags: asList(pick(fm, 'tags')),
    author: asText(pick(fm, 'author')),
    assignee: asText(fm.assignee),
    priority: asText(fm.priority),
    references: [...new Set(FIELD_ALIASES.references.flatMap((name) => asList(fm[name])))],
    created_at: format.dateText(pick(fm, 'created_at')),
    updated_at: format.dateText(pick(fm, 'updated_at')),
    body,
    path,
    folder,
    file_type: type,
    size: facts.size,
    mtime_ms: facts.mtime_ms,
    frontmatter: fm,
  };
  return { item, diagnostics };
}

/** Fallback for front matter that does not parse: its top-level `key: value` lines, quotes removed. */
function readFrontmatterLines(block: string): Record<string, unknown> {
  const fm: Record<string, unknown> = Object.create(null);
  for (const line of block.split(/\r?\n/)) {
    const kv = /^([A-Za-z_][\w-]*):\s*(.*?)\s*$/.exec(line);
    if (kv && kv[2]) fm[kv[1]] = kv[2].replace(/^(["'])(.*)\1$/, '$2');
  }
  return { ...fm };
}
