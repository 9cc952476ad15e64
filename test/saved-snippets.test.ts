/**
 * Bodies prepared for snippets, kept in the persisted index (saved-snippets.ts, branch `first350`): a
 * restored index hands out the prepared bodies the saving process made, term for term, so its answers
 * are the building process's; a table that is not well formed is ignored, never trusted or crashed on.
 */
import { describe, expect, test } from 'vitest';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { pack, unpack } from '../src/search/packed.js';
import { SavedSnippets, encodeSnippets } from '../src/search/saved-snippets.js';
import { SnippetText, TermIds, plainBody } from '../src/search/snippet.js';
import { TextAnalyzer, type Language } from '../src/search/tokenizer.js';
import { fromBytes, toBytes } from '../src/search/typed-arrays.js';
import type { SearchDocument } from '../src/search/types.js';

const DOCS: SearchDocument[] = [
  {
    id: 'TASK-1',
    title: 'Board view windows',
    body: '## Description\n\nThe **board view** opens `windows` for each [column](http://x). FeatureStore syncs sync_queue rows.',
  },
  {
    id: 'TASK-2',
    title: 'Sync queue',
    body: 'TASK-0042 and the failures of windows; covid-19 and e-mail re-sync.',
  },
  { id: 'TASK-3', title: 'Перевод', body: 'переводы интерфейса на русский язык, board по-русски' },
  { id: 'TASK-4', title: 'CJK', body: '东京的看板视图 windows 和 board' },
  { id: 'TASK-5', title: 'Broken text', body: 'a lone \ud800 surrogate next to board and windows' },
  { id: 'TASK-6', title: 'Empty body', body: '' },
  {
    id: 'TASK-7',
    title: 'Long',
    body: Array.from({ length: 400 }, (_, i) => `word${i % 37} board${i % 5} windows`).join(' '),
  },
  // Many occurrences of one term (the earlier layout counted them in 12 bits).
  { id: 'TASK-8', title: 'Many', body: 'board '.repeat(5000) + 'sync queue' },
];
const QUERIES = ['board view windows', 'sync queue', 'перевод', 'covid 19', 'board', 'windows word3', '看板'];

async function answers(service: OramaSearchService) {
  const out = [];
  for (const text of QUERIES) {
    const r = await service.query({
      text,
      matchMode: 'simple',
      filters: {},
      sort: 'relevant',
      conjunctive: false,
      mode: 'bm25',
      limit: 20,
      offset: 0,
      includeScores: true,
    });
    out.push(r.results.map((x) => [x.id, x.score, x.snippet]));
  }
  return out;
}

async function built(): Promise<{ service: OramaSearchService; bytes: Uint8Array }> {
  // Background work on, as a long-lived process saves: every body (off, only those already prepared).
  const service = new OramaSearchService();
  await service.build(DOCS);
  await service.warmedUp();
  return { service, bytes: await service.serialize() };
}

/** The saved table inside `bytes` (OramaSearchService.serialize), changed by `edit`, put back. */
function withTable(bytes: Uint8Array, edit: (table: Record<string, unknown>) => void): Uint8Array {
  const outer = unpack(bytes) as { lexical: Uint8Array; snippets: Uint8Array };
  const table = unpack(outer.snippets) as Record<string, unknown>;
  edit(table);
  return pack({ lexical: outer.lexical, snippets: pack(table) });
}

describe('prepared bodies in the persisted index', () => {
  test('a restored index answers as the one that built it, from the saved bodies', async () => {
    const { service, bytes } = await built();
    const expected = await answers(service);
    const restored = new OramaSearchService({}, { background: false });
    restored.restore(bytes, DOCS);
    const saved = (restored as unknown as { resultStore: { saved: SavedSnippets | null } }).resultStore.saved;
    expect(saved).toBeInstanceOf(SavedSnippets);
    expect(saved!.partial).toBe(false);
    expect(await answers(restored)).toEqual(expected);
    expect(expected.flat().length).toBeGreaterThan(10);
  });

  test('each saved body is the SnippetText the analyzer prepares, even with ids given before (sorted again)', async () => {
    const { bytes } = await built();
    const snippets = (unpack(bytes) as { snippets: Uint8Array }).snippets;
    const table = SavedSnippets.decode(snippets)!;
    const { ids: saved, languages } = unpack(snippets) as { ids: string[]; languages: string[] };
    const languageOf = (id: string) => languages[saved.indexOf(id)] ?? '';
    const analyzer = new TextAnalyzer();
    for (const early of [[], ['window', 'board', 'zzz']]) {
      const ids = new TermIds();
      // Terms that got their ids first (a query's): the saved bodies holding them are sorted again.
      for (const t of early) ids.id(t);
      const fresh = new TermIds();
      for (const t of early) fresh.id(t);
      table.mapTerms(ids);
      for (const doc of DOCS) {
        const got = table.take(doc.id, doc.body!.length, languageOf(doc.id), ids);
        if (doc.id === 'TASK-5') {
          expect(got).toBeUndefined(); // a lone surrogate does not survive UTF-8: not saved
          continue;
        }
        const { text, lead } = plainBody(doc.body!);
        const language = (languageOf(doc.id) || undefined) as Language | undefined;
        const want = SnippetText.prepare(text, analyzer, fresh, language, lead).parts();
        const parts = got!.parts();
        // The same words, as the same terms, in the same order; ids may differ between the two stores.
        const names = (s: TermIds, p: typeof want) =>
          Array.from(p.termIds, (id, k) => `${s.terms()[id]}@${p.termRuns[k]}`).sort();
        expect({ ...parts, termIds: names(ids, parts), termRuns: [] }).toEqual({
          ...want,
          termIds: names(fresh, want),
          termRuns: [],
        });
        const order = Array.from(parts.termIds, (id, k) => [id, parts.termRuns[k]]);
        expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
      }
    }
  });

  test('a body put again, of another length or language, is prepared from its markdown', async () => {
    const { bytes } = await built();
    const restored = new OramaSearchService({}, { background: false });
    restored.restore(bytes, DOCS);
    // Same length, other words: put() forgets the saved body.
    const body = DOCS[0].body!.replace('board view', 'queue sync');
    restored.upsert({ ...DOCS[0], body });
    const reference = new OramaSearchService({}, { background: false });
    await reference.build([{ ...DOCS[0], body }, ...DOCS.slice(1)]);
    expect(await answers(restored)).toEqual(await answers(reference));
    const table = SavedSnippets.decode((unpack(bytes) as { snippets: Uint8Array }).snippets)!;
    const ids = new TermIds();
    expect(table.take('TASK-2', DOCS[1].body!.length + 1, '', ids)).toBeUndefined();
    expect(table.take('TASK-2', DOCS[1].body!.length, 'german', ids)).toBeUndefined();
    expect(table.take('TASK-404', 3, '', ids)).toBeUndefined();
  });

  test('a table that is not well formed is ignored, and the answers stay the same', async () => {
    const { service, bytes } = await built();
    const expected = await answers(service);
    const u32 = (v: unknown) => fromBytes(v as Uint8Array, Uint32Array);
    const hostile: ((t: Record<string, unknown>) => void)[] = [
      (t) => (t.format = 1),
      (t) => (t.ids = 'TASK-1'),
      (t) => (t.ids = [1, 2]),
      (t) => (t.languages = ['']),
      (t) => (t.terms = null),
      (t) => (t.docs = new Uint8Array(3)),
      (t) => (t.docs = toBytes(u32(t.docs).slice(6))),
      (t) => (t.text = (t.text as Uint8Array).slice(1)),
      (t) => (t.starts = toBytes(u32(t.starts).slice(1))),
      (t) => (t.termRuns = toBytes(u32(t.termRuns).slice(1))),
      (t) => (t.termIds = toBytes(u32(t.termIds).map(() => 4_000_000_000))),
      (t) => (t.termRuns = toBytes(u32(t.termRuns).map(() => 0xffff))),
      (t) => (t.ends = toBytes(u32(t.ends).map(() => 0xffff_ffff))),
      (t) => (t.docs = toBytes(u32(t.docs).map((v, i) => (i % 6 === 4 ? 1e9 : v)))),
      (t) => (t.docs = toBytes(u32(t.docs).map((v, i) => (i % 6 === 3 ? 0xffff_ffff : v)))),
      (t) => (t.docs = toBytes(u32(t.docs).map((v, i) => (i % 6 === 1 ? v + 1 : v)))),
      (t) => (t.text = new Uint8Array((t.text as Uint8Array).length).fill(0xff)),
      (t) => (t.termIds = toBytes(u32(t.termIds).reverse())),
      (t) => (t.starts = toBytes(u32(t.starts).map((v, k) => (k === 3 ? 1e9 : v)))),
      (t) => (t.termIds = toBytes(u32(t.termIds).map((v, k) => (k === 2 ? 0 : v)))),
    ];
    for (const edit of hostile) {
      const restored = new OramaSearchService({}, { background: false });
      restored.restore(withTable(bytes, edit), DOCS);
      expect(await answers(restored), String(edit)).toEqual(expected);
    }
    // Not even a packed value: ignored too.
    const outer = unpack(bytes) as { lexical: Uint8Array };
    for (const snippets of [new Uint8Array([1, 2, 3]), 'text', 42]) {
      const restored = new OramaSearchService({}, { background: false });
      restored.restore(pack({ lexical: outer.lexical, snippets }), DOCS);
      expect(await answers(restored)).toEqual(expected);
    }
  });

  test('nothing is saved past the text budget', () => {
    const analyzer = new TextAnalyzer();
    const ids = new TermIds();
    const body = (text: string) => ({
      id: text,
      body: text,
      language: '',
      snippet: SnippetText.prepare(text, analyzer, ids),
    });
    const bodies = [body('board view windows'), body('переводы')];
    // 18 + 16 bytes of UTF-8.
    expect(encodeSnippets(bodies, ids, { maxTextBytes: 33 })).toBeUndefined();
    expect(encodeSnippets(bodies, ids, { maxTextBytes: 34 })).toBeInstanceOf(Uint8Array);
  });
});
