/**
 * The embedded engine (OramaSearchService) as `bench/engine-eval.ts` loads any engine: a module whose
 * `createEngine()` returns a `SearchEngine`. `build` also waits for the language detector's answer, as the
 * service does before it serves, so the harness reproduces the service's own figures.
 */
import { OramaSearchService } from '../../src/search/orama-search-service.js';
import type { SearchDocument, SearchEngine, SearchQuery } from '../../src/search/types.js';

export const name = 'embedded (OramaSearchService)';

export function createEngine(): SearchEngine {
  const service = new OramaSearchService();
  return {
    get capabilities() {
      return service.capabilities;
    },
    get size() {
      return service.size;
    },
    async build(docs: Iterable<SearchDocument>) {
      await service.build(docs);
      await service.languagesSettled();
    },
    upsert: (doc: SearchDocument) => service.upsert(doc),
    remove: (id: string) => service.remove(id),
    query: (q: SearchQuery) => service.query(q),
  };
}
