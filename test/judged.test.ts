import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openBacklog, type BacklogService } from '../src/index.js';
import { DEMO_DIR, ROOT } from './helpers.js';

interface Judged {
  query: string;
  /** Ids that must be among the first `within` of the list named by `in`. */
  expect: string[];
  within: number;
  /** Ids that must not appear anywhere in that list. */
  absent?: string[];
  /** Which list: the results (default), the related items, or the first group. */
  in?: 'results' | 'related' | 'groups';
  options?: Record<string, unknown>;
  why: string;
}

/** Queries with the results a good engine must rank near the top: guards ranking in CI. */
const judged: Judged[] = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/judged-queries.json'), 'utf8'));

let service: BacklogService;
beforeAll(async () => {
  service = await openBacklog({ dir: DEMO_DIR });
});

describe('judged queries on the demo backlog', () => {
  it('has at least 60 judged queries', () => {
    expect(judged.length).toBeGreaterThanOrEqual(60);
  });

  it.each(judged.map((j) => [`${j.query} ${j.options ? JSON.stringify(j.options) : ''}`.trim(), j] as const))(
    '%s',
    async (_name, j) => {
      const res = await service.searchUnified(j.query, { limit: Math.max(20, j.within), ...j.options });
      const list =
        j.in === 'related'
          ? (res.related ?? [])
          : j.in === 'groups'
            ? (res.groups?.[0]?.results ?? [])
            : res.results;
      const ids = list.map((r) => r.id);
      for (const id of j.expect) expect(ids.slice(0, j.within), j.why).toContain(id);
      for (const id of j.absent ?? []) expect(ids, j.why).not.toContain(id);
      if (j.expect.length === 0 && !j.absent) throw new Error(`judged query "${j.query}" asserts nothing`);
    },
  );
});
