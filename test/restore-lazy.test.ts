import { describe, expect, it } from 'vitest';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { documentsDecoded } from '../src/search/orama-components.js';
import { FieldIndex } from '../src/search/field-index.js';
import type { SearchDocument, SearchRequest } from '../src/search/types.js';

// A restored index keeps its stored documents and filter trees as the cache's bytes until something
// reads them, and looks terms up without making its Map (issue #23): what it answers must not change.
const DOCS: SearchDocument[] = [
  {
    id: 'TASK-1',
    type: 'task',
    state: 'active',
    status: 'To Do',
    title: 'Sync conflict on login',
    body: 'The sync conflict appears after login.',
    tags: ['sync'],
    path: 'tasks/task-1.md',
    folder: 'tasks',
    updated_ms: 3,
  },
  {
    id: 'TASK-2',
    type: 'task',
    state: 'completed',
    status: 'Done',
    title: 'Rate limit the login',
    body: 'Limit the rate of login attempts.',
    tags: ['auth'],
    path: 'completed/task-2.md',
    folder: 'completed',
    updated_ms: 1,
  },
  {
    id: 'TASK-3',
    type: 'task',
    state: 'archived',
    status: 'Done',
    title: 'Old sync engine',
    body: 'Archived: the sync engine before the rewrite.',
    path: 'archive/task-3.md',
    folder: 'archive',
    updated_ms: 2,
  },
  {
    id: 'DOC-1',
    type: 'resource',
    title: 'Перевод интерфейса',
    body: 'Переводы на русский язык и синхронизация.',
    path: 'docs/doc-1.md',
    folder: 'docs',
    updated_ms: 4,
  },
  {
    id: 'DOC-2',
    type: 'resource',
    title: 'Übersetzung',
    body: 'Die Übersetzung der Oberfläche ins Deutsche.',
    path: 'docs/doc-2.md',
    folder: 'docs',
    language: 'de',
    updated_ms: 5,
  },
];

const REQUESTS: SearchRequest[] = [
  { query: 'sync' },
  { query: 'login rate' },
  { query: 'перевод' },
  { query: 'übersetzung' },
  { query: 'snyc conflcit' },
  { query: 'sync', filters: { status: ['Done'] } },
  { query: 'sync', filters: { state: ['archived'] } },
  { query: 'login', filters: { folder: ['completed'], types: ['task'] } },
  { query: '', sort: 'recent' },
];

type Lexical = {
  background: boolean;
  languageOf(id: string): string | undefined;
  db: { data: { docs: unknown } };
};
const lex = (s: OramaSearchService) => (s as unknown as { lexicalIndex: Lexical }).lexicalIndex;

async function pair(): Promise<{ built: OramaSearchService; restored: OramaSearchService }> {
  const built = new OramaSearchService();
  lex(built).background = false;
  await built.build(DOCS);
  const restored = new OramaSearchService();
  lex(restored).background = false;
  restored.restore(await built.serialize(), DOCS);
  return { built, restored };
}

const docsOf = (s: OramaSearchService) => lex(s).db.data.docs;
const answer = (s: OramaSearchService, req: SearchRequest) =>
  s.search({ limit: 20, ...req }).hits.map((h) => [h.id, h.score]);

describe('a restore that decodes what is read, when it is read', () => {
  it('answers searches, filters and a sort by date without decoding the stored documents, as the built index does', async () => {
    const { built, restored } = await pair();
    expect(answer(restored, { query: 'sync login' })).toEqual(answer(built, { query: 'sync login' }));
    expect(restored.documentIds().sort()).toEqual(built.documentIds().sort());
    for (const d of DOCS) expect(lex(restored).languageOf(d.id)).toBe(lex(built).languageOf(d.id));
    expect(documentsDecoded(docsOf(restored))).toBe(false);
    // Filters decode their trees, a sort by date reads the saved dates: the documents stay bytes.
    for (const req of REQUESTS)
      expect(answer(restored, req), JSON.stringify(req)).toEqual(answer(built, req));
    expect(documentsDecoded(docsOf(restored))).toBe(false);
    restored.upsert({ ...DOCS[0], body: 'changed' });
    expect(documentsDecoded(docsOf(restored))).toBe(true);
  });

  it('takes changes after a restore (the documents and trees decoded first) and saves what it holds', async () => {
    const { built, restored } = await pair();
    const added: SearchDocument = {
      id: 'TASK-4',
      type: 'task',
      state: 'archived',
      status: 'Done',
      title: 'Sync again',
      body: 'sync sync',
      path: 'archive/task-4.md',
      folder: 'archive',
      updated_ms: 9,
    };
    for (const s of [built, restored]) {
      s.upsert(added);
      s.remove('TASK-1');
    }
    for (const req of REQUESTS)
      expect(answer(restored, req), JSON.stringify(req)).toEqual(answer(built, req));
    // Saved without a change since the restore, and after: read back, the same answers.
    const again = new OramaSearchService();
    again.restore(await restored.serialize());
    const untouched = new OramaSearchService();
    const { restored: fresh } = await pair();
    untouched.restore(await fresh.serialize());
    for (const req of REQUESTS) {
      expect(answer(again, req), JSON.stringify(req)).toEqual(answer(built, req));
      expect(answer(untouched, req), JSON.stringify(req)).toEqual(answer(fresh, req));
    }
  });

  it('looks terms up in a restored field by their saved order, and refuses an order that is not one', () => {
    const field = new FieldIndex();
    field.add(0, ['zeta', 'alpha', 'ä', 'Z', 'alpha'], [0, 1, 2, 3, 4]);
    field.add(1, ['beta', '😀', 'alpha'], [0, 1, 2]);
    field.remove(0); // leaves free ids
    field.add(2, ['gamma', 'zeta'], [0, 1]);
    const saved = field.save();
    const restored = FieldIndex.load(saved);
    for (const t of ['alpha', 'beta', 'gamma', 'zeta', '😀', 'ä', 'Z', 'missing', ''])
      expect([t, restored.termId(t), restored.docFreq(t)]).toEqual([t, field.termId(t), field.docFreq(t)]);
    expect(restored.termCount).toBe(field.termCount);
    expect([...restored.vocabulary()].sort()).toEqual([...field.vocabulary()].sort());
    // A change makes the Map; lookups still agree.
    restored.add(3, ['delta', 'alpha'], [0, 1]);
    field.add(3, ['delta', 'alpha'], [0, 1]);
    for (const t of ['alpha', 'delta', 'zeta']) expect(restored.docFreq(t)).toBe(field.docFreq(t));

    const order = new Int32Array(saved.sorted.buffer, saved.sorted.byteOffset, saved.sorted.byteLength / 4);
    const swapped = order.slice();
    [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
    const bytes = (a: Int32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    expect(() => FieldIndex.load({ ...saved, sorted: bytes(swapped) })).toThrow(/not in order/);
    expect(() => FieldIndex.load({ ...saved, sorted: bytes(order.slice(1)) })).toThrow(/do not match/);
    const outside = order.slice();
    outside[0] = 1_000_000;
    expect(() => FieldIndex.load({ ...saved, sorted: bytes(outside) })).toThrow(/not in order/);
  });
});
