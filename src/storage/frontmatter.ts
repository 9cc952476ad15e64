/**
 * Front matter, parsed as data and nothing else. Backlog files are untrusted (they arrive with a
 * `git pull`, and agents write them), so:
 *
 * - only YAML (`---`, `---yaml`, `---yml`) and JSON (`---json`) are read. gray-matter would evaluate
 *   `---js` / `---javascript` blocks with `eval`; every other language is refused here before
 *   gray-matter sees the text, and gray-matter's own engines are replaced as a second guard;
 * - YAML goes through the `yaml` package with limits: aliases (a 325-byte "billion laughs" block
 *   otherwise expands to gigabytes), nesting depth, total nodes and the size of the block.
 *
 * This module is the only one that imports gray-matter (eslint enforces it).
 */
import matter from 'gray-matter';
import { parse as parseYaml } from 'yaml';

/** Limits on one front matter block; a block over any of them is an error, never an outage. */
export const FRONTMATTER_LIMITS = {
  /** Characters of the block between the delimiters (real front matter is well under 4 KB). */
  maxChars: 64 * 1024,
  /** Alias expansions YAML may make (the `yaml` package counts the nodes each alias brings in). */
  maxAliasCount: 100,
  /** Nesting of maps and lists. */
  maxDepth: 32,
  /** Values in the parsed data, aliases counted as often as they are used. */
  maxNodes: 20_000,
};

export type FrontmatterErrorCode =
  | 'frontmatter_language_refused'
  | 'frontmatter_unparseable'
  | 'frontmatter_too_complex'
  | 'frontmatter_too_large';

export interface FrontmatterError {
  code: FrontmatterErrorCode;
  message: string;
  /** 1-based line of the file (the opening `---` is line 1), when known. */
  line: number | null;
}

export interface ParsedFrontmatter {
  /** The front matter as data; `{}` when there is none or it could not be read. */
  data: Record<string, unknown>;
  /** The text after the front matter; the whole text when the block was refused. */
  content: string;
  /** The raw block between the delimiters ('' when there is none). */
  block: string;
  error?: FrontmatterError;
}

/** Languages read after the opening `---`; anything else is refused. */
const READABLE = new Set(['', 'yaml', 'yml', 'json']);

class LimitError extends Error {
  constructor(
    readonly code: 'frontmatter_too_complex' | 'frontmatter_too_large',
    message: string,
  ) {
    super(message);
  }
}

function refuse(): never {
  throw new LimitError('frontmatter_too_complex', 'only YAML and JSON front matter are read');
}

/** YAML 1.2 core schema plus timestamps and merge keys: the values js-yaml's safe schema gave. */
function parseYamlSafely(block: string): unknown {
  checkSize(block);
  try {
    return checkShape(
      parseYaml(block, {
        schema: 'core',
        customTags: ['timestamp'],
        merge: true,
        maxAliasCount: FRONTMATTER_LIMITS.maxAliasCount,
      }),
    );
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message))
      throw new LimitError(
        'frontmatter_too_complex',
        'too many YAML aliases (a resource exhaustion attack?)',
      );
    if (err instanceof RangeError)
      throw new LimitError('frontmatter_too_complex', 'front matter nested too deeply to read');
    throw err;
  }
}

function parseJsonSafely(block: string): unknown {
  checkSize(block);
  return checkShape(JSON.parse(block));
}

function checkSize(block: string): void {
  if (block.length > FRONTMATTER_LIMITS.maxChars)
    throw new LimitError(
      'frontmatter_too_large',
      `front matter of ${block.length} characters is over the ${FRONTMATTER_LIMITS.maxChars}-character limit`,
    );
}

/** Walks the parsed value once, within the depth and node limits (aliases count each time they are used). */
function checkShape(value: unknown): unknown {
  let nodes = 0;
  const walk = (v: unknown, depth: number): void => {
    if (++nodes > FRONTMATTER_LIMITS.maxNodes)
      throw new LimitError(
        'frontmatter_too_complex',
        `front matter has over ${FRONTMATTER_LIMITS.maxNodes} values`,
      );
    if (v === null || typeof v !== 'object' || v instanceof Date) return;
    if (depth >= FRONTMATTER_LIMITS.maxDepth)
      throw new LimitError(
        'frontmatter_too_complex',
        `front matter is nested over ${FRONTMATTER_LIMITS.maxDepth} levels deep`,
      );
    for (const child of Array.isArray(v) ? v : Object.values(v)) walk(child, depth + 1);
  };
  walk(value, 0);
  return value;
}

type Engine = { stringify: (data: object, options?: object) => string };
/** gray-matter's default engines (typed here: its .d.ts leaves them out). */
const DEFAULT_ENGINES = (matter as unknown as { engines: Record<'yaml' | 'json', Engine> }).engines;

/** gray-matter's engines, every one replaced: YAML and JSON with limits, the rest refused. */
const ENGINES = {
  // Writing YAML runs no code: js-yaml's safeDump, as before.
  yaml: { parse: parseYamlSafely, stringify: DEFAULT_ENGINES.yaml.stringify },
  json: { parse: parseJsonSafely, stringify: DEFAULT_ENGINES.json.stringify },
  javascript: { parse: refuse, stringify: refuse },
  js: { parse: refuse, stringify: refuse },
  coffee: { parse: refuse, stringify: refuse },
};

/** The language named after the opening `---` (`---js` -> `js`), or null when there is no front matter. */
function openingLanguage(withBom: string): string | null {
  const text = withBom.charCodeAt(0) === 0xfeff ? withBom.slice(1) : withBom;
  if (!text.startsWith('---') || text[3] === '-') return null;
  const eol = text.search(/\r?\n/);
  return (eol < 0 ? text.slice(3) : text.slice(3, eol)).trim().toLowerCase();
}

/**
 * Where the `yaml` package's error points, as a 1-based line of the file: gray-matter hands it the
 * block with the newline that ends the opening `---`, so the block's lines are the file's.
 */
function errorLine(err: unknown): number | null {
  const pos = (err as { linePos?: { line: number }[] }).linePos;
  return typeof pos?.[0]?.line === 'number' ? pos[0].line : null;
}

/**
 * Splits `text` into front matter and content. Never throws and never runs code: a block that is
 * refused, unreadable or over a limit comes back as `error`, with `data` empty. `prepareYaml` may
 * rewrite a YAML block before it is parsed, line for line (a backlog format's own reading rules).
 */
export function parseFrontmatter(text: string, prepareYaml?: (block: string) => string): ParsedFrontmatter {
  const language = openingLanguage(text);
  if (language === null) return { data: {}, content: text, block: '' };
  if (!READABLE.has(language))
    return {
      data: {},
      content: text,
      block: '',
      error: {
        code: 'frontmatter_language_refused',
        message: `front matter in "${language}" is never evaluated (only YAML and JSON are read); the file is indexed as plain text`,
        line: 1,
      },
    };
  let parsed: { data: unknown; content: string; matter?: string };
  try {
    // Options bypass gray-matter's module-level cache, which would keep every file forever.
    const engines = prepareYaml
      ? {
          ...ENGINES,
          yaml: { ...ENGINES.yaml, parse: (block: string) => parseYamlSafely(prepareYaml(block)) },
        }
      : ENGINES;
    parsed = matter(text, { engines, excerpt: false } as never);
  } catch (err) {
    const block = rawBlock(text);
    if (err instanceof LimitError)
      return {
        data: {},
        content: block.content,
        block: block.block,
        error: { code: err.code, message: err.message, line: null },
      };
    const reason = (err as Error).message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    return {
      data: {},
      content: block.content,
      block: block.block,
      error: { code: 'frontmatter_unparseable', message: reason, line: errorLine(err) },
    };
  }
  const data =
    parsed.data && typeof parsed.data === 'object' && !Array.isArray(parsed.data)
      ? (parsed.data as Record<string, unknown>)
      : {};
  return { data, content: parsed.content, block: parsed.matter ?? '' };
}

/** The block and the content as gray-matter splits them, for a block that did not parse. */
function rawBlock(withBom: string): { block: string; content: string } {
  const text = withBom.charCodeAt(0) === 0xfeff ? withBom.slice(1) : withBom;
  const m = /^---[^\r\n]*\r?\n([\s\S]*?)(?:\r?\n---[^\r\n]*(?:\r?\n|$)|$)/.exec(text);
  if (!m) return { block: '', content: text };
  return { block: m[1], content: text.slice(m[0].length) };
}

/**
 * A YAML file read as data (a backlog's config.yml), with the same limits as front matter. Never
 * throws: a file that is not a YAML map, or over a limit, comes back as `error`.
 */
export function parseYamlFile(text: string): { data: Record<string, unknown>; error?: string } {
  try {
    const data = parseYamlSafely(text);
    if (data === null || data === undefined) return { data: {} };
    if (typeof data !== 'object' || Array.isArray(data) || data instanceof Date)
      return { data: {}, error: 'not a map of settings' };
    return { data: data as Record<string, unknown> };
  } catch (err) {
    return { data: {}, error: (err as Error).message.split('\n')[0] };
  }
}

/** Front matter and content as a file (YAML), for writes. */
export function stringifyFrontmatter(data: Record<string, unknown>, content: string): string {
  // lineWidth -1: js-yaml would otherwise fold long titles over several lines.
  return matter.stringify({ content }, data, { engines: ENGINES, lineWidth: -1 } as never);
}
