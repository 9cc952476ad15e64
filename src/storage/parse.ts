/**
 * Files and their URIs. Reading a file into an item is parse-file.ts, loaded only when a file is read
 * (issue #23: it brings the front matter's YAML parser and zod).
 */
import { fileType } from './file-names.js';
import { ITEM_ID } from './schema.js';
import type { BacklogItem, Diagnostic } from './types.js';

export { fileType };

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

/**
 * The URI of a file, `mcp://backlog/<path>`: the one spelling every surface returns. Characters that
 * cannot stand in a URI (spaces, `%`, `#`, `?`, quotes, brackets, controls) are %-encoded; letters
 * of any script stay as written, so `docs/заметки.md` stays readable.
 */
export function resourceUri(path: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what must be encoded
  return RESOURCE_URI_PREFIX + path.replace(/[\s%#?"<>\\^`{|}[\]\u0000-\u001f\u007f]/g, encodeURIComponent);
}

/** The path a URI names (`mcp://backlog/a%20b.md` -> `a b.md`); a malformed %-escape is kept as written. */
export function pathOfUri(uri: string): string {
  const path = uri.startsWith(RESOURCE_URI_PREFIX) ? uri.slice(RESOURCE_URI_PREFIX.length) : uri;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export { ITEM_ID };

// Made on first use, as the other Unicode property escapes (search/tokenizer.ts: compiled when first evaluated).
let word: RegExp | undefined;

/**
 * Characters of `text` that hold its first `maxWords` words (the whole length when it has no more).
 * A word needs at least two characters with its separator, so short texts are not scanned at all.
 */
export function lengthWithinWords(text: string, maxWords: number): number {
  if (text.length <= maxWords * 2) return text.length;
  const re = (word ??= /[\p{L}\p{N}\p{M}]+/gu);
  re.lastIndex = 0;
  let words = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (++words > maxWords) return m.index;
  }
  return text.length;
}
export { isNativeTaskPath as isTaskPath } from './formats/native.js';
