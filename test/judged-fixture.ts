import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BacklogService, SearchResponse } from '../src/index.js';

/** One judged query of test/fixtures/judged-queries.json. */
export interface Judged {
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

const FIXTURE = fileURLToPath(new URL('./fixtures/judged-queries.json', import.meta.url));

export function loadJudged(): Judged[] {
  return JSON.parse(readFileSync(FIXTURE, 'utf8'));
}

/** The ids of the list a judged query is about. */
export function judgedIds(res: SearchResponse, j: Judged): string[] {
  const list =
    j.in === 'related'
      ? (res.related ?? [])
      : j.in === 'groups'
        ? (res.groups?.[0]?.results ?? [])
        : res.results;
  return list.map((r) => r.id);
}

export function judgedPasses(ids: string[], j: Judged): boolean {
  return (
    j.expect.every((id) => ids.slice(0, j.within).includes(id)) &&
    (j.absent ?? []).every((id) => !ids.includes(id))
  );
}

/** Runs every judged query: how many pass, and the mean reciprocal rank of their expected ids. */
export async function scoreJudged(
  service: BacklogService,
  extra: Record<string, unknown> = {},
): Promise<{ pass: number; total: number; mrr: number }> {
  const judged = loadJudged();
  let pass = 0;
  let rr = 0;
  let expected = 0;
  for (const j of judged) {
    const ids = judgedIds(await service.searchUnified(j.query, { limit: 20, ...extra, ...j.options }), j);
    if (judgedPasses(ids, j)) pass++;
    for (const id of j.expect) {
      const at = ids.indexOf(id);
      rr += at >= 0 ? 1 / (at + 1) : 0;
      expected++;
    }
  }
  return { pass, total: judged.length, mrr: rr / expected };
}
