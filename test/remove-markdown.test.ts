import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import packageRemoveMarkdown from 'remove-markdown';
import { describe, expect, it } from 'vitest';
import { removeMarkdown } from '../src/search/remove-markdown.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FULL_FOLDER = join(ROOT, '..', 'shared', 'eval', 'backlog-md');
/** What snippets called before (src/search/snippet.ts). */
const reference = (md: string) => packageRemoveMarkdown(md, { gfm: true, useImgAltText: true });

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...markdownFiles(path));
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('removeMarkdown (remove-markdown with guards)', () => {
  it('equals the package on generated markdown made of the characters its expressions look for', () => {
    const pieces = [
      '[',
      ']',
      '(',
      ')',
      '!',
      '^',
      ': ',
      '*',
      '_',
      '`',
      '```',
      '~',
      '~~~',
      '#',
      '>',
      '<',
      '=',
      '-',
      ' ',
      '  ',
      '\n',
      '\t',
      'a',
      'word',
      '1.',
      '+',
      'x]: y',
      '](',
      '] (',
      '[^1]',
      '<b>',
      '\n==',
      '---',
      '\u00a0',
    ];
    const rand = rng(3);
    let changed = 0;
    for (let n = 0; n < 20000; n++) {
      let md = '';
      const len = Math.floor(rand() * 30);
      for (let i = 0; i < len; i++) md += pieces[Math.floor(rand() * pieces.length)];
      const want = reference(md);
      expect(removeMarkdown(md), JSON.stringify(md)).toBe(want);
      if (want !== md) changed++;
    }
    // The inputs exercised the expressions (most were changed by them).
    expect(changed).toBeGreaterThan(10000);
  });

  it("equals the package on this repository's markdown", () => {
    const files = [...markdownFiles(join(ROOT, 'docs')), ...markdownFiles(join(ROOT, 'demo'))];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const md = readFileSync(file, 'utf8');
      expect(removeMarkdown(md), file).toBe(reference(md));
    }
  });

  it.skipIf(!existsSync(FULL_FOLDER))(
    "equals the package on every file of the Backlog.md project's backlog",
    () => {
      const files = markdownFiles(FULL_FOLDER);
      expect(files.length).toBeGreaterThan(600);
      for (const file of files) {
        const md = readFileSync(file, 'utf8');
        expect(removeMarkdown(md), file).toBe(reference(md));
      }
    },
  );
});
