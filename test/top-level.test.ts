/**
 * Issue #23: what a module does when it is evaluated, every command pays, a `get` too. A regular expression
 * with a Unicode property escape (`\p{L}`) is compiled when its literal is first evaluated (V8 builds its
 * character sets from ICU then: ~0.1 s of CPU for the tokenizer's and the scripts' at a start), and the
 * first Intl object of a process loads ICU's list of locales; so neither is made at a module's top level,
 * only inside the function that first uses it. test/startup.test.ts checks the Intl objects at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The module's top-level declarations (from a line at column 0 to the next one), with their first line. */
function declarations(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | null = null;
  text.split('\n').forEach((l, i) => {
    if (/^[\s)\]}]/.test(l) || l === '') {
      if (current) current.text += `\n${l}`;
      return;
    }
    current = /^(export )?(const|let|var) /.test(l) ? { line: i + 1, text: l } : null;
    if (current) out.push(current);
  });
  return out;
}

/** Made when the declaration is evaluated (not inside a function it declares). */
const EAGER_UNICODE = /\/[^/\n]*\\p\{[^/\n]*\/[dgimsuvy]*|new RegExp\([\s\S]*\\p\{|new Intl\./;

describe('module top levels (issue #23)', () => {
  it('make no Unicode property escape and no Intl object when a module is evaluated', () => {
    const found: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      for (const d of declarations(readFileSync(file, 'utf8'))) {
        if (/=>|\bfunction\b/.test(d.text)) continue; // made when the function first runs
        if (EAGER_UNICODE.test(d.text)) found.push(`${relative(ROOT, file)}:${d.line}`);
      }
    }
    expect(found).toEqual([]);
  });
});
