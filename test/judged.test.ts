import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openBacklog, type BacklogService } from '../src/index.js';
import { DEMO_DIR, ROOT } from './helpers.js';

interface Judged {
  query: string;
  expect: string[];
  within: number;
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
  it('has at least 20 judged queries', () => {
    expect(judged.length).toBeGreaterThanOrEqual(20);
  });

  it.each(judged.map((j) => [`${j.query} ${j.options ? JSON.stringify(j.options) : ''}`.trim(), j] as const))(
    '%s',
    (_name, j) => {
      const top = service
        .searchUnified(j.query, { ...j.options, limit: Math.max(10, j.within) })
        .results.map((r) => r.id)
        .slice(0, j.within);
      for (const id of j.expect) expect(top, j.why).toContain(id);
    },
  );
});
