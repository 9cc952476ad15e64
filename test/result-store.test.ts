import { describe, expect, it } from 'vitest';
import { ResultStore } from '../src/search/result-store.js';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import type { SearchDocument } from '../src/search/types.js';

const DOCS: SearchDocument[] = ['A', 'B', 'C', 'D'].map((x, i) => ({
  id: `TASK-${i + 1}`,
  title: `Title ${x}`,
  body: `Body of ${x}`,
  status: 'To Do',
}));

/** A store given DOCS by position, and the documents it made (putAllLater makes each when first read). */
function byPosition(): { store: ResultStore; made: string[] } {
  const store = new ResultStore(new TextAnalyzer({}));
  store.background = false;
  const made: string[] = [];
  const at = new Map(DOCS.map((d, i) => [d.id, i]));
  store.putAllLater(at, (i) => {
    made.push(DOCS[i].id);
    return DOCS[i];
  });
  return { store, made };
}

describe('ResultStore.putAllLater (a restored one-shot: entries made for the documents shown)', () => {
  it('makes a document when its result is first read, the same fields as put', () => {
    const { store, made } = byPosition();
    const eager = new ResultStore(new TextAnalyzer({}));
    for (const d of DOCS) eager.put(d);
    expect(store.has('TASK-3')).toBe(true);
    expect(store.has('TASK-9')).toBe(false);
    expect(made).toEqual([]);
    expect(store.fields('TASK-3')).toEqual(eager.fields('TASK-3'));
    expect(store.titleTerms('TASK-3')).toEqual(eager.titleTerms('TASK-3'));
    expect(made).toEqual(['TASK-3']);
    expect(() => store.fields('TASK-9')).toThrow(/no document/);
  });

  it('a removal, a put or a clear makes every entry first: none comes back', () => {
    const { store } = byPosition();
    store.remove('TASK-2');
    expect(store.has('TASK-2')).toBe(false);
    expect(() => store.fields('TASK-2')).toThrow(/no document/);
    expect(store.fields('TASK-4').title).toBe('Title D');
    store.put({ ...DOCS[0], title: 'Changed' });
    expect(store.fields('TASK-1').title).toBe('Changed');
    store.clear();
    expect(['TASK-1', 'TASK-3', 'TASK-4'].map((id) => store.has(id))).toEqual([false, false, false]);
  });
});
