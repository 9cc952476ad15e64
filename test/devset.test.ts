/**
 * The judged Backlog.md dev set (bench/devset, docs/devset.md) as a CI guard: its files are well formed,
 * and this project's bm25 ranking, run through the real `searchUnified` on a temp copy of the folder,
 * stays above a floor a little under its measured nDCG@10. Skipped when the folder is not on this machine.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLASSES,
  backlogSourceDir,
  loadDevset,
  matchesFilters,
  readDocs,
  type Devset,
  type DevsetDoc,
} from '../bench/devset/corpus.js';
import { runSystem } from '../bench/devset/eval.js';
import { openDevsetBacklog, type OpenedBacklog } from '../bench/devset/open.js';
import { ourSystem } from '../bench/devset/systems.js';

/** Measured 0.8153 (docs/quality.md, `npm run eval`; 0.6714 before the Backlog.md format, id routing and title coverage); raise it when the ranking improves. */
const BM25_NDCG_FLOOR = 0.79;

const source = backlogSourceDir();
const present = existsSync(source);
if (!present) console.warn(`devset: ${source} is absent; the dev set checks are skipped`);

describe('filters as a Backlog.md user means them', () => {
  const doc = (path: string, over: Partial<DevsetDoc> = {}): DevsetDoc => ({
    path,
    title: 't',
    body: '',
    fmId: '',
    status: null,
    tags: [],
    kind: 'resource',
    ...over,
  });
  const done = doc('completed/back-72 - x.md', {
    fmId: 'BACK-72',
    status: 'Done',
    tags: ['bug'],
    kind: 'task',
  });
  const archived = doc('archive/tasks/back-228 - x.md', { fmId: 'BACK-228', status: 'To do', kind: 'task' });
  const decision = doc('decisions/decision-1 - x.md', { fmId: 'decision-1', status: 'proposed' });
  const draft = doc('drafts/draft-7 - x.md', { fmId: 'DRAFT-7', status: 'To Do', kind: 'draft' });

  it('compares status and labels case-insensitively', () => {
    expect(matchesFilters(archived, { status: ['To Do'] })).toBe(true);
    expect(matchesFilters(done, { status: ['done'], tags: ['BUG'] })).toBe(true);
    expect(matchesFilters(done, { status: ['To Do'] })).toBe(false);
    expect(matchesFilters(done, { tags: ['windows'] })).toBe(false);
  });

  it('takes a folder with everything beneath it, and only that', () => {
    expect(matchesFilters(archived, { folder: ['archive'] })).toBe(true);
    expect(matchesFilters(archived, { folder: ['archive/tasks/'] })).toBe(true);
    expect(matchesFilters(done, { folder: ['comp'] })).toBe(false);
  });

  it('reads task as any Backlog.md task and resource as the rest, drafts being neither', () => {
    expect(matchesFilters(done, { types: ['task'] })).toBe(true);
    expect(matchesFilters(archived, { types: ['task'] })).toBe(true);
    expect(matchesFilters(decision, { types: ['resource'] })).toBe(true);
    expect(matchesFilters(decision, { types: ['task'] })).toBe(false);
    expect(matchesFilters(draft, { types: ['task'] })).toBe(false);
    expect(matchesFilters(draft, { types: ['resource'] })).toBe(false);
  });

  it('combines filters with AND', () => {
    expect(matchesFilters(done, { types: ['task'], status: ['Done'], tags: ['bug'] })).toBe(true);
    expect(matchesFilters(done, { types: ['task'], status: ['Done'], folder: ['tasks'] })).toBe(false);
  });
});

describe.skipIf(!present)('judged Backlog.md dev set', () => {
  let devset: Devset;
  let docs: Map<string, DevsetDoc>;
  beforeAll(async () => {
    devset = await loadDevset();
    docs = new Map((await readDocs()).map((d) => [d.path, d]));
  });

  it('has at least 60 queries with ids, text and a class, every class present', () => {
    expect(devset.queries.length).toBeGreaterThanOrEqual(60);
    expect(new Set(devset.queries.map((q) => q.id)).size).toBe(devset.queries.length);
    for (const q of devset.queries) {
      expect(q.text.trim(), q.id).not.toBe('');
      expect(CLASSES, q.id).toContain(q.class);
    }
    for (const cls of CLASSES)
      expect(
        devset.queries.some((q) => q.class === cls),
        cls,
      ).toBe(true);
  });

  it('has filters on filtered queries only', () => {
    for (const q of devset.queries) expect(q.options !== undefined, q.id).toBe(q.class === 'filtered');
  });

  it('grades 0-3 existing files for known queries, at least one relevant file per query', () => {
    const ids = new Set(devset.queries.map((q) => q.id));
    for (const [qid, rels] of devset.qrels) {
      expect(ids.has(qid), `qrels for unknown query ${qid}`).toBe(true);
      for (const [path, grade] of rels) {
        expect([0, 1, 2, 3], `${qid} ${path}`).toContain(grade);
        expect(docs.has(path), `${qid}: ${path} is not a file of ${source}`).toBe(true);
      }
    }
    for (const q of devset.queries)
      expect(
        [...(devset.qrels.get(q.id)?.values() ?? [])].some((g) => g > 0),
        q.id,
      ).toBe(true);
  });

  it('grades as relevant only files that pass the query filters', () => {
    for (const q of devset.queries.filter((x) => x.options)) {
      for (const [path, grade] of devset.qrels.get(q.id) ?? [])
        if (grade > 0) expect(matchesFilters(docs.get(path)!, q.options), `${q.id} ${path}`).toBe(true);
    }
  });

  describe('bm25 through searchUnified', () => {
    let opened: OpenedBacklog;
    beforeAll(async () => {
      opened = await openDevsetBacklog('none');
    }, 60_000);
    afterAll(async () => {
      await opened?.close();
    });

    it(`keeps nDCG@10 at or above ${BM25_NDCG_FLOOR}`, async () => {
      const result = await runSystem(devset, ourSystem('bm25', opened.backlog, 'bm25'), { warmup: false });
      expect(result.overall.queries).toBe(devset.queries.length);
      expect(result.overall.ndcg_at_10).toBeGreaterThanOrEqual(BM25_NDCG_FLOOR);
    });
  });
});
