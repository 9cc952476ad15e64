/**
 * A backlog's `config.yml` read as data, as `parseYamlFile` (frontmatter.ts) reads it, without loading
 * the `yaml` package for the files Backlog.md writes (issue #23: a one-shot command that answers from
 * its cache parses no other YAML, and the package is 250 KB of code to compile). Those files are flat:
 * `key: value` lines whose values are plain words, quoted strings without escapes, small integers and
 * flow lists of those. `readSimpleSettings` reads exactly that and returns undefined for anything else
 * (nesting, escapes, anchors, dates, floats, comments after a plain word, ...), which then goes to the
 * `yaml` package as before. test/settings-yaml.test.ts checks both readings agree.
 *
 * A start reads config.yml up to three times (its languages, its format at open and again at reload):
 * the last reading is kept, keyed by the file's text.
 */
import type { parseYamlFile } from './frontmatter.js';

type Parsed = ReturnType<typeof parseYamlFile>;

/** Keys as Backlog.md writes them; `__proto__` is left to the yaml package. */
const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*?))? *$/;
/**
 * A plain word in block context: starts with a letter (so never a number, date or YAML indicator), no
 * `#` (a comment) and no `: ` (a nested map), a `:` only inside it (`hh:mm`).
 */
const PLAIN = /^[A-Za-z](?:[A-Za-z0-9 _.,/()+'"-]|:(?=[^ ]))*$/;
/** A plain word inside `[...]`: no `,` `[` `]` `{` `}` either. */
const FLOW_PLAIN = /^[A-Za-z](?:[A-Za-z0-9 _./()+-]|:(?=[^ ,\]]))*$/;
/** A quoted string with nothing to unescape, then at most a comment. */
// eslint-disable-next-line no-control-regex -- control characters send the text to the yaml package
const DOUBLE = /^"([^"\\\x00-\x1f\x7f]*)"(?: +#.*)?$/;
// eslint-disable-next-line no-control-regex -- control characters send the text to the yaml package
const SINGLE = /^'([^'\x00-\x1f\x7f]*)'(?: +#.*)?$/;
const FLOW = /^\[([^[\]{}#]*)\](?: +#.*)?$/;
const INT = /^(?:0|[1-9][0-9]{0,14})(?: +#.*)?$/;
/** Bounds the fast reading; larger files (none Backlog.md writes) go to the yaml package. */
const MAX_CHARS = 16 * 1024;

/** YAML 1.2 core schema for a plain word: null and booleans; anything else is the text. */
function word(text: string): unknown {
  const t = text.trimEnd();
  if (t === 'null' || t === 'Null' || t === 'NULL') return null;
  if (t === 'true' || t === 'True' || t === 'TRUE') return true;
  if (t === 'false' || t === 'False' || t === 'FALSE') return false;
  return t;
}

/** One item of a flow list, then its `,`: a quoted string (commas allowed inside) or a plain word. */
// eslint-disable-next-line no-control-regex -- control characters send the text to the yaml package
const FLOW_ITEM = / *(?:"([^"\\\x00-\x1f\x7f]*)"|'([^'\x00-\x1f\x7f]*)'|([^,"']*?)) *(,|$)/y;

function flowList(inner: string): unknown[] | undefined {
  const items: unknown[] = [];
  FLOW_ITEM.lastIndex = 0;
  for (;;) {
    const m = FLOW_ITEM.exec(inner);
    if (!m) return undefined;
    if (m[3] === undefined) items.push(m[1] ?? m[2]);
    else if (FLOW_PLAIN.test(m[3])) items.push(word(m[3]));
    else return undefined; // an empty item (`[a,,b]`, a trailing comma) or anything else
    if (m[4] === '') return FLOW_ITEM.lastIndex === inner.length ? items : undefined;
  }
}

function value(raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return null;
  let m = DOUBLE.exec(raw) ?? SINGLE.exec(raw);
  if (m) return m[1];
  if (INT.test(raw)) return Number.parseInt(raw, 10);
  m = FLOW.exec(raw);
  if (m) {
    return m[1].trim() === '' ? [] : flowList(m[1]);
  }
  return PLAIN.test(raw) ? word(raw) : undefined;
}

/** The data of a flat config.yml, or undefined when the yaml package must read it. */
export function readSimpleSettings(text: string): Record<string, unknown> | undefined {
  if (text.length > MAX_CHARS || /[\r\t\ufeff]/.test(text)) return undefined;
  const data: Record<string, unknown> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = KEY.exec(line);
    if (!m || m[1] === '__proto__' || Object.hasOwn(data, m[1])) return undefined;
    const v = value(m[2]);
    if (v === undefined) return undefined;
    data[m[1]] = v;
  }
  return data;
}

let last: { text: string; parsed: Parsed } | undefined;

/** `parseYamlFile(text)`: the flat reading when it applies, else the yaml package (loaded then). */
export async function parseSettingsFile(text: string): Promise<Parsed> {
  // A copy: a caller may change what it gets, and the next reading must not see that.
  if (last?.text === text) return structuredClone(last.parsed);
  const simple = readSimpleSettings(text);
  const parsed = simple ? { data: simple } : (await import('./frontmatter.js')).parseYamlFile(text);
  last = { text, parsed: structuredClone(parsed) };
  return parsed;
}
