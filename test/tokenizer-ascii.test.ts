import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOT_WORD, TextAnalyzer, partsOf, runMatches } from '../src/search/tokenizer.js';
import { BACKLOG_MD_DIR } from './helpers.js';

// A text of ASCII and NOT_WORD characters is cut into runs by an ASCII expression instead of RUN, whose
// Unicode classes cost a one-shot search ~10 ms to compile (issue #23): the runs must be the same.
const shape = (ms: RegExpExecArray[]) => ms.map((m) => [m.index, m[0], m[1], m[2], m[3]]);
const WORD_CHAR = /[\p{L}\p{M}\p{N}\u200C\u200D]/u;

/** Every character NOT_WORD matches: the BMP and the planes of emoji. */
function notWordCharacters(): string[] {
  const one = new RegExp(`^(?:${NOT_WORD.source})$`);
  const out: string[] = [];
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    if (one.test(c)) out.push(c);
  }
  return out;
}

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('runs of ASCII text', () => {
  const notWord = notWordCharacters();

  it('NOT_WORD holds no letter, mark, digit, ZWNJ or ZWJ (nor anything ASCII)', () => {
    expect(notWord.length).toBeGreaterThan(1000);
    expect(notWord.filter((c) => WORD_CHAR.test(c) || c.charCodeAt(0) < 0x80)).toEqual([]);
    // What the Backlog.md folder writes besides letters: arrows, check marks, dashes, quotes, box drawing, emoji.
    for (const c of [
      '→',
      '✅',
      '─',
      '—',
      '’',
      '│',
      '“',
      '‑',
      '█',
      '✓',
      '…',
      '🔴',
      '🟡',
      '😀',
      '📊',
      '×',
      '·',
      '«',
    ])
      expect(notWord, c).toContain(c);
  });

  it('are the runs RUN finds, offsets and groups included', () => {
    const rand = rng(7);
    // ASCII, NOT_WORD characters, and what must still go through RUN (letters, marks, ZWJ, FE0F, CJK).
    const alphabet = [
      ...'abcXYZ019-_. .,;:/()#*`\'"\n\t',
      ...notWord.filter((_, i) => i % 97 === 0),
      ...['é', 'Ω', 'ж', '\u0301', '\u200D', '\uFE0F', '漢', 'か', '²', 'ª'],
    ];
    const pieces = ['TASK-42', 'task-1.2.3', 'FeatureStore', 'sync_queue', 'rate-limit', 'HTTPServer', 'v2'];
    let ascii = 0;
    for (let n = 0; n < 3000; n++) {
      let text = '';
      const len = 1 + Math.floor(rand() * 40);
      for (let i = 0; i < len; i++)
        text +=
          rand() < 0.15
            ? pieces[Math.floor(rand() * pieces.length)]
            : alphabet[Math.floor(rand() * alphabet.length)];
      if (n % 3 === 0) text = text.replace(/\P{ASCII}/gu, ' '); // some wholly ASCII
      if (/^\p{ASCII}*$/u.test(text.replace(new RegExp(NOT_WORD.source, 'g'), ''))) ascii++;
      expect(shape(runMatches(text)), JSON.stringify(text)).toEqual(shape(runMatches(text, true)));
      for (const m of runMatches(text, true))
        if (m[3] === undefined) expect(partsOf(m[0]), m[0]).toEqual(partsOf(m[0], true));
    }
    // Both paths taken, each many times.
    expect(ascii).toBeGreaterThan(1000);
    expect(ascii).toBeLessThan(2000);
  });

  it("are RUN's on every file of the Backlog.md folder, and the analyzer's terms with them", () => {
    const texts: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (name.startsWith('.')) continue;
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.md')) texts.push(readFileSync(path, 'utf8'));
      }
    };
    walk(BACKLOG_MD_DIR);
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) expect(shape(runMatches(text))).toEqual(shape(runMatches(text, true)));
    // The analyzer over the same texts: terms and offsets as a fresh one gives them from a text RUN must read.
    const analyzer = new TextAnalyzer();
    const reference = new TextAnalyzer();
    for (const text of texts.slice(0, 60)) {
      const marked = `${text} é`; // one letter past ASCII: RUN reads it
      expect(analyzer.runs(text)).toEqual(reference.runs(marked).slice(0, -1));
    }
  });
});
