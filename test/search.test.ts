import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openBacklog, type BacklogService } from '../src/index.js';
import { BacklogError } from '../src/errors.js';
import { tempBacklog } from './helpers.js';

let service: BacklogService;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
  service = await openBacklog({ dir });
});
afterAll(() => cleanup());

const search = (query: string, options = {}) => service.searchUnified(query, options);
const ids = async (query: string, options = {}) => (await search(query, options)).results.map((r) => r.id);

async function expectError(fn: () => unknown, code: string, field?: string): Promise<BacklogError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BacklogError);
    const e = err as BacklogError;
    expect(e.code).toBe(code);
    expect(e.hint.length).toBeGreaterThan(5);
    if (field) expect(e.details.field).toBe(field);
    return e;
  }
  throw new Error(`expected ${code}`);
}

describe('searchUnified: result shape', () => {
  it('returns results with ids, paths relative to the root, snippets and timing', async () => {
    const res = await search('rate limit login', { include_scores: true, limit: 3 });
    expect(res.query).toBe('rate limit login');
    expect(res.search_mode).toBe('bm25');
    expect(res.took_ms).toBeGreaterThanOrEqual(0);
    expect(res.results).toHaveLength(3);
    const top = res.results[0];
    expect(top).toMatchObject({
      id: 'TASK-0001',
      type: 'task',
      parent_id: 'EPIC-0001',
      path: 'tasks/TASK-0001-login-rate-limit.md',
    });
    expect(top.snippet.text.length).toBeGreaterThan(20);
    expect(top.snippet.text.length).toBeLessThanOrEqual(125);
    expect(top.matched_fields).toEqual(expect.arrayContaining(['title', 'body']));
    expect(top.score).toBeGreaterThan(res.results[1].score!);
    expect(top.content).toBeUndefined();
    expect((await search('rate limit', { include_content: true, limit: 1 })).results[0].content).toContain(
      'rate-limit',
    );
  });

  it('pages with limit and offset and says where the next page starts', async () => {
    const all = await ids('sync', { limit: 100 });
    expect(all.length).toBeGreaterThan(6);
    const page1 = await search('sync', { limit: 3 });
    const page2 = await search('sync', { limit: 3, offset: 3 });
    expect(page1.next_offset).toBe(3);
    expect(page1.total).toBe(all.length);
    expect([...page1.results, ...page2.results].map((r) => r.id)).toEqual(all.slice(0, 6));
    expect((await search('sync', { limit: 100 })).next_offset).toBeUndefined();
  });

  it('no match is an empty result, not an error', async () => {
    expect(await search('xylophonequartz')).toMatchObject({ results: [], total: 0 });
  });

  it('is deterministic', async () => {
    expect((await search('offline sync conflict')).results).toEqual(
      (await search('offline sync conflict')).results,
    );
  });
});

describe('searchUnified: filters', () => {
  it('types', async () => {
    const res = await ids('sync', { types: 'epic' });
    expect(res.length).toBeGreaterThan(0);
    for (const id of res) expect(id).toMatch(/^EPIC-/);
    for (const r of (await search('sync', { types: ['resource'] })).results) expect(r.type).toBe('resource');
    expect((await ids('sync', { types: ['task', 'epic'] })).every((id) => /^(TASK|EPIC)-/.test(id))).toBe(
      true,
    );
  });

  it('status, one value or a list, case-insensitive', async () => {
    const done = (await search('sync', { status: 'done' })).results;
    expect(done.length).toBeGreaterThan(0);
    for (const r of done) expect(r.status).toBe('done');
    const two = (await search('sync', { status: ['open', 'in_progress'], limit: 100 })).results;
    expect(new Set(two.map((r) => r.status))).toEqual(new Set(['open', 'in_progress']));
    expect(await ids('sync', { status: 'DONE' })).toEqual(await ids('sync', { status: 'done' }));
  });

  it('parent_id includes the item and all its descendants', async () => {
    const under = await ids('rate limit', { parent_id: 'EPIC-0001', limit: 100 });
    expect(under).toEqual(expect.arrayContaining(['TASK-0001', 'TASK-0002', 'TASK-0003']));
    expect(await ids('authentication', { parent_id: 'EPIC-0001', limit: 100 })).toContain('EPIC-0001');
    for (const id of await ids('sync', { parent_id: 'EPIC-0001', limit: 100 })) {
      let item = service.get(id);
      const chain = [item.id];
      while (item.parent_id) {
        chain.push(item.parent_id);
        item = service.get(item.parent_id);
      }
      expect(chain).toContain('EPIC-0001');
    }
    expect(await ids('rate limit', { parent_id: 'epic-1' })).toEqual(
      await ids('rate limit', { parent_id: 'EPIC-0001' }),
    );
  });

  it('tags, author, and their combination (AND across fields, OR within a list)', async () => {
    const mobile = (await search('sync', { tags: 'mobile', limit: 100 })).results;
    expect(mobile.length).toBeGreaterThan(0);
    for (const r of mobile) expect(service.get(r.id).tags).toContain('mobile');
    const anyOf = await ids('the', { tags: ['auth', 'billing'] });
    expect(anyOf).toEqual([]); // stop-word query matches nothing
    const auth = (await search('token', { tags: ['auth'], author: 'Alice Smith', limit: 100 })).results;
    expect(auth.length).toBeGreaterThan(0);
    for (const r of auth) {
      const item = service.get(r.id);
      expect(item.tags).toContain('auth');
      expect(item.author).toBe('Alice Smith');
    }
  });

  it('path globs, folders and file types', async () => {
    const adr = (await search('database', { path: 'resources/adr/*.md', limit: 100 })).results;
    expect(adr.length).toBeGreaterThan(0);
    for (const r of adr) expect(r.path).toMatch(/^resources\/adr\/[^/]+\.md$/);
    const inResources = (await search('sync', { folder: 'resources', limit: 100 })).results;
    expect(inResources.length).toBeGreaterThan(0);
    for (const r of inResources) expect(r.path.startsWith('resources/')).toBe(true);
    expect(await ids('sync', { folder: 'resources/' })).toEqual(await ids('sync', { folder: 'resources' }));
    const json = (await search('flag', { file_type: 'json' })).results;
    expect(json.length).toBeGreaterThan(0);
    for (const r of json) expect(r.path.endsWith('.json')).toBe(true);
    expect(await ids('flag', { file_type: '.json' })).toEqual(await ids('flag', { file_type: 'json' }));
    expect(await ids('sync', { path: 'nowhere/*.md' })).toEqual([]);
  });
});

describe('searchUnified: sort and id routing', () => {
  it('sort recent orders matches by updated_at', async () => {
    const res = (await search('sync', { sort: 'recent', limit: 100 })).results.filter(
      (r) => r.type !== 'resource',
    );
    expect(res.length).toBeGreaterThan(3);
    const times = res.map((r) => Date.parse(service.get(r.id).updated_at!));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('an id query returns that item first, in any spelling', async () => {
    for (const q of ['TASK-0012', 'task-12', 'task 12', 'TASK 0012', ' task-0012 '])
      expect((await ids(q))[0]).toBe('TASK-0012');
    expect((await ids('EPIC-0003'))[0]).toBe('EPIC-0003');
  });

  it('an id query respects filters', async () => {
    expect(await ids('TASK-0012', { types: 'epic' })).not.toContain('TASK-0012');
  });
});

describe('searchUnified: errors', () => {
  it('an empty query is INVALID_QUERY', async () => {
    await expectError(() => search(''), 'INVALID_QUERY');
    await expectError(() => search('   '), 'INVALID_QUERY');
    await expectError(() => search('x'.repeat(5000)), 'INVALID_QUERY');
  });

  it('bad filter values are INVALID_FILTER naming the field', async () => {
    await expectError(() => search('sync', { types: 'story' }), 'INVALID_FILTER', 'types');
    await expectError(() => search('sync', { status: 'someday' }), 'INVALID_FILTER', 'status');
    await expectError(() => search('sync', { parent_id: 'EPIC-0999' }), 'INVALID_FILTER', 'parent_id');
    await expectError(() => search('sync', { limit: 0 }), 'INVALID_FILTER', 'limit');
    await expectError(() => search('sync', { limit: 101 }), 'INVALID_FILTER', 'limit');
    await expectError(() => search('sync', { offset: -1 }), 'INVALID_FILTER', 'offset');
    await expectError(() => search('sync', { sort: 'newest' } as never), 'INVALID_FILTER', 'sort');
  });

  it('unknown options are rejected with a hint naming the right one', async () => {
    const e = await expectError(() => search('sync', { top_k: 3 } as never), 'INVALID_FILTER', 'top_k');
    expect(e.hint).toContain('limit');
  });

  it('a requested mode that is not available is said, not silently dropped', async () => {
    expect((await search('sync', { mode: 'hybrid' })).warnings?.[0]).toMatch(/hybrid/);
  });
});

describe('list, get, getMetadata', () => {
  it('list filters without a query and counts by status', async () => {
    const res = service.list({ types: ['task'] });
    expect(res.total).toBe(37);
    expect(Object.values(res.counts_by_status).reduce((a, b) => a + b, 0)).toBe(37);
    expect(service.list({ parent_id: 'EPIC-0001', sort: 'id' }).results[0].id).toBe('EPIC-0001');
  });

  it('get accepts ids, resource URIs and paths; batch gets return per-item errors', async () => {
    expect(service.get('task 7').id).toBe('TASK-0007');
    expect(service.get('resources/glossary.txt').id).toBe('mcp://backlog/resources/glossary.txt');
    await expectError(() => service.get('TASK-9999'), 'NOT_FOUND');
    const batch = service.get(['TASK-0001', 'TASK-9999', 'mcp://backlog/resources/glossary.txt']);
    expect(batch.map((e) => e.status)).toEqual(['ok', 'error', 'ok']);
    expect(batch[1]).toMatchObject({ id: 'TASK-9999', error: { code: 'NOT_FOUND' } });
  });

  it('getMetadata has every field, null when missing, and links', async () => {
    const meta = service.getMetadata('EPIC-0001');
    expect(meta).toMatchObject({ id: 'EPIC-0001', type: 'epic', file_type: 'md' });
    expect(meta.links.parent).toBeNull();
    expect(meta.links.children).toEqual(expect.arrayContaining(['TASK-0001']));
    expect(meta.indexed_at).not.toBeNull();
    expect(meta.size).toBeGreaterThan(100);
    const txt = service.getMetadata('resources/glossary.txt');
    expect(txt.frontmatter).toEqual({});
    expect(txt.links).toEqual({ parent: null, children: [], references: [] });
  });
});

describe('applyFile / removeFile keep the index in step with the files', () => {
  it('adds, changes, re-parents and removes', async () => {
    await writeFile(
      join(dir, 'tasks/TASK-0950-new.md'),
      '---\nid: TASK-0950\ntitle: Quokka exporter\ntype: task\nstatus: open\nparent_id: EPIC-0002\n---\nExport quokka data.\n',
    );
    await service.applyFile('tasks/TASK-0950-new.md');
    expect(await ids('quokka')).toEqual(['TASK-0950']);
    expect(await ids('quokka', { parent_id: 'EPIC-0002' })).toEqual(['TASK-0950']);

    const text = await readFile(join(dir, 'tasks/TASK-0950-new.md'), 'utf8');
    await writeFile(
      join(dir, 'tasks/TASK-0950-new.md'),
      text.replace('EPIC-0002', 'EPIC-0003').replace('Quokka', 'Wombat'),
    );
    await service.applyFile('tasks/TASK-0950-new.md');
    expect(await ids('quokka')).toEqual(['TASK-0950']); // still in the body
    expect(await ids('wombat')).toEqual(['TASK-0950']);
    expect(await ids('quokka', { parent_id: 'EPIC-0002' })).toEqual([]);
    expect(await ids('quokka', { parent_id: 'EPIC-0003' })).toEqual(['TASK-0950']);

    // Moving a parent moves its descendants in parent_id filters too.
    const sub =
      '---\nid: TASK-0951\ntitle: Quokka subtask\ntype: task\nstatus: open\nparent_id: TASK-0950\n---\nbody\n';
    await writeFile(join(dir, 'tasks/TASK-0951-sub.md'), sub);
    await service.applyFile('tasks/TASK-0951-sub.md');
    expect(await ids('quokka', { parent_id: 'EPIC-0003' })).toEqual(
      expect.arrayContaining(['TASK-0950', 'TASK-0951']),
    );

    await rename(join(dir, 'tasks/TASK-0950-new.md'), join(dir, 'tasks/TASK-0950-renamed.md'));
    service.removeFile('tasks/TASK-0950-new.md');
    await service.applyFile('tasks/TASK-0950-renamed.md');
    expect(service.get('TASK-0950').path).toBe('tasks/TASK-0950-renamed.md');

    await rm(join(dir, 'tasks/TASK-0950-renamed.md'));
    expect(service.removeFile('tasks/TASK-0950-renamed.md')).toBe(true);
    expect(await ids('wombat')).toEqual([]);
    expect((await ids('quokka subtask'))[0]).toBe('TASK-0951');
    expect(await ids('quokka', { parent_id: 'EPIC-0003' })).toEqual([]);
  });
});

describe('searchUnified: did you mean', () => {
  it('a query that finds nothing gets the query as the backlog spells it, when that finds something', async () => {
    // Two swaps in each word: one is matched as a typo (below), two only suggested.
    const res = await search('Dtaabsae fialovre');
    expect(res).toMatchObject({ total: 0, results: [], suggestions: ['database failover'] });
    expect(res.warnings).toContain('nothing matched "Dtaabsae fialovre"; did you mean "database failover"?');
    expect((await search(res.suggestions![0])).total).toBeGreaterThan(0);
  });

  it('no suggestion for nonsense, for numbers, or when the corrected query finds nothing under the filters', async () => {
    for (const query of ['narwhalbyte', 'qzxv', 'TASK-0999'])
      expect(await search(query)).toMatchObject({
        total: 0,
        warnings: [expect.stringMatching(/^nothing matched/)],
      });
    expect((await search('narwhalbyte')).suggestions).toBeUndefined();
    // No epic says "database": the corrected query would find nothing there either.
    expect((await search('database', { types: 'epic' })).total).toBe(0);
    const types = await search('dtaabsae', { types: 'epic' });
    expect(types.total).toBe(0);
    expect(types.suggestions).toBeUndefined();
    expect((await search('dtaabsae')).suggestions).toEqual(['database']);
  });

  it('two swapped letters anywhere in the word count as one edit: typo matches and suggestions', async () => {
    // `login` is in TASK-0001's title; each swap is two edits for a plain Levenshtein distance.
    for (const query of ['lgoin', 'loign', 'logni', 'olgin']) {
      const res = await search(query);
      expect(res.results.map((r) => r.id)).toContain('TASK-0001');
      expect(res.results[0].match).toBe('lexical');
    }
    // A four-letter word is not expanded as a typo, so nothing matches: "did you mean" offers the word.
    for (const query of ['ysnc', 'snyc', 'sycn'])
      expect(await search(query)).toMatchObject({ total: 0, suggestions: ['sync'] });
  });
});
