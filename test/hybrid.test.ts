import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { TEN_LANGUAGES } from './fixtures/ten-languages.js';

/** A small backlog where the right answer shares no word with the question. */
const TASKS: Record<string, [string, string]> = {
  'TASK-0001': [
    'Users locked out after repeated failed sign-ins',
    'People type the right password yet the sign-in form rejects their credentials and then blocks them for an hour.',
  ],
  'TASK-0002': [
    'Invoice PDF totals are rounded twice',
    'The billing export rounds each line and then the sum, so totals drift by a cent.',
  ],
  'TASK-0003': [
    'Dark theme for the editor',
    'Offer a dark colour scheme for the note editor and the sidebar.',
  ],
  'TASK-0004': [
    'Verify nightly database backups',
    'Restore last night’s Postgres dump into a scratch server every morning and compare row counts.',
  ],
  'TASK-0005': [
    'Speed up search results',
    'Search takes two seconds on large workspaces; profile the ranking query.',
  ],
};

let base: string;
let service: BacklogService;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'backlog-hybrid-'));
  await mkdir(join(base, 'tasks'), { recursive: true });
  for (const [id, [title, body]] of Object.entries(TASKS)) {
    await writeFile(
      join(base, 'tasks', `${id}.md`),
      `---\nid: ${id}\ntitle: ${title}\ntype: task\nstatus: open\n---\n${body}\n`,
    );
  }
  service = await openBacklog({ dir: base, embeddings: 'bundled', embedMissing: 'wait' });
}, 120_000);
afterAll(async () => {
  await closeBacklog(service);
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

describe('hybrid search with the bundled model', () => {
  it('is ready and says which provider runs', () => {
    expect(service.semanticStatus()).toMatchObject({ provider: 'bundled', state: 'ready' });
    expect(service.diagnostics().search_mode).toBe('hybrid');
  });

  it('finds by meaning what shares no word with the query (hybrid only)', async () => {
    const query = 'cannot log into my account';
    const lexical = await service.searchUnified(query, { mode: 'bm25' });
    // Words alone do not find it (what bm25 shows of it is the fallback fill, marked semantic).
    expect(lexical.results.filter((r) => r.match === 'lexical').map((r) => r.id)).not.toContain('TASK-0001');
    const hybrid = await service.searchUnified(query, { include_scores: true });
    expect(hybrid.search_mode).toBe('hybrid');
    expect(hybrid.results[0]).toMatchObject({ id: 'TASK-0001', match: 'semantic' });
    expect(hybrid.results[0].scores).toMatchObject({ lexical: null, final: expect.any(Number) });
    expect(hybrid.results[0].scores!.vector).toBeGreaterThan(0);
  });

  it('bm25 is words only: nothing shares a word, nothing comes back, and it says so', async () => {
    const res = await service.searchUnified('cannot log into my account', { mode: 'bm25', limit: 3 });
    expect(res.search_mode).toBe('bm25');
    expect(res).toMatchObject({ total: 0, results: [] });
    expect(res.warnings).toContain('nothing matched "cannot log into my account"');
    // Hybrid answers by meaning, every result marked, and says that no word matched.
    const hybrid = await service.searchUnified('cannot log into my account', { limit: 3 });
    expect(hybrid.search_mode).toBe('hybrid');
    expect(hybrid.results.length).toBeGreaterThan(0);
    expect(hybrid.results.every((r) => r.match === 'semantic')).toBe(true);
    expect(hybrid.warnings?.join(' ')).toMatch(/no item contains these words/);
  });

  it('made-up words, ids no item has and stop-words find nothing, in every mode', async () => {
    for (const query of [
      'narwhalbyte',
      'quibblefrost zentrix',
      'task-12',
      'TASK-0999',
      'the of and',
      'what is it',
    ])
      for (const mode of ['hybrid', 'bm25', 'semantic'] as const) {
        const res = await service.searchUnified(query, { mode });
        expect({ query, mode, total: res.total, results: res.results }).toEqual({
          query,
          mode,
          total: 0,
          results: [],
        });
        expect(res.warnings?.join(' ')).toMatch(/nothing matched|only stop-words/);
      }
  });

  it('keeps lexical hits on top when the words match, and semantic mode ranks by meaning alone', async () => {
    const res = await service.searchUnified('invoice totals rounded', { include_scores: true });
    expect(res.results[0]).toMatchObject({ id: 'TASK-0002', match: 'both' });
    const semantic = await service.searchUnified('the bill adds up wrong', { mode: 'semantic' });
    expect(semantic.search_mode).toBe('semantic');
    expect(semantic.results[0].id).toBe('TASK-0002');
  });

  it('follows file changes in the vector index too', async () => {
    await writeFile(
      join(base, 'tasks', 'TASK-0006.md'),
      '---\nid: TASK-0006\ntitle: Puppy adoption form\ntype: task\nstatus: open\n---\nA page where families apply to take home a young dog from the shelter.\n',
    );
    await service.applyFile('tasks/TASK-0006.md');
    let top = '';
    for (
      const deadline = Date.now() + 5000;
      Date.now() < deadline && top !== 'TASK-0006';
      await new Promise((r) => setTimeout(r, 100))
    ) {
      top = (await service.searchUnified('canine shelter', { mode: 'semantic' })).results[0]?.id ?? '';
    }
    expect(top).toBe('TASK-0006');
  });

  it('an English-only model leaves queries in other scripts to bm25', async () => {
    const res = await service.searchUnified('вход в систему', { mode: 'hybrid' });
    expect(res.search_mode).toBe('bm25');
    expect(res.warnings?.[0]).toMatch(/English-only/);
    // Also when hybrid is only the default, and in the scripts segmented into words.
    for (const q of ['离线同步队列', 'オフライン同期', 'การซิงค์ข้อมูล', 'हिन्दी खोज']) {
      const r = await service.searchUnified(q);
      expect(r.search_mode).toBe('bm25');
      expect(r.warnings?.[0]).toMatch(/English-only/);
    }
    expect((await service.searchUnified('offline sync')).search_mode).toBe('hybrid');
  });

  it('says how much the vectors could move each hybrid answer (vector_weight)', async () => {
    // The default (coverage-short): a question no document's words fully cover keeps part of the 0.25
    // share; a query of two terms is left to the words; bm25 answers carry none.
    const question = (await service.searchUnified('slow search over the nightly invoices')).vector_weight!;
    expect(question).toBeGreaterThan(0);
    expect(question).toBeLessThan(0.25);
    expect((await service.searchUnified('dark theme')).vector_weight).toBe(0);
    expect((await service.searchUnified('dark theme', { mode: 'bm25' })).vector_weight).toBeUndefined();
  });

  it('an English-only model is not asked about queries in other languages written in Latin script', async () => {
    // Each about this backlog's sign-in task; the model would map the words it cannot read to something.
    // Only word matches come back (`Passwort` is a typo away from `password`), none by meaning.
    for (const [language, query] of Object.entries(TEN_LANGUAGES)) {
      const res = await service.searchUnified(query);
      expect({ language, mode: res.search_mode }).toEqual({ language, mode: 'bm25' });
      expect(res.results.filter((r) => r.match !== 'lexical')).toEqual([]);
      expect(res.results.every((r) => r.id === 'TASK-0001')).toBe(true);
      expect(res.warnings?.[0]).toMatch(/English-only/);
    }
    // English stays hybrid, also when it mixes in names and words the model has no piece for.
    for (const query of ['forgot my password', 'offline sync', 'Postgres dump restore', 'sign-in lockout'])
      expect((await service.searchUnified(query)).search_mode).toBe('hybrid');
  });
});
