import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { boundedLevenshtein } from '@orama/orama/internals';
import { radix } from '@orama/orama/trees';
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../src/search/lexical-index.js';
import { nearWords } from '../src/search/vocabulary.js';

/** The words of every markdown file under a folder (lower case, letters only). */
function wordsOf(dir: string, into = new Set<string>()): Set<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) wordsOf(path, into);
    else if (e.name.endsWith('.md'))
      for (const w of readFileSync(path, 'utf8')
        .toLowerCase()
        .match(/\p{L}+/gu) ?? [])
        into.add(w);
  }
  return into;
}

describe('nearWords', () => {
  it("gives the words Orama's fuzzy find gives within the edits, for words, typos and prefixes", () => {
    const words = wordsOf(join(import.meta.dirname, '..', 'demo', 'backlog'));
    wordsOf(join(import.meta.dirname, 'fixtures', 'backlog-md'), words);
    const tree = new radix.RadixTree();
    for (const w of words) tree.insert(w, 0);
    const orama = (term: string, edits: number) =>
      Object.keys(tree.find({ term, exact: false, tolerance: edits }))
        .filter(
          (w) => Math.abs(w.length - term.length) <= edits && boundedLevenshtein(term, w, edits).isBounded,
        )
        .sort();
    const terms = ['sesion', 'lgoin', 'serach', 'xyzzy', 'a', 'ab'];
    for (const w of [...words].filter((x) => x.length >= 3))
      terms.push(
        w,
        w.slice(1),
        w.slice(0, -1),
        `${w}s`,
        `${w.slice(0, 2)}q${w.slice(3)}`,
        `${w[1]}${w[0]}${w.slice(2)}`,
      );
    let compared = 0;
    let found = 0;
    for (const edits of [1, 2])
      for (const term of edits === 1 ? terms : terms.slice(0, 600)) {
        const want = orama(term, edits);
        expect(nearWords(tree, term, edits).sort(), `${term} within ${edits}`).toEqual(want);
        compared++;
        found += want.length;
      }
    expect(compared).toBeGreaterThan(1000);
    expect(found).toBeGreaterThan(compared); // the terms do have near words
  });
});

describe('the walks a vocabulary remembers', () => {
  it('a typo, a prefix and a completion find a word added or removed after they were walked', () => {
    const index = new LexicalIndex();
    index.background = false;
    index.upsert({ id: 'a', title: 'Login page', body: 'The session expires.' });
    const ids = (query: string) => index.search({ query }).hits.map((h) => h.id);
    // Walked (remembered) while no document has the words.
    expect(ids('zepelin')).toEqual([]);
    expect(ids('zeppel')).toEqual([]);
    expect(ids('blimp*')).toEqual([]);
    index.upsert({ id: 'b', title: 'Zeppelin blimps', body: 'Airships.' });
    expect(ids('zepelin')).toEqual(['b']); // one edit from zeppelin
    expect(ids('zeppel')).toEqual(['b']); // completed
    expect(ids('blimp*')).toEqual(['b']);
    index.remove('b');
    expect(ids('zepelin')).toEqual([]);
    expect(ids('zeppel')).toEqual([]);
    expect(ids('blimp*')).toEqual([]);
  });
});
