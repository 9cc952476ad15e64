import { describe, expect, test } from 'vitest';
import { chunkOptionsFor, chunkText, DEFAULT_CHUNK_OPTIONS } from '../src/embeddings/chunk.js';

const words = (n: number, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
const bodyOf = (text: string, title: string, heading = '') =>
  text
    .slice(title.length + 1 + (heading ? heading.length + 1 : 0))
    .split(' ')
    .filter(Boolean);

describe('chunkText', () => {
  test('a short document is one chunk that starts with the title', () => {
    const chunks = chunkText('Fix login', 'Users cannot sign in after a reset.');
    expect(chunks).toEqual([
      {
        index: 0,
        text: 'Fix login\nUsers cannot sign in after a reset.',
        heading: '',
        wordStart: 0,
        wordCount: 7,
      },
    ]);
    expect(chunkText('Only a title', '')).toMatchObject([{ text: 'Only a title', wordCount: 0 }]);
    expect(chunkText('Title', '## Notes\n\nshort')[0].text).toBe('Title\nNotes short');
  });

  test('a long section is cut into windows of maxWords overlapping by overlap', () => {
    const chunks = chunkText('T', words(450), { maxWords: 200, overlap: 40 });
    expect(chunks.map((c) => [c.wordStart, c.wordCount])).toEqual([
      [0, 200],
      [160, 200],
      [320, 130],
    ]);
    const [a, b] = chunks.map((c) => bodyOf(c.text, 'T'));
    expect(a.slice(160)).toEqual(b.slice(0, 40));
    expect(chunks.every((c) => c.text.startsWith('T\n'))).toBe(true);
  });

  test('headings split first; short sections are packed; windows carry their heading', () => {
    const body = [
      'intro words here',
      '## Description',
      words(30, 'd'),
      '## Acceptance Criteria',
      words(30, 'a'),
      '## Implementation Notes',
      words(250, 'n'),
      '### Tail',
      words(10, 't'),
    ].join('\n');
    const chunks = chunkText('Task title', body, { maxWords: 100, overlap: 20 });
    expect(chunks.map((c) => c.heading)).toEqual([
      '',
      'Implementation Notes',
      'Implementation Notes',
      'Implementation Notes',
      'Tail',
    ]);
    // Intro, Description and Acceptance Criteria fit in one chunk, later headings inline.
    expect(chunks[0].text).toContain('intro words here Description d0');
    expect(chunks[0].text).toContain('Acceptance Criteria a0');
    expect(chunks[1].text.startsWith('Task title\nImplementation Notes\nn0 ')).toBe(true);
    expect(chunks[4].text).toBe(`Task title\nTail\n${words(10, 't')}`);
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
  });

  test('every body word lands in some chunk', () => {
    const body = Array.from({ length: 7 }, (_, s) => `# Part ${s}\n${words(40 + s * 37, `p${s}x`)}`).join(
      '\n\n',
    );
    const chunks = chunkText('Doc', body, { maxWords: 60, overlap: 10 });
    const seen = new Set(chunks.flatMap((c) => c.text.split(/\s+/)));
    for (const w of body.split(/\s+/)) if (w !== '#') expect(seen.has(w)).toBe(true);
    expect(chunks.every((c) => c.wordCount <= 60)).toBe(true);
  });

  test('markdown noise goes: comments, link targets, list and emphasis markers; code fences hide headings', () => {
    const body = [
      '<!-- SECTION:DESCRIPTION:BEGIN -->',
      'See [the docs](https://example.com/x) and **bold** `code` _em_ feature_store.',
      '- [ ] #1 first criterion',
      '```',
      '# not a heading',
      '```',
      '<!-- SECTION:DESCRIPTION:END -->',
    ].join('\n');
    const [c] = chunkText('T', body);
    expect(c.text).toBe('T\nSee the docs and bold code em feature_store. #1 first criterion # not a heading');
  });

  test('deterministic, and capped at maxChunks', () => {
    const body = `# A\n${words(500)}\n# B\n${words(300, 'b')}`;
    expect(chunkText('T', body)).toEqual(chunkText('T', body));
    expect(chunkText('T', body, { maxWords: 20, overlap: 5, maxChunks: 3 })).toHaveLength(3);
  });

  test('chunk sizes follow the model: 128 tokens -> 70 words, 512 -> 200', () => {
    expect(chunkOptionsFor({ maxTokens: 128 })).toEqual({ maxWords: 70, overlap: 14, maxChunks: 64 });
    expect(chunkOptionsFor({ maxTokens: 512 })).toEqual({ maxWords: 200, overlap: 40, maxChunks: 64 });
    expect(chunkOptionsFor({})).toEqual(DEFAULT_CHUNK_OPTIONS);
  });
});
