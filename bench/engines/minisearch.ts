/**
 * A second engine behind the `SearchEngine` seam: MiniSearch 7 with its default ranking, filters applied
 * inside the search (before the top-K, as an adapter must), and a plain snippet (the body's first 120
 * characters). It is an example of what an adapter carries, and it runs here, so the harness is tested
 * on an engine that is not ours: `npx tsx bench/engine-eval.ts --engine bench/engines/minisearch.ts`.
 */
import MiniSearch from 'minisearch';
import type {
  EngineCapabilities,
  SearchDocument,
  SearchEngine,
  SearchFilters,
  SearchQuery,
  SearchOutcome,
} from '../../src/search/types.js';

export const name = 'MiniSearch 7 adapter';

const CAPABILITIES: EngineCapabilities = {
  lexical: true,
  vectors: false,
  queryLanguage: false,
  grouping: false,
  related: false,
  persistence: false,
};

const lower = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());

/** SearchFilters as a predicate over the stored document (status and tags case-insensitive, folders with what is beneath). */
function accepts(doc: SearchDocument, f: SearchFilters): boolean {
  if (f.types && !(doc.type && f.types.includes(doc.type))) return false;
  if (f.status && !(doc.status && lower(f.status).includes(doc.status.toLowerCase()))) return false;
  if (f.state && !f.state.includes(doc.state ?? 'none')) return false;
  if (f.tags && !lower(doc.tags ?? []).some((t) => lower(f.tags!).includes(t))) return false;
  if (f.folder && !f.folder.some((d) => (doc.path ?? '').startsWith(d.replace(/\/+$/, '') + '/')))
    return false;
  if (f.parent_id && !f.parent_id.some((p) => p === doc.id || (doc.ancestors ?? []).includes(p)))
    return false;
  return true;
}

export function createEngine(): SearchEngine {
  const docs = new Map<string, SearchDocument>();
  const index = new MiniSearch<SearchDocument>({
    fields: ['title', 'body', 'tagText'],
    extractField: (doc, field) =>
      field === 'tagText' ? (doc.tags ?? []).join(' ') : (doc as unknown as Record<string, string>)[field],
  });
  const put = (doc: SearchDocument) => {
    if (docs.has(doc.id)) index.discard(doc.id);
    docs.set(doc.id, doc);
    index.add(doc);
  };
  return {
    capabilities: CAPABILITIES,
    get size() {
      return docs.size;
    },
    async build(all: Iterable<SearchDocument>) {
      index.removeAll();
      docs.clear();
      for (const doc of all) put(doc);
    },
    upsert: put,
    remove(id: string) {
      if (!docs.has(id)) return false;
      index.discard(id);
      docs.delete(id);
      return true;
    },
    async query(q: SearchQuery): Promise<SearchOutcome> {
      const hits = index.search(q.text, {
        filter: (r) => accepts(docs.get(String(r.id))!, q.filters),
      });
      const page = hits.slice(q.offset, q.offset + q.limit);
      return {
        results: page.map((h) => {
          const doc = docs.get(String(h.id))!;
          return {
            id: doc.id,
            type: doc.type ?? 'resource',
            title: doc.title,
            status: doc.status ?? null,
            state: doc.state ?? null,
            parent_id: doc.parent_id ?? null,
            path: doc.path ?? doc.id,
            snippet: { field: 'body', text: doc.body.slice(0, 120), matched_fields: [] },
            matched_fields: [],
            match: 'lexical',
          };
        }),
        total: hits.length,
        mode: 'bm25',
        warnings: [],
        ...(q.offset + q.limit < hits.length ? { next_offset: q.offset + q.limit } : {}),
      };
    },
  };
}
