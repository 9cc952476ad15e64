/**
 * A workspace of several backlogs (issue #22, docs/workspace.md), on real copies: the demo backlog twice
 * (alpha, gamma: the same ids in both) and the Backlog.md fixture (project_name "Backlog.md"), each with
 * its own real index. One backlog behaves as openBacklog does; several answer with `project` and
 * qualified ids; filters apply in each backlog before the merge; a failing backlog leaves the others.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBacklog, isBacklogError, openBacklog, type BacklogService } from '../src/index.js';
import { beginOpenWorkspace, closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { qualify } from '../src/workspace/ids.js';
import { BACKLOG_MD_FIXTURE, DEMO_DIR } from './helpers.js';

let root: string;
let ws: Workspace;
let alphaAlone: BacklogService;
const dirs = { alpha: '', gamma: '', fixture: '' };
const opts = { embeddings: 'none', cacheDir: false, watch: false } as const;

async function thrown(
  run: () => unknown,
): Promise<{ code: string; message: string; hint: string; details: Record<string, unknown> }> {
  try {
    await run();
  } catch (err) {
    if (isBacklogError(err))
      return { code: err.code, message: err.message, hint: err.hint, details: err.details };
    throw err;
  }
  throw new Error('expected an error');
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'backlog-search-ws-'));
  dirs.alpha = join(root, 'alpha', 'backlog');
  dirs.gamma = join(root, 'gamma', 'backlog');
  dirs.fixture = join(root, 'repo', 'backlog');
  await cp(DEMO_DIR, dirs.alpha, { recursive: true });
  await cp(DEMO_DIR, dirs.gamma, { recursive: true });
  await cp(BACKLOG_MD_FIXTURE, dirs.fixture, { recursive: true });
  // gamma gets a file whose front matter is hostile (not YAML, a huge key): its own diagnostics only.
  await writeFile(
    join(dirs.gamma, 'tasks', 'TASK-0999-hostile.md'),
    `---\nid: TASK-0999\ntitle: [unclosed\n${'k'.repeat(5000)}: &a [*a]\n---\nzeppelin hostile body\n`,
  );
  ws = await openWorkspace({
    ...opts,
    // alpha and gamma are two projects that happen to hold the same files (the same ids in both): each
    // result apart. The default (`once`, one result for the two copies) is tested below.
    versions: 'apart',
    // gamma is named by the repository above backlog/; the fixture by Backlog.md's project_name.
    backlogs: [{ dir: dirs.alpha }, { dir: join(root, 'gamma') }, { dir: dirs.fixture }],
  });
  alphaAlone = await openBacklog({ ...opts, dir: dirs.alpha });
}, 60_000);

afterAll(async () => {
  if (ws) await closeWorkspace(ws);
  if (alphaAlone) await closeBacklog(alphaAlone);
  await rm(root, { recursive: true, force: true });
});

describe('opening several backlogs', () => {
  it('names each by project_name, else the folder above backlog/, made unique', async () => {
    expect(ws.names()).toEqual(['alpha', 'gamma', 'backlog.md']);
    expect(ws.projects.map((p) => p.dir)).toEqual([dirs.alpha, dirs.gamma, dirs.fixture]);
    const twice = await openWorkspace({
      ...opts,
      backlogs: [{ dir: dirs.alpha }, { dir: dirs.alpha }, { dir: dirs.gamma, name: 'alpha-2' }],
    });
    expect(twice.names()).toEqual(['alpha', 'alpha-3', 'alpha-2']);
    await closeWorkspace(twice);
    expect(
      (await thrown(() => openWorkspace({ ...opts, backlogs: [{ dir: dirs.alpha, name: 'a:b' }] }))).code,
    ).toBe('INVALID_INPUT');
  });

  it('one backlog answers exactly as openBacklog', async () => {
    const one = await openWorkspace({ ...opts, backlogs: [{ dir: dirs.alpha }] });
    // Snippets come from bodies prepared in the background: compare the two once both are ready.
    await one.projects[0].service.index.warmedUp();
    await alphaAlone.index.warmedUp();
    const strip = <T extends { took_ms?: number }>(r: T) => ({ ...r, took_ms: 0 });
    for (const q of ['sync conflict', 'TASK-0001', 'login']) {
      expect(strip(await one.searchUnified(q, { include_related: true, group_by: 'type' }))).toEqual(
        strip(await alphaAlone.searchUnified(q, { include_related: true, group_by: 'type' })),
      );
    }
    expect(one.list({ state: 'all' })).toEqual(alphaAlone.list({ state: 'all' }));
    expect(one.get('TASK-0001')).toEqual(alphaAlone.get('TASK-0001'));
    expect(one.get(['TASK-0001', 'nope'])).toEqual(alphaAlone.get(['TASK-0001', 'nope']));
    // indexed_at is when each service read the file.
    expect({ ...one.getMetadata('EPIC-0001'), indexed_at: null }).toEqual({
      ...alphaAlone.getMetadata('EPIC-0001'),
      indexed_at: null,
    });
    // `project` is accepted (and checked) there too.
    expect((await one.searchUnified('login', { project: 'alpha' })).results.length).toBeGreaterThan(0);
    expect((await thrown(() => one.searchUnified('login', { project: 'nope' }))).code).toBe('INVALID_FILTER');
    await closeWorkspace(one);
  });

  it('reports a missing folder, a folder that is not a backlog, and serves the others', async () => {
    const empty = join(root, 'empty');
    await mkdir(empty, { recursive: true });
    const some = await openWorkspace({
      ...opts,
      backlogs: [{ dir: join(root, 'missing') }, { dir: empty, name: 'empty' }, { dir: dirs.alpha }],
    });
    expect(some.names()).toEqual(['alpha']);
    expect(some.problems.map((p) => [p.name, p.code])).toEqual([
      ['missing', 'NOT_FOUND'],
      ['empty', 'NOT_A_BACKLOG'],
    ]);
    expect(some.problems[1].hint).toMatch(/tasks\//);
    expect((await some.searchUnified('login')).total).toBeGreaterThan(0);
    const err = await thrown(() => some.searchUnified('login', { project: 'empty' }));
    expect(err.code).toBe('INVALID_FILTER');
    expect(err.message).toMatch(/could not be opened \(NOT_A_BACKLOG/);
    await closeWorkspace(some);
    expect(
      (await thrown(() => openWorkspace({ ...opts, backlogs: [{ dir: join(root, 'missing') }] }))).code,
    ).toBe('NOT_FOUND');
  });
});

describe('opening in two steps (beginOpenWorkspace: the MCP server answers before the files are read)', () => {
  it('names every backlog at once, reads the files after, and answers as openWorkspace then', async () => {
    const backlogs = [{ dir: join(root, 'missing') }, { dir: dirs.alpha }, { dir: join(root, 'gamma') }];
    const { ws: early, opened } = await beginOpenWorkspace({ ...opts, backlogs });
    expect(early.names()).toEqual(['alpha', 'gamma']);
    expect(early.problems.map((p) => [p.name, p.code])).toEqual([['missing', 'NOT_FOUND']]);
    // Before the files are read: an empty backlog each.
    expect(early.size).toBe(0);
    expect(await opened).toBe(early);
    const whole = await openWorkspace({ ...opts, backlogs });
    expect(early.size).toBe(whole.size);
    const strip = <T extends { took_ms?: number }>(r: T) => ({ ...r, took_ms: 0 });
    for (const p of [...early.projects, ...whole.projects]) await p.service.index.warmedUp();
    for (const q of ['sync conflict', 'login timeout'])
      expect(strip(await early.searchUnified(q))).toEqual(strip(await whole.searchUnified(q)));
    await closeWorkspace(early);
    await closeWorkspace(whole);
    const none = await thrown(() =>
      beginOpenWorkspace({ ...opts, backlogs: [{ dir: join(root, 'missing') }] }),
    );
    expect(none.code).toBe('NOT_FOUND');
  });
});

describe('search across projects', () => {
  it('finds items of every project, each with its project and a qualified id', async () => {
    const res = await ws.searchUnified('task board status', { limit: 30 });
    const projects = new Set(res.results.map((r) => (r as { project?: string }).project));
    expect(projects).toEqual(new Set(['alpha', 'gamma', 'backlog.md']));
    for (const r of res.results) {
      const p = (r as { project?: string }).project!;
      expect(r.id.startsWith(`${p}:`) || r.id.startsWith(`mcp://backlog/${p}/`), r.id).toBe(true);
      expect(ws.resolve(r.id)).toBe(r.id);
    }
    const alone = await Promise.all(
      ws.projects.map((p) => p.service.searchUnified('task board status', { limit: 100 })),
    );
    expect(res.total).toBe(alone.reduce((n, a) => n + a.total, 0));
  });

  it('scoped to one project, ranks as that backlog alone', async () => {
    for (const q of ['sync conflict', 'login password', 'offline']) {
      const scoped = await ws.searchUnified(q, { project: 'alpha', limit: 20 });
      const alone = await alphaAlone.searchUnified(q, { limit: 20 });
      expect(scoped.results.map((r) => r.id)).toEqual(alone.results.map((r) => qualify('alpha', r.id)));
      expect(scoped.total).toBe(alone.total);
    }
    const two = await ws.searchUnified('sync', { project: ['alpha', 'backlog.md'], limit: 50 });
    expect(new Set(two.results.map((r) => (r as { project?: string }).project))).toEqual(new Set(['alpha']));
    const all = await ws.searchUnified('sync', { project: '*', limit: 50 });
    expect(all.total).toBeGreaterThan(two.total);
  });

  it('filters in each backlog before the top-K: a status one project has is no error for the others', async () => {
    const res = await ws.searchUnified('task', { status: 'To Do', limit: 50 });
    expect(res.results.length).toBeGreaterThan(0);
    expect(res.results.every((r) => (r as { project?: string }).project === 'backlog.md')).toBe(true);
    expect(res.results.every((r) => r.status === 'To Do')).toBe(true);
    const open = await ws.searchUnified('task', { status: 'open', limit: 100 });
    expect(new Set(open.results.map((r) => (r as { project?: string }).project))).toEqual(
      new Set(['alpha', 'gamma']),
    );
    const none = await thrown(() => ws.searchUnified('task', { status: 'nowhere' }));
    expect(none.code).toBe('INVALID_FILTER');
    // A qualified parent filters in its own project only.
    const under = await ws.searchUnified('sync', { parent_id: 'gamma:EPIC-0002', limit: 50 });
    expect(under.results.length).toBeGreaterThan(0);
    expect(under.results.every((r) => r.id.startsWith('gamma:'))).toBe(true);
    const elsewhere = await thrown(() =>
      ws.searchUnified('sync', { project: 'alpha', parent_id: 'gamma:EPIC-0002' }),
    );
    expect(elsewhere.code).toBe('INVALID_FILTER');
  });

  it('pages through the merged list without gaps or repeats', async () => {
    const whole = await ws.searchUnified('the', { limit: 60 });
    const pages: string[] = [];
    for (let offset = 0; offset < 60; offset += 15)
      pages.push(...(await ws.searchUnified('the', { limit: 15, offset })).results.map((r) => r.id));
    expect(pages).toEqual(whole.results.map((r) => r.id));
  });

  it('groups and related items stay in scope and carry the project', async () => {
    const res = await ws.searchUnified('sync', { group_by: 'type', include_related: true, limit: 5 });
    const counted = res.groups!.reduce((n, g) => n + g.count, 0);
    expect(counted).toBe(res.total);
    expect(res.related!.length).toBeGreaterThan(0);
    const page = new Set(res.results.map((r) => r.id));
    for (const r of res.related!) {
      expect(page.has(r.source), r.source).toBe(true);
      expect((r as { project?: string }).project).toBe(r.source.split(':')[0]);
    }
    const scoped = await ws.searchUnified('sync', {
      group_by: 'type',
      include_related: true,
      project: 'gamma',
    });
    for (const r of [...scoped.groups!.flatMap((g) => g.results), ...scoped.related!])
      expect((r as { project?: string }).project).toBe('gamma');
  });

  it("one backlog's hostile file stays in that backlog; one failing backlog leaves the others", async () => {
    const gamma = ws.byName('gamma')!.service;
    expect(gamma.diagnostics().files.some((f) => f.path.includes('TASK-0999'))).toBe(true);
    for (const name of ['alpha', 'backlog.md'])
      expect(
        ws
          .byName(name)!
          .service.diagnostics()
          .files.some((f) => f.path.includes('TASK-0999')),
      ).toBe(false);
    const hostile = await ws.searchUnified('zeppelin hostile');
    expect(hostile.results.map((r) => r.id)).toContain('gamma:TASK-0999');
    // A merged bm25 page builds its results with resultsFor; other searches use searchUnified.
    const original = { searchUnified: gamma.searchUnified, resultsFor: gamma.resultsFor };
    gamma.searchUnified = () => Promise.reject(new Error('disk on fire'));
    gamma.resultsFor = () => {
      throw new Error('disk on fire');
    };
    try {
      const res = await ws.searchUnified('sync');
      expect(res.results.length).toBeGreaterThan(0);
      expect(res.results.some((r) => r.id.startsWith('gamma:'))).toBe(false);
      expect(res.warnings).toContain('left out, failed: gamma: disk on fire');
      const grouped = await ws.searchUnified('sync', { group_by: 'type' });
      expect(grouped.results.some((r) => r.id.startsWith('gamma:'))).toBe(false);
      expect(grouped.warnings).toContain('left out, failed: gamma: disk on fire');
    } finally {
      Object.assign(gamma, original);
    }
  });
});

describe("versions: 'once', the default (one document in several projects)", () => {
  it('shows a copy, whole or cut short, once: as the fuller version, at the better place, also_in the other', async () => {
    // `cut`, listed first, is the demo with TASK-0001's text cut after its first lines.
    const cutDir = join(root, 'cut', 'backlog');
    await cp(DEMO_DIR, cutDir, { recursive: true });
    const file = join(cutDir, 'tasks', 'TASK-0001-login-rate-limit.md');
    const text = await readFile(file, 'utf8');
    const end = text.indexOf('\n---\n', 4) + 5;
    await writeFile(file, text.slice(0, end) + text.slice(end).split('\n').slice(0, 4).join('\n'));
    const backlogs = [{ dir: cutDir, name: 'cut' }, { dir: dirs.alpha }];
    // The default is `once`; `apart` is the option.
    const once = await openWorkspace({ ...opts, backlogs });
    const apart = await openWorkspace({ ...opts, backlogs, versions: 'apart' });
    expect([once.versions, apart.versions]).toEqual(['once', 'apart']);
    try {
      const query = 'rate-limit login endpoint';
      const both = (await apart.searchUnified(query, { limit: 50 })).results.map((r) => r.id);
      expect(both).toEqual(expect.arrayContaining(['cut:TASK-0001', 'alpha:TASK-0001']));
      for (const options of [{}, { include_related: true }]) {
        const res = await once.searchUnified(query, { limit: 50, ...options });
        const bare = res.results.map((r) => r.id.split(':')[1]);
        expect(new Set(bare).size).toBe(bare.length);
        // The fuller version is alpha's; of two equal ones, the first project's.
        expect(res.results.find((r) => r.id.endsWith(':TASK-0001'))).toMatchObject({
          id: 'alpha:TASK-0001',
          also_in: ['cut:TASK-0001'],
        });
        const equal = res.results.find((r) => !r.id.endsWith(':TASK-0001'))!;
        expect(equal.id.startsWith('cut:')).toBe(true);
        expect(equal.also_in).toEqual([equal.id.replace('cut:', 'alpha:')]);
        expect(res.results.length).toBeLessThan(both.length);
      }
      // Pages go on without gaps or repeats.
      const whole = (await once.searchUnified('sync', { limit: 20 })).results.map((r) => r.id);
      const paged: string[] = [];
      for (let offset = 0; offset < 20; offset += 4)
        paged.push(...(await once.searchUnified('sync', { limit: 4, offset })).results.map((r) => r.id));
      expect(paged).toEqual(whole);
      // Scoped to one project: that backlog's own answer.
      const scoped = await once.searchUnified(query, { project: 'alpha' });
      expect(scoped.results.some((r) => r.also_in)).toBe(false);
    } finally {
      await closeWorkspace(once);
      await closeWorkspace(apart);
    }
  });
});

describe('a query word one project has is no typo in the others', () => {
  it('is not typo-expanded in another project of the scope; scoped to that project, it is', async () => {
    const task = (id: string, title: string) =>
      `---\nid: ${id}\ntitle: ${title}\ntype: task\nstatus: todo\n---\n\n${title}.\n`;
    const made: string[] = [];
    for (const [name, title] of [
      ['rocks', 'Move the boulder off the path'],
      ['words', 'Make the heading bolder'],
    ]) {
      const dir = join(root, 'typo', name, 'backlog');
      await mkdir(join(dir, 'tasks'), { recursive: true });
      await writeFile(join(dir, 'tasks', 'TASK-0001-x.md'), task('TASK-0001', title));
      made.push(dir);
    }
    const typo = await openWorkspace({ ...opts, backlogs: made.map((dir) => ({ dir })) });
    try {
      // `words` alone reads "boulder" as a typo of "bolder" (one edit).
      expect((await typo.searchUnified('boulder', { project: 'words' })).results.map((r) => r.id)).toEqual([
        'words:TASK-0001',
      ]);
      // Over both, rocks has the word: words does not expand it (the fast path and the general one).
      for (const options of [{}, { include_related: true }])
        expect((await typo.searchUnified('boulder', options)).results.map((r) => r.id)).toEqual([
          'rocks:TASK-0001',
        ]);
      // A word neither has is still a typo in each.
      expect((await typo.searchUnified('boulderr')).results.map((r) => r.id).sort()).toEqual([
        'rocks:TASK-0001',
      ]);
    } finally {
      await closeWorkspace(typo);
    }
  });
});

describe('ids and lists across projects', () => {
  it('a bare id in one project resolves there; in several it is AMBIGUOUS_ID with the candidates', async () => {
    expect(ws.get('BACK-222').id).toBe('backlog.md:BACK-222');
    expect(ws.get('backlog.md:222.1').id).toBe('backlog.md:BACK-222.1');
    const err = await thrown(() => ws.get('TASK-0001'));
    expect(err.code).toBe('AMBIGUOUS_ID');
    expect(err.details.candidates).toEqual(['alpha:TASK-0001', 'gamma:TASK-0001']);
    expect(err.hint).toMatch(/alpha:TASK-0001/);
    expect(ws.get('TASK-0001', { project: 'gamma' }).id).toBe('gamma:TASK-0001');
    const item = ws.get('alpha:task-0001');
    expect(item).toMatchObject({ id: 'alpha:TASK-0001', project: 'alpha' });
    const doc = ws.projects[0].service.list({ types: 'resource' }).results[0];
    const uri = ws.get(`mcp://backlog/alpha/${doc.path}`);
    expect(uri.project).toBe('alpha');
    expect(ws.get(uri.id).path).toBe(doc.path);
    expect((await thrown(() => ws.get('nope:TASK-0001'))).code).toBe('NOT_FOUND');
    const batch = ws.get(['TASK-0001', 'gamma:TASK-0001']);
    expect(batch.map((e) => e.status)).toEqual(['error', 'ok']);
    const meta = ws.getMetadata('gamma:EPIC-0002');
    expect(meta.project).toBe('gamma');
    expect(meta.links.children.every((c) => c.startsWith('gamma:'))).toBe(true);
  });

  it('list merges the projects in one order, each item with its project', () => {
    const all = ws.list({ state: 'all', limit: 1000 });
    const each = ws.projects.map((p) => p.service.list({ state: 'all', limit: 1000 }));
    expect(all.total).toBe(each.reduce((n, r) => n + r.total, 0));
    expect(new Set(all.results.map((r) => (r as { project?: string }).project))).toEqual(new Set(ws.names()));
    const byId = ws.list({ sort: 'id', state: 'all', project: ['alpha', 'backlog.md'], limit: 5 });
    expect(byId.results.map((r) => r.id.split(':')[1])).toEqual(
      [...each[0].results, ...each[2].results]
        .map((r) => r.id)
        .sort(new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).compare)
        .slice(0, 5),
    );
    expect(
      new Set(ws.list({ project: 'gamma' }).results.map((r) => (r as { project?: string }).project)),
    ).toEqual(new Set(['gamma']));
  });
});

describe('writes across projects', () => {
  it('need a project when several are in scope, and go where a qualified id points', async () => {
    const err = await thrown(() => ws.create({ title: 'Somewhere' }));
    expect(err.code).toBe('PROJECT_REQUIRED');
    expect(err.details.projects).toEqual(['alpha', 'gamma', 'backlog.md']);
    const created = await ws.create({ title: 'Quokka migration plan', project: 'alpha' });
    expect(created.project).toBe('alpha');
    expect(created.id).toMatch(/^alpha:TASK-\d+$/);
    expect(created.item!.id).toBe(created.id);
    const found = await ws.searchUnified('quokka');
    expect(found.results.map((r) => r.id)).toEqual([created.id]);
    const updated = await ws.update({ id: created.id, status: 'in_progress' });
    expect(updated.item!.status).toBe('in_progress');
    expect((await thrown(() => ws.update({ id: 'TASK-0001', status: 'done' }))).code).toBe('AMBIGUOUS_ID');
    const res = await ws.writeResource({
      path: 'mcp://backlog/gamma/resources/notes/ws.md',
      content: '# Wombat\n',
    });
    expect(res).toMatchObject({ project: 'gamma', uri: 'mcp://backlog/gamma/resources/notes/ws.md' });
    expect((await thrown(() => ws.writeResource({ path: 'resources/notes/x.md', content: 'x' }))).code).toBe(
      'PROJECT_REQUIRED',
    );
    const parentElsewhere = await thrown(() =>
      ws.create({ title: 'Child', project: 'alpha', parent_id: 'gamma:EPIC-0001' }),
    );
    expect(parentElsewhere.code).toBe('INVALID_FILTER');
    const deleted = await ws.delete({ id: created.id });
    expect(deleted.project).toBe('alpha');
  });
});

describe('live updates per backlog', () => {
  it("each backlog's watcher applies its own files", async () => {
    const live = await openWorkspace({
      embeddings: 'none',
      cacheDir: false,
      watch: true,
      backlogs: [{ dir: dirs.alpha }, { dir: dirs.fixture }],
    });
    try {
      await writeFile(
        join(dirs.fixture, 'tasks', 'back-901 - Platypus-sync.md'),
        '---\nid: BACK-901\ntitle: Platypus sync\nstatus: To Do\n---\nThe platypus importer.\n',
      );
      let found: string[] = [];
      for (let i = 0; i < 100 && found.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        found = (await live.searchUnified('platypus')).results.map((r) => r.id);
      }
      expect(found).toEqual(['backlog.md:BACK-901']);
    } finally {
      await closeWorkspace(live);
    }
  }, 60_000);
});
