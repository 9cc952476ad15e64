import { parseFrontmatter } from './frontmatter.js';
import { FIELD_ALIASES, ITEM_ID, taskFrontmatterSchema } from './schema.js';
import type { BacklogItem, Diagnostic, ItemType } from './types.js';

/** Extensions read as text resources; anything else under the root is ignored. */
export const TEXT_EXTENSIONS = new Set([
  'md',
  'mdx',
  'markdown',
  'txt',
  'text',
  'json',
  'jsonc',
  'yaml',
  'yml',
  'toml',
  'csv',
  'tsv',
  'rst',
  'adoc',
  'org',
  'html',
  'htm',
  'xml',
  'ini',
  'cfg',
  'conf',
  'log',
  'sql',
  'sh',
]);
const FRONTMATTER_EXTENSIONS = new Set(['md', 'mdx', 'markdown']);
export const RESOURCE_URI_PREFIX = 'mcp://backlog/';

export interface FileFacts {
  /** Relative to the backlog root, `/`-separated. */
  path: string;
  size: number;
  mtime_ms: number;
}

export interface ParseResult {
  item: BacklogItem | null;
  diagnostics: Diagnostic[];
}

export function resourceUri(path: string): string {
  return RESOURCE_URI_PREFIX + path;
}

export function fileType(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** Tasks and epics live in `tasks/` (any depth); every other text file is a resource. */
export function isTaskPath(path: string): boolean {
  return path.startsWith('tasks/') && FRONTMATTER_EXTENSIONS.has(fileType(path));
}

/** YAML gives dates as Date objects and numbers as numbers; we keep text as text. */
function asText(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map(asText).filter(Boolean).join(', ') || null;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function asList(value: unknown): string[] {
  if (value === null || value === undefined || value === '') return [];
  if (Array.isArray(value)) return value.map(asText).filter((v): v is string => v !== null);
  const text = asText(value);
  return text
    ? text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

function pick(fm: Record<string, unknown>, field: string): unknown {
  for (const name of FIELD_ALIASES[field] ?? [field]) if (fm[name] !== undefined) return fm[name];
  return undefined;
}

function firstHeading(body: string): string | null {
  const m = /^#\s+(.+?)\s*#*\s*$/m.exec(body);
  return m ? m[1].trim() : null;
}

function baseName(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** `TASK-0003-login.md` -> `TASK-0003`; Backlog.md's `task-12 - Title.md` -> `task-12`. */
function idFromFileName(path: string): string | null {
  const m = /^((?:task|epic)-\d+(?:\.\d+)*)/i.exec(baseName(path));
  return m ? m[1] : null;
}

const KNOWN_FIELDS = new Set([
  'id',
  'title',
  'type',
  'status',
  'author',
  'assignee',
  'priority',
  ...Object.values(FIELD_ALIASES).flat(),
]);

/**
 * Parses one file. Lenient: values outside our schema are kept as written and flagged; only a file
 * whose frontmatter cannot be parsed at all is skipped (reported, never rewritten).
 */
export function parseFile(facts: FileFacts, text: string): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const { path } = facts;
  const type = fileType(path);
  const flag = (
    code: string,
    message: string,
    level: Diagnostic['level'] = 'warning',
    line: number | null = null,
  ) => diagnostics.push({ level, path, line, code, message });

  let fm: Record<string, unknown> = {};
  let body = text;
  if (FRONTMATTER_EXTENSIONS.has(type)) {
    const parsed = parseFrontmatter(text);
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

  const isTask = isTaskPath(path);
  const folder = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  const title =
    asText(fm.title) ?? (FRONTMATTER_EXTENSIONS.has(type) ? firstHeading(body) : null) ?? baseName(path);
  let id: string;
  let itemType: ItemType = 'resource';
  if (isTask) {
    const written = asText(fm.id) ?? idFromFileName(path);
    if (!written) flag('missing_id', 'task has no id in frontmatter or file name; addressed by its path');
    id = written ?? resourceUri(path);
    const declared = asText(fm.type)?.toLowerCase();
    itemType = declared === 'epic' || (!declared && /^epic-/i.test(id)) ? 'epic' : 'task';
    checkTaskSchema(fm, flag);
  } else {
    id = resourceUri(path);
  }

  const extra: string[] = [];
  for (const [key, value] of Object.entries(fm)) {
    if (!KNOWN_FIELDS.has(key)) {
      const t = asText(value);
      if (t) extra.push(t);
    }
  }

  const item: BacklogItem = {
    id,
    type: itemType,
    title,
    status: asText(fm.status),
    parent_id: asText(pick(fm, 'parent_id')),
    tags: asList(pick(fm, 'tags')),
    author: asText(fm.author),
    assignee: asText(fm.assignee),
    priority: asText(fm.priority),
    references: asList(pick(fm, 'references')),
    created_at: asText(pick(fm, 'created_at')),
    updated_at: asText(pick(fm, 'updated_at')),
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

/** Flags each value of a task's frontmatter that is outside our schema. */
function checkTaskSchema(fm: Record<string, unknown>, flag: (code: string, message: string) => void): void {
  // Dates come from YAML as Date objects; compare them as the ISO text we would write.
  const normalized: Record<string, unknown> = { ...fm };
  for (const key of ['created_at', 'updated_at'])
    if (fm[key] instanceof Date) normalized[key] = asText(fm[key]);
  const result = taskFrontmatterSchema.safeParse(normalized);
  if (result.success) return;
  for (const issue of result.error.issues) {
    const field = issue.path.join('.') || 'frontmatter';
    const value = field in fm ? JSON.stringify(asText(fm[field])) : 'missing';
    flag(`invalid_${field}`, `${field} ${value} is outside the schema (${issue.message}); kept as written`);
  }
}

export { ITEM_ID };

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * Characters of `text` that hold its first `maxWords` words (the whole length when it has no more).
 * A word needs at least two characters with its separator, so short texts are not scanned at all.
 */
export function lengthWithinWords(text: string, maxWords: number): number {
  if (text.length <= maxWords * 2) return text.length;
  WORD.lastIndex = 0;
  let words = 0;
  for (let m = WORD.exec(text); m; m = WORD.exec(text)) {
    if (++words > maxWords) return m.index;
  }
  return text.length;
}
