/**
 * config.yml read without the yaml package (src/storage/settings-yaml.ts): whenever the flat reading
 * answers, it is what the yaml package reads (`parseYamlFile`); anything it is not sure of goes there.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYamlFile } from '../src/storage/frontmatter.js';
import { parseSettingsFile, readSimpleSettings } from '../src/storage/settings-yaml.js';
import { BACKLOG_MD_FIXTURE, BACKLOG_MD_FULL, HAS_BACKLOG_MD_FULL } from './helpers.js';

/** The flat reading agrees with the yaml package, or declines. */
function agrees(text: string): boolean {
  const simple = readSimpleSettings(text);
  if (simple === undefined) return false;
  const full = parseYamlFile(text);
  expect(full.error, text).toBeUndefined();
  expect(simple, text).toStrictEqual(full.data);
  return true;
}

describe('config.yml without the yaml package (issue #23)', () => {
  it("reads Backlog.md's own config.yml as the yaml package does", async () => {
    const dirs = [BACKLOG_MD_FIXTURE, ...(HAS_BACKLOG_MD_FULL ? [BACKLOG_MD_FULL] : [])];
    for (const dir of dirs) expect(agrees(await readFile(join(dir, 'config.yml'), 'utf8'))).toBe(true);
  });

  it('reads the flat shapes Backlog.md writes', () => {
    for (const text of [
      '',
      '# only a comment\n',
      'project_name: "My project"\ndefault_status: "To Do"\n',
      "task_prefix: 'task'\nzero_padded_ids: 3\n",
      'statuses: ["To Do", "In Progress", "Done"]\nlabels: []\nmilestones: [ ]\n',
      'date_format: yyyy-mm-dd hh:mm\nauto_commit: false\nremote_operations: True\nx: null\ny:\n',
      'definition_of_done: ["tests pass, lint passes", \'docs (if any)\', plain words]\n',
      'languages: [english, japanese]\nlanguages_too: de, ja\n',
      'default_editor: "code --wait"  # a comment\nport: 6420 # another\n',
      'key:   \nother: value   \n',
    ])
      expect(agrees(text), text).toBe(true);
  });

  it('leaves everything else to the yaml package', () => {
    for (const text of [
      'prefixes:\n  task: back\n', // nesting
      'a: "escaped \\" quote"\n', // escapes
      'a: &x one\nb: *x\n', // anchors and aliases
      'created: 2024-05-01\n', // a date
      'ratio: 1.5\nhex: 0x1F\nbig: 12345678901234567890\nlead: 007\n',
      'a: one # comment after a plain word\n',
      'a: [one, two,]\n', // a trailing comma
      'a: [one, [two]]\n',
      'a: {b: c}\n',
      'a: 1\na: 2\n', // a duplicate key (an error in YAML)
      '__proto__: x\n',
      'a: b: c\n',
      'a: |\n  block\n',
      '---\na: b\n',
      'a: b\r\n',
      'a:\tb\n',
      '- a\n- b\n',
      'a:b\n',
      'a: ~\n',
      'a: -1\n',
      'a: .inf\n',
      'a: @x\n',
      '"quoted key": x\n',
      `a: "${'x'.repeat(20_000)}"\n`,
    ])
      expect(readSimpleSettings(text), text).toBeUndefined();
  });

  it('agrees with the yaml package on random flat files, or declines them', () => {
    let seed = 23;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = [
      'a',
      'Z',
      '0',
      '7',
      ' ',
      '  ',
      ':',
      ': ',
      '#',
      ' #',
      ',',
      '"',
      "'",
      '[',
      ']',
      '{',
      '-',
      '.',
      '/',
      '(',
      ')',
      '+',
      '_',
      'true',
      'null',
      'No',
      '\\',
      'é',
      '\u3042',
      '&',
      '*',
      '!',
      '|',
      '>',
      '%',
      '@',
      '`',
    ];
    const scalar = () => Array.from({ length: 1 + rand(6) }, () => pieces[rand(pieces.length)]).join('');
    const value = () =>
      rand(4) === 0
        ? `[${Array.from({ length: rand(4) }, scalar).join(',')}]`
        : rand(3) === 0
          ? `"${scalar()}"`
          : scalar();
    let fast = 0;
    for (let i = 0; i < 3000; i++) {
      const lines = Array.from({ length: 1 + rand(4) }, (_, j) => `k${j}${rand(5) ? '' : '-x'}: ${value()}`);
      if (agrees(lines.join('\n') + '\n')) fast++;
    }
    expect(fast).toBeGreaterThan(300); // the comparison ran on many files the flat reading took
  });

  it('reads the same text again as it was, whatever a caller did to its copy; a file it declines through the yaml package', async () => {
    const text = 'task_prefix: "back"\nstatuses: [To Do, Done]\n';
    const first = await parseSettingsFile(text);
    expect(first.data).toStrictEqual({ task_prefix: 'back', statuses: ['To Do', 'Done'] });
    (first.data as { statuses: string[] }).statuses.push('Changed by a caller');
    expect((await parseSettingsFile(text)).data).toStrictEqual({
      task_prefix: 'back',
      statuses: ['To Do', 'Done'],
    });
    const nested = await parseSettingsFile('prefixes:\n  task: back\n');
    expect(nested).toStrictEqual({ data: { prefixes: { task: 'back' } } });
    expect((await parseSettingsFile('a: [b\n')).error).toBeDefined();
  });
});
