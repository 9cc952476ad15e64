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
 * This module is the only one that imports gray-matter (eslint enforces it). It also edits front matter
 * for writes (`editFrontMatter`): only the keys a write names change, the rest of the file stays as written.
 */
import matter from 'gray-matter';
import { Document, isMap, isScalar, isSeq, parse as parseYaml, parseDocument, Scalar } from 'yaml';

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
function parseYamlSafely(crlfBlock: string): unknown {
  // gray-matter leaves the `\r` of a CRLF file's last front matter line on the block.
  const block = crlfBlock.endsWith('\r') ? crlfBlock.slice(0, -1) : crlfBlock;
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

function parseJsonSafely(crlfBlock: string): unknown {
  const block = crlfBlock.endsWith('\r') ? crlfBlock.slice(0, -1) : crlfBlock;
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
export function stringifyFrontmatter(
  data: Record<string, unknown>,
  content: string,
  { foldLongLines = false }: { foldLongLines?: boolean } = {},
): string {
  // lineWidth -1: js-yaml would otherwise fold long titles over several lines (Backlog.md lets it: its
  // files are written with js-yaml's defaults, and `foldLongLines` writes as it does).
  return matter.stringify({ content }, data, {
    engines: ENGINES,
    ...(foldLongLines ? {} : { lineWidth: -1 }),
  } as never);
}

// ---------------------------------------------------------------------------------------------
// Minimal edits

/**
 * Changes to front matter, in order: a value sets the key (where it is, or at the end of the block when it
 * is new); `undefined` or `null` removes it. Values are what writes produce: strings, numbers, booleans,
 * lists of strings.
 */
export type FrontMatterChanges = ReadonlyArray<readonly [key: string, value: unknown]>;

/** The front matter block of `text` as offsets: [start, end) of the block between the delimiter lines. */
interface BlockSpan {
  bom: string;
  language: string;
  eol: string;
  start: number;
  end: number;
}

function findBlock(text: string): BlockSpan | null {
  const bom = text.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
  const open = /^---([^\r\n-][^\r\n]*|)(\r?\n)/.exec(text.slice(bom.length));
  if (!open) return null;
  const start = bom.length + open[0].length;
  const eol = open[2];
  if (text.startsWith('---', start))
    return { bom, language: open[1].trim().toLowerCase(), eol, start, end: start };
  const close = /\r?\n---[^\r\n]*(?:\r?\n|$)/g;
  close.lastIndex = start;
  const m = close.exec(text);
  if (!m) return null;
  return { bom, language: open[1].trim().toLowerCase(), eol, start, end: m.index };
}

/** One `key: value` pair as YAML text in the style of the node it replaces (quotes, flow or block list, indent). */
function renderPair(key: string, value: unknown, like: unknown, indent: number): string {
  const doc = new Document({ [key]: value }, { schema: 'core' });
  const node = (doc.contents as { items: { value: unknown }[] }).items[0].value;
  if (isScalar(node) && isScalar(like) && typeof value === 'string' && like.type) node.type = like.type;
  if (isSeq(node)) node.flow = isSeq(like) ? Boolean(like.flow) : !like;
  return doc
    .toString({
      lineWidth: 0,
      flowCollectionPadding: false,
      indent: indent > 0 ? indent : 2,
      indentSeq: indent > 0,
    })
    .replace(/\n$/, '');
}

/** Column of the first item of a block list relative to its key, for lists rewritten in place. */
function seqIndent(block: string, keyStart: number, seqStart: number): number {
  const keyCol = keyStart - (block.lastIndexOf('\n', keyStart - 1) + 1);
  const seqCol = seqStart - (block.lastIndexOf('\n', seqStart - 1) + 1);
  return Math.max(0, seqCol - keyCol);
}

function editYamlBlock(block: string, changes: FrontMatterChanges, eol: string): string | null {
  const doc = parseDocument(block, { schema: 'core', keepSourceTokens: false });
  if (doc.errors.length) return null;
  const map = doc.contents;
  if (map !== null && (!isMap(map) || map.flow)) return null;
  let out = block;
  // Edits from the end of the block backwards keep earlier offsets valid; new keys go last.
  const edits: { from: number; to: number; text: string }[] = [];
  const added: string[] = [];
  for (const [key, value] of changes) {
    const pair = map?.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
    const remove = value === undefined || value === null;
    if (!pair) {
      if (!remove) added.push(renderPair(key, value, undefined, 2));
      continue;
    }
    const keyNode = pair.key as Scalar;
    const [from] = keyNode.range!;
    const valueNode = pair.value as { range?: [number, number, number] } | null;
    let to = valueNode?.range ? valueNode.range[1] : keyNode.range![1];
    if (remove) {
      const lineStart = block.lastIndexOf('\n', from - 1) + 1;
      const lineEnd =
        block[to - 1] === '\n'
          ? to
          : block.indexOf('\n', to) < 0
            ? block.length
            : block.indexOf('\n', to) + 1;
      edits.push({ from: lineStart, to: lineEnd, text: '' });
      continue;
    }
    const endsLine = block[to - 1] === '\n';
    if (endsLine) to -= block[to - 2] === '\r' ? 2 : 1;
    const indent =
      isSeq(pair.value) && !pair.value.flow && valueNode?.range
        ? seqIndent(block, from, valueNode.range[0])
        : 2;
    const keyText = block.slice(keyNode.range![0], keyNode.range![1]);
    let text = renderPair(key, value, pair.value, indent);
    // Keep the key exactly as written (quoted or not).
    text = keyText + text.slice(text.indexOf(':'));
    edits.push({ from, to, text });
  }
  edits.sort((a, b) => b.from - a.from);
  for (const e of edits) out = out.slice(0, e.from) + e.text.replace(/\r?\n/g, eol) + out.slice(e.to);
  if (added.length) {
    const text = added.join('\n').replace(/\n/g, eol);
    out = out === '' ? text : out.endsWith('\n') ? out + text : out + eol + text;
  }
  return out;
}

/**
 * Applies `changes` to the front matter of `text` and returns the new text, changing nothing else: YAML
 * comments, the order and style of other keys (quotes, `2026-01-01` dates, flow or block lists,
 * indentation), a byte order mark, the line endings (CRLF stays CRLF) and the body are kept byte for
 * byte. A changed key keeps its place, its quoting and list style; a new key goes at the end of the
 * block; a removed key loses its lines. A file without front matter gets a block. JSON front matter is
 * re-serialized (JSON has no comments to keep). YAML that does not parse, or a block that is one flow
 * map, is re-serialized from `data` as a last resort (callers refuse unparseable front matter first).
 */
export function editFrontMatter(text: string, changes: FrontMatterChanges): string {
  const span = findBlock(text);
  if (!span) {
    const bom = text.charCodeAt(0) === 0xfeff ? '\ufeff' : '';
    const body = text.slice(bom.length);
    const eol = /\r\n/.test(body) ? '\r\n' : '\n';
    const block = editYamlBlock('', changes, eol) ?? '';
    return `${bom}---${eol}${block}${eol}---${eol}${body}`;
  }
  const block = text.slice(span.start, span.end);
  const before = text.slice(0, span.start);
  const after = text.slice(span.end);
  if (span.language === 'json') {
    const data = { ...(parseFrontmatter(text).data as Record<string, unknown>) };
    for (const [k, v] of changes)
      if (v === undefined || v === null) delete data[k];
      else data[k] = v;
    return before + JSON.stringify(data, null, 2).replace(/\n/g, span.eol) + after;
  }
  const edited = editYamlBlock(block, changes, span.eol);
  if (edited !== null) return before + edited + (block === '' && edited !== '' ? span.eol : '') + after;
  const data = { ...parseFrontmatter(text).data };
  for (const [k, v] of changes)
    if (v === undefined || v === null) delete data[k];
    else data[k] = v;
  return span.bom + stringifyFrontmatter(data, parseFrontmatter(text).content);
}
