/**
 * Archived work ranks after live work of similar relevance (#25, docs/formats.md): an archived item's
 * score is its live twin's times archivedWeight, exactly once, in bm25, in the raw query language and in
 * hybrid (where the words' list comes undemoted and the fused score is weighed once).
 */
import { describe, expect, it } from 'vitest';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import type { Scored, SearchQuery, VectorRetriever } from '../src/search/types.js';

/** The same vector score for every document: meaning cannot tell the twins apart. */
const vectors: VectorRetriever = {
  state: 'ready',
  progress: () => 'ready',
  supports: () => true,
  search: (_query: string, k: number): Promise<Scored[]> =>
    Promise.resolve(
      ['live', 'old']
        .slice(0, k)
        .map((id) => ({ id, score: 0.9 }))
        .concat([{ id: 'other', score: 0.2 }]),
    ),
};

function query(text: string, extra: Partial<SearchQuery> = {}): SearchQuery {
  return {
    text,
    matchMode: 'simple',
    filters: {},
    sort: 'relevant',
    conjunctive: false,
    limit: 10,
    offset: 0,
    includeScores: true,
    ...extra,
  };
}

describe('archived items weigh archivedWeight, once', async () => {
  const service = new OramaSearchService({ archivedWeight: 0.8 }, { vectors, background: false });
  const twin = { title: 'Kanban board drag and drop', body: 'Cards move between columns on the board.' };
  await service.build([
    { id: 'live', type: 'task', state: 'active', ...twin },
    { id: 'old', type: 'task', state: 'archived', ...twin },
    {
      id: 'other',
      type: 'task',
      state: 'active',
      title: 'Login rate limit',
      body: 'Five attempts a minute.',
    },
  ]);
  const ratio = async (q: SearchQuery) => {
    const res = await service.query(q);
    const score = (id: string) => res.results.find((r) => r.id === id)!.score!;
    expect(res.results.map((r) => r.id).slice(0, 2)).toEqual(['live', 'old']);
    return { ratio: score('old') / score('live'), mode: res.mode, states: res.results.map((r) => r.state) };
  };

  it('bm25', async () => {
    const r = await ratio(query('kanban board', { mode: 'bm25' }));
    expect(r.mode).toBe('bm25');
    expect(r.ratio).toBeCloseTo(0.8, 3);
    expect(r.states.slice(0, 2)).toEqual(['active', 'archived']);
  });

  it('the raw query language', async () => {
    const r = await ratio(query('kanban AND board', { mode: 'bm25', matchMode: 'raw' }));
    expect(r.ratio).toBeCloseTo(0.8, 3);
  });

  it('hybrid', async () => {
    const r = await ratio(query('kanban board', { mode: 'hybrid' }));
    expect(r.mode).toBe('hybrid');
    expect(r.ratio).toBeCloseTo(0.8, 3);
  });
});
