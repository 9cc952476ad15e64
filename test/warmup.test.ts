/**
 * What a long-lived process does so that its first searches run as fast as later ones (issue #23), and
 * what settled hybrid keeps per query: none of it may change an answer.
 */
import { describe, expect, test, vi } from 'vitest';
import { hashText } from '../src/embeddings/cache.js';
import { SemanticIndex } from '../src/embeddings/semantic-index.js';
import { l2normalize } from '../src/embeddings/vector.js';
import type { Embedder } from '../src/embeddings/types.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import type { SearchDocument, SearchQuery } from '../src/search/types.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { tempBacklog } from './helpers.js';

const topics = ['login', 'board', 'export', 'sync', 'cache', 'windows', 'report', 'search', 'token', 'theme'];
const docs: SearchDocument[] = Array.from({ length: 60 }, (_, i) => ({
  id: `TASK-${i + 1}`,
  type: 'task',
  title: `${topics[i % 10]} ${topics[(i * 3) % 10]} issue ${i + 1}`,
  body: `## Description\n\nThe ${topics[(i * 7) % 10]} view fails when the ${topics[i % 10]} is ${i % 2 ? 'empty' : 'large'}. Steps ${i}.`,
  status: i % 3 ? 'To Do' : 'Done',
  tags: [topics[(i * 5) % 10]],
}));
const query = (text: string): SearchQuery => ({
  text,
  matchMode: 'simple',
  filters: {},
  sort: 'relevant',
  conjunctive: false,
  limit: 20,
  offset: 0,
  includeScores: true,
});
const asked = ['login board', 'windows empty', 'sync cache issue', 'theme', 'report large'];

describe('the rehearsal after a build', () => {
  test('runs searches in the background and leaves every answer as it was', async () => {
    const service = new OramaSearchService();
    const searches = vi.spyOn(service, 'query');
    await service.build(docs);
    // Asked before any background slice ran: the bodies unprepared, nothing rehearsed.
    const first = await Promise.all(asked.map((q) => service.query(query(q))));
    await service.warmedUp();
    const rehearsed = searches.mock.calls.length - asked.length;
    expect(rehearsed).toBeGreaterThanOrEqual(50);
    const later = await Promise.all(asked.map((q) => service.query(query(q))));
    const quiet = new OramaSearchService({}, { background: false });
    await quiet.build(docs);
    const never = await Promise.all(asked.map((q) => quiet.query(query(q))));
    expect(JSON.stringify(later)).toBe(JSON.stringify(first));
    expect(JSON.stringify(never)).toBe(JSON.stringify(first));
    expect(first[0].results.length).toBeGreaterThan(0);
  });

  test("a service's rehearsal takes the request path a caller's search takes, in bm25", async () => {
    // The options read and checked (plain-options.ts, checkSearch) and the response made: code every
    // request runs, compiled by the rehearsal too (bench/warmup.ts, branch first350b).
    const { dir, cleanup } = await tempBacklog();
    try {
      const service = await openBacklog({ dir, cacheDir: false, embeddings: 'none', watch: false });
      const requests = vi.spyOn(service, 'searchUnified');
      await service.index.warmedUp();
      expect(requests.mock.calls.length).toBeGreaterThanOrEqual(10);
      for (const [, options] of requests.mock.calls) expect(options).toEqual({ limit: 20, mode: 'bm25' });
      await closeBacklog(service);
    } finally {
      await cleanup();
    }
  });

  test('does not run without background work (one-shot commands)', async () => {
    const service = new OramaSearchService({}, { background: false });
    const searches = vi.spyOn(service, 'query');
    await service.build(docs);
    await service.warmedUp();
    expect(searches).not.toHaveBeenCalled();
  });
});

describe('vector answers kept per query', () => {
  const DIMS = 32;
  const vector = (text: string) => {
    const h = Buffer.from(hashText(text), 'hex');
    return l2normalize(Float32Array.from({ length: DIMS }, (_, i) => h[i % h.length] - 127.5));
  };
  const embedder = (): Embedder & { queries: number } => {
    const e = {
      id: 'fake-model',
      dims: DIMS,
      queries: 0,
      embed: async (texts: string[], kind?: string) => {
        if (kind === 'query' && texts.length === 1) e.queries++;
        return texts.map(vector);
      },
    };
    return e;
  };
  const doc = (id: string, title: string) => ({ id, title, body: '' });

  test('a repeated query is answered again without embedding or scanning; any change to the index forgets it', async () => {
    const e = embedder();
    const index = new SemanticIndex({ embedder: e });
    await index.upsert([doc('A', 'alpha'), doc('B', 'beta'), doc('C', 'gamma')]);
    const once = await index.search('delta', 10);
    const asked = e.queries;
    const again = await index.search('delta', 10);
    expect(again).toEqual(once);
    expect(e.queries).toBe(asked);
    // A caller changing its copy does not change the next answer.
    again[0].score = -1;
    expect(await index.search('delta', 10)).toEqual(once);

    // A new document whose text is the query: found at once, first.
    await index.upsert([doc('D', 'delta')]);
    const added = await index.search('delta', 10);
    expect(added[0].docId).toBe('D');
    expect(added[0].score).toBeCloseTo(1, 5);
    expect(e.queries).toBe(asked + 1);
    index.remove('D');
    expect(await index.search('delta', 10)).toEqual(once);

    // Another k, and a filtered search, are searched anew.
    expect(await index.search('delta', 2)).toEqual(once.slice(0, 2));
    const filtered = await index.search('delta', 10, { filter: (id) => id !== 'A' });
    expect(filtered.map((h) => h.docId)).not.toContain('A');
    expect(e.queries).toBe(asked + 4);
  });
});
