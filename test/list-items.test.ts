import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LexicalIndex } from '../src/search/lexical-index.js';
import type { SearchFilters } from '../src/search/types.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import type { ListOptionsInput } from '../src/service/options.js';
import { BACKLOG_MD_DIR, tempBacklog } from './helpers.js';

// `list` filters and orders the items themselves, as the index's `where` filters would (issue #23: a
// one-shot `list` read the whole index for nothing). The index's own answers are the reference. Ids that
// are in the fixture's excerpt and in the full folder alike, so it runs without ../shared too.
const LISTS: { input: ListOptionsInput; filters: SearchFilters }[] = [
  { input: {}, filters: { state: ['active', 'none'] as never } },
  { input: { state: ['all'] }, filters: {} },
  { input: { state: ['completed', 'draft'] }, filters: { state: ['completed', 'draft'] } },
  { input: { state: ['all'], status: ['done'] }, filters: { status: ['done'] } },
  { input: { types: ['task'] }, filters: { types: ['task'], state: ['active', 'none'] as never } },
  {
    input: { state: ['all'], types: ['document', 'decision'] },
    filters: { types: ['document', 'decision'] },
  },
  { input: { state: ['all'], parent_id: ['BACK-222'] }, filters: { parent_id: ['BACK-222'] } },
  { input: { state: ['all'], tags: ['TUI', 'bug'] }, filters: { tags: ['TUI', 'bug'] } },
  { input: { state: ['all'], path: ['archive/**'] }, filters: { path: ['archive/**'] } },
  { input: { state: ['all'], path: ['nowhere/*'] }, filters: { path: ['nowhere/*'] } },
  { input: { state: ['all'], folder: ['completed/'] }, filters: { folder: ['completed/'] } },
  { input: { state: ['all'], file_type: ['.MD'] }, filters: { file_type: ['.MD'] } },
  { input: { state: ['all'], author: ['nobody'] }, filters: { author: ['nobody'] } },
];

describe('list without the index', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(BACKLOG_MD_DIR));
    await rm(join(dir, '.cache'), { recursive: true, force: true });
  });
  afterAll(() => cleanup());

  it("answers what the index's filters answer, in its order (most recent first, ties in the items' order)", async () => {
    const service = await openBacklog({ dir, embeddings: 'none' }); // writes .cache/index.bin
    await closeBacklog(service);
    const oneShot = await openBacklog({ dir, embeddings: 'none', background: false });
    try {
      for (const { input, filters } of LISTS) {
        const indexed = service.index.search({ query: '', filters, limit: Number.MAX_SAFE_INTEGER });
        const ids = indexed.hits.slice(0, 1000).map((h) => h.id);
        // From the items (a one-shot's index not read yet), and from the index (a long-lived process's).
        for (const listed of [
          oneShot.list({ ...input, limit: 1000 }),
          service.list({ ...input, limit: 1000 }),
        ]) {
          expect(listed.total, JSON.stringify(input)).toBe(indexed.total);
          expect(
            listed.results.map((r) => r.id),
            JSON.stringify(input),
          ).toEqual(ids);
        }
      }
      expect(oneShot.index.restorePending).toBe(true);
      // Somewhere two items were updated at the same time, so the order of ties is compared too.
      const dates = service
        .list({ state: ['all'], limit: 1000 })
        .results.flatMap((r) => (r.updated_at ? [r.updated_at] : []));
      expect(new Set(dates).size).toBeLessThan(dates.length);
      // What the default leaves out, counted by state.
      const hidden = service.index.search({
        query: '',
        filters: { state: ['completed', 'archived', 'draft'] },
        limit: Number.MAX_SAFE_INTEGER,
      });
      for (const s of [oneShot, service]) {
        const notShown = Object.values(s.list().not_shown ?? {}).reduce((a, b) => a + b, 0);
        expect(notShown).toBe(hidden.total);
        expect(s.list().not_shown).toEqual(service.list().not_shown);
      }
    } finally {
      await closeBacklog(oneShot);
    }
  });

  it('a one-shot list never restores the persisted index; its first search does', async () => {
    const service = await openBacklog({ dir, embeddings: 'none', background: false });
    const restore = vi.spyOn(LexicalIndex.prototype, 'restore');
    try {
      expect(service.cacheStatus().used).toBe(true);
      for (const { input } of LISTS) service.list({ ...input, limit: 5 });
      expect(service.list({ sort: 'title' }).results.length).toBeGreaterThan(0);
      expect(restore).not.toHaveBeenCalled();
      await service.searchUnified('board view');
      expect(restore).toHaveBeenCalledTimes(1);
    } finally {
      restore.mockRestore();
      await closeBacklog(service);
    }
  });
});
