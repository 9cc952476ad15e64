/** storage/frontmatter.ts: the one place front matter is parsed (YAML or JSON, with limits; nothing runs). */
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFrontmatter } from '../src/storage/frontmatter.js';

function planted(language: string, marker: string): string {
  return [
    `---${language}`,
    `{ title: (require("fs").writeFileSync(${JSON.stringify(marker)}, String(process.pid)), "t") }`,
    '---',
    'A document about narwhals.',
    '',
  ].join('\n');
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('parseFrontmatter', () => {
  it.each(['js', 'javascript', 'JavaScript', ' js', 'coffee', 'constructor', '__proto__', 'toml'])(
    'refuses ---%s and reads the file as plain text',
    async (language) => {
      const marker = join(tmpdir(), `PWNED-parse-${process.pid}-${language.trim()}`);
      const parsed = parseFrontmatter(planted(language, marker));
      expect(await exists(marker)).toBe(false);
      expect(parsed.error?.code).toBe('frontmatter_language_refused');
      expect(parsed.data).toEqual({});
      expect(parsed.content).toContain('writeFileSync');
    },
  );

  it('reads YAML (---, ---yaml, ---yml) and JSON (---json)', () => {
    expect(parseFrontmatter('---\ntitle: A\ntags: [x, y]\n---\nbody\n')).toMatchObject({
      data: { title: 'A', tags: ['x', 'y'] },
      content: 'body\n',
    });
    expect(parseFrontmatter('---yaml\ntitle: B\n---\n').data).toEqual({ title: 'B' });
    expect(parseFrontmatter('---yml\ntitle: C\n---\n').data).toEqual({ title: 'C' });
    expect(parseFrontmatter('---json\n{"title": "D"}\n---\n').data).toEqual({ title: 'D' });
    expect(parseFrontmatter('no front matter').data).toEqual({});
  });

  it('keeps the values js-yaml gave: dates as Dates, numbers, booleans, null', () => {
    const { data } = parseFrontmatter(
      '---\ncreated_at: 2026-02-03T09:00:00Z\nday: 2026-01-01\nn: 3\nok: true\nnone: null\nwhen: 2025-06-08 11:22\n---\n',
    );
    expect(data.created_at).toBeInstanceOf(Date);
    expect((data.created_at as Date).toISOString()).toBe('2026-02-03T09:00:00.000Z');
    expect(data.day).toBeInstanceOf(Date);
    expect(data).toMatchObject({ n: 3, ok: true, none: null, when: '2025-06-08 11:22' });
  });

  it('a YAML error keeps its line', () => {
    const parsed = parseFrontmatter('---\ntitle: A\nassignee: @someone\n---\nbody');
    expect(parsed.error).toMatchObject({ code: 'frontmatter_unparseable', line: 3 });
  });

  it('an alias bomb, deep nesting and an oversized block are errors with a code', () => {
    const bomb = [
      '---',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
      '---',
    ].join('\n');
    expect(parseFrontmatter(bomb).error?.code).toBe('frontmatter_too_complex');
    const deep = `---\nx: ${'['.repeat(200)}${']'.repeat(200)}\n---\nbody`;
    expect(parseFrontmatter(deep).error?.code).toBe('frontmatter_too_complex');
    const big = `---\ntitle: t\nnote: ${'x'.repeat(300_000)}\n---\nbody`;
    expect(parseFrontmatter(big).error?.code).toBe('frontmatter_too_large');
    // Ordinary aliases still work.
    expect(parseFrontmatter('---\nbase: &b [a, b]\ntags: *b\n---\n').data).toEqual({
      base: ['a', 'b'],
      tags: ['a', 'b'],
    });
  });
});
