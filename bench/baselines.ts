/**
 * Baseline retrievers for `bench/eval.ts` (dev-only): off-the-shelf libraries with their default settings,
 * indexing title + text, to compare our engine against.
 */
import { create, insertMultiple, search, type AnyOrama } from '@orama/orama';
import { stopwords as englishStopwords } from '@orama/stopwords/english';
import MiniSearch from 'minisearch';
import type { Retriever } from '../src/eval/run-eval.js';

type Doc = { id: string; title: string; text: string };

/**
 * Orama 3.1.18 with `create({ schema: { title: 'string', text: 'string' } })` and plain
 * `search(db, { term, limit })`. `stemmed` adds the built-in English stemmer and the English stop-words of
 * `@orama/stopwords` (tokenizer config `{ stemming: true, stopWords: [...] }`; Orama's own option name is
 * `stopWords`, although the stop-words package's README says `stopwords`).
 */
export function oramaRetriever(stemmed = false): Retriever {
  let db: AnyOrama | undefined;
  return {
    name: stemmed ? 'Orama 3.1.18, English stemming + stop-words' : 'Orama 3.1.18, default settings',
    async build(docs: Doc[]) {
      const schema = { title: 'string', text: 'string' } as const;
      db = stemmed
        ? create({ schema, components: { tokenizer: { stemming: true, stopWords: englishStopwords } } })
        : create({ schema });
      await insertMultiple(db, docs);
    },
    async search(query, k) {
      if (!db) throw new Error('build() first');
      const res = await search(db, { term: query, limit: k });
      return res.hits.map((h) => String(h.id));
    },
  };
}

/** MiniSearch 7 with its defaults: `fields: ['title', 'text']`, no stored fields, `search(query)` as is. */
export function miniSearchRetriever(): Retriever {
  let ms: MiniSearch<Doc> | undefined;
  return {
    name: 'MiniSearch 7, default settings',
    async build(docs: Doc[]) {
      ms = new MiniSearch<Doc>({ fields: ['title', 'text'] });
      ms.addAll(docs);
    },
    search(query, k) {
      if (!ms) throw new Error('build() first');
      return ms
        .search(query)
        .slice(0, k)
        .map((r) => String(r.id));
    },
  };
}

/**
 * Orama 3.1.18 used directly for vector and hybrid search, default settings:
 * `create({ schema: { title: 'string', body: 'string', embedding: 'vector[N]' } })`, `insertMultiple`, then
 * `search(db, { mode: 'vector' | 'hybrid', term, vector: { value, property: 'embedding' }, limit })` with
 * Orama's default similarity threshold (0.8) and hybrid weights (text 0.5, vector 0.5). Orama keeps each
 * inserted document as given, the embedding as a plain array (it requires one), plus a Float32Array copy
 * in its vector index.
 */
export function oramaVectors(dims: number) {
  let db: AnyOrama | undefined;
  return {
    name: 'Orama 3.1.18, default settings',
    async build(docs: { id: string; title: string; body: string; embedding: number[] }[]) {
      db = create({ schema: { title: 'string', body: 'string', embedding: `vector[${dims}]` } as const });
      await insertMultiple(db, docs);
    },
    async search(mode: 'vector' | 'hybrid', term: string, vector: Float32Array, k: number) {
      if (!db) throw new Error('build() first');
      const value = vector; // Orama takes a Float32Array as is (VectorType)
      const res =
        mode === 'vector'
          ? await search(db, { mode, vector: { value, property: 'embedding' }, limit: k })
          : await search(db, { mode, term, vector: { value, property: 'embedding' }, limit: k });
      return res.hits.map((h) => String(h.id));
    },
  };
}

/** The three baselines in report order. */
export function baselineRetrievers(): Retriever[] {
  return [oramaRetriever(false), oramaRetriever(true), miniSearchRetriever()];
}
