import picocolors from 'picocolors';

export type Style = ReturnType<typeof picocolors.createColors>;

/** Text without styling: what pipes, files and `NO_COLOR` get. */
export const plain: Style = picocolors.createColors(false);

/**
 * Colour when `stream` is a terminal, unless NO_COLOR is set (no-color.org) or --no-color was passed;
 * FORCE_COLOR (not "0") turns it on anywhere. Decided here rather than by picocolors' own check, which
 * also colours piped output whenever `CI` is set.
 */
export function styleFor(
  stream: { isTTY?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  flag = true,
): Style {
  if (!flag || env.NO_COLOR) return plain;
  const force = env.FORCE_COLOR;
  const on = force !== undefined && force !== '' ? force !== '0' && force !== 'false' : Boolean(stream.isTTY);
  return picocolors.createColors(on && env.TERM !== 'dumb');
}

/**
 * File text made safe for a terminal: control characters (escape sequences among them, which a hostile
 * file could use to rewrite the screen) become spaces; `keepLines` keeps newlines and tabs.
 */
export function terminalSafe(text: string, keepLines = false): string {
  return text.replace(keepLines ? /(?![\n\t])\p{Cc}/gu : /\p{Cc}/gu, ' ');
}

let wordSegmenter: Intl.Segmenter | undefined;
/** Made on first use (~10 ms of a start that prints no highlight). */
const words = {
  segment: (text: string) =>
    (wordSegmenter ??= new Intl.Segmenter('en', { granularity: 'word' })).segment(text),
};
/** Scripts written without spaces: a word there is what the segmenter says, never cut to a prefix. */
let unspacedScript: RegExp | undefined; // made on first use (search/tokenizer.ts says why)
const fold = (w: string) => w.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
/** Words of the raw query language that are operators, not words to find. */
const OPERATORS = new Set(['AND', 'OR', 'NOT']);

/**
 * The query's words as stems to mark: folded, at least 2 characters (1 in unspaced scripts), longer words
 * cut to a prefix (`limiting` -> `limi`) since search matches stems; `-word` and operators are skipped.
 */
export function highlightStems(query: string): string[] {
  const stems = new Set<string>();
  for (const token of query.split(/\s+/)) {
    if (!token || token.startsWith('-') || OPERATORS.has(token)) continue;
    const value = token.replace(/^\w+:/, '');
    for (const s of words.segment(value)) {
      if (!s.isWordLike) continue;
      const w = fold(s.segment);
      const unspaced = (unspacedScript ??=
        /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}]/u).test(w);
      if (w.length < (unspaced ? 1 : 2)) continue;
      stems.add(unspaced || w.length < 5 ? w : w.slice(0, Math.max(4, w.length - 3)));
    }
  }
  return [...stems];
}

/** `text` with every word that begins with one of `stems` (compared folded) marked whole. */
export function highlight(text: string, stems: string[], mark: (word: string) => string): string {
  if (stems.length === 0) return text;
  let out = '';
  for (const s of words.segment(text)) {
    const w = s.isWordLike ? fold(s.segment) : '';
    out += w && stems.some((t) => w.startsWith(t)) ? mark(s.segment) : s.segment;
  }
  return out;
}
