import { beforeAll, describe, expect, it } from 'vitest';
import { openBacklog, type BacklogService } from '../src/index.js';
import { DEMO_DIR } from './helpers.js';
import { judgedIds, loadJudged } from './judged-fixture.js';

/** Queries with the results a good engine must rank near the top: guards ranking in CI. */
const judged = loadJudged();

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
      const ids = judgedIds(res, j);
      for (const id of j.expect) expect(ids.slice(0, j.within), j.why).toContain(id);
      for (const id of j.absent ?? []) expect(ids, j.why).not.toContain(id);
      if (j.expect.length === 0 && !j.absent) throw new Error(`judged query "${j.query}" asserts nothing`);
    },
  );
});
