/**
 * The viewer over a workspace, in real headless Chromium: a real Workspace of two temp copies (the demo
 * backlog, native; the Backlog.md fixture) served by the real server with the viewer built by Vite. The
 * project switcher, the URL keeping it, the spotlight's scope and each hit's project, the board per
 * project, the detail's project; and no switcher with one backlog.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { spotlightParams } from '../viewer/src/search-params.js';
import { parseState, serializeState } from '../viewer/src/state-url.js';
import { NATIVE_VOCABULARY, mergeVocabularies, vocabularyOf } from '../viewer/src/vocabulary.js';
import { BACKLOG_MD_FIXTURE, DEMO_DIR } from './helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium } from './viewer-browser.js';

/** In the page (the tests' types have no DOM library). */
declare function getComputedStyle(element: unknown): { fontSize: string };

if (!HAS_CHROMIUM)
  process.stderr.write(
    'viewer-workspace: /usr/bin/chromium not found; skipped (apt-get install chromium).\n',
  );

describe.skipIf(!HAS_CHROMIUM)('viewer over a workspace, in Chromium', () => {
  let ws: Workspace;
  let server: RunningHttpServer;
  let single: RunningHttpServer;
  /** demo and a copy of it (`twin`): each document once in the spotlight, "also in twin". */
  let twins: Workspace;
  let twinServer: RunningHttpServer;
  let context: BrowserContext;
  let page: Page;
  let root: string;
  const pageErrors: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'backlog-viewer-ws-'));
    await cp(DEMO_DIR, join(root, 'demo', 'backlog'), { recursive: true });
    await cp(BACKLOG_MD_FIXTURE, join(root, 'repo', 'backlog'), { recursive: true });
    const [built, browser] = await Promise.all([buildViewer(), launchChromium()]);
    cleanups.push(built.cleanup, browser.close, () => rm(root, { recursive: true, force: true }));
    ws = await openWorkspace({
      embeddings: 'none',
      cacheDir: false,
      backlogs: [{ dir: join(root, 'demo') }, { dir: join(root, 'repo') }],
    });
    cleanups.unshift(() => closeWorkspace(ws));
    server = await startHttpServer({ service: ws, port: 0, viewerDir: built.dir });
    // The same viewer over one of the backlogs alone.
    single = await startHttpServer({ service: ws.projects[0].service, port: 0, viewerDir: built.dir });
    cleanups.unshift(server.close, single.close);
    await cp(DEMO_DIR, join(root, 'twin', 'backlog'), { recursive: true });
    twins = await openWorkspace({
      embeddings: 'none',
      cacheDir: false,
      backlogs: [{ dir: join(root, 'demo') }, { dir: join(root, 'twin') }],
    });
    twinServer = await startHttpServer({ service: twins, port: 0, viewerDir: built.dir });
    cleanups.unshift(twinServer.close, () => closeWorkspace(twins));
    context = browser.context;
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.setDefaultTimeout(10_000);
  }, 120_000);

  afterAll(async () => {
    for (const c of cleanups) await c().catch(() => undefined);
  });

  const switcher = () => page.getByRole('combobox', { name: 'Project' });
  const rowIds = () => page.$$eval('.list-view .row', (rows) => rows.map((r) => r.getAttribute('data-id')));
  const rowProjects = () =>
    page.$$eval('.list-view .row', (rows) =>
      rows.map((r) => r.querySelector('.project-badge')?.getAttribute('data-project') ?? null),
    );
  const projectOf = (id: string | null) =>
    id?.startsWith('mcp://backlog/') ? id.split('/')[3] : id?.slice(0, id.indexOf(':'));
  const listed = (project?: string) =>
    ws
      .list({ types: ['task', 'epic'], limit: 1000, ...(project ? { project } : {}) })
      .results.map((r) => r.id)
      .sort();

  it('shows a switcher (All, then each project); All lists both projects, each row naming its own', async () => {
    await page.goto(`${server.url}/`);
    await page.waitForSelector('.list-view .row');
    const options = await switcher().locator('option').allTextContents();
    expect(options[0]).toBe('All projects');
    expect(options.slice(1).map((o) => o.replace(/ \(\d+\)$/, ''))).toEqual(['demo', 'backlog.md']);
    expect(await page.textContent('.brand-name')).toBe('2 projects');
    await expect.poll(async () => (await rowIds()).sort()).toEqual(listed());
    const ids = await rowIds();
    expect(await rowProjects()).toEqual(ids.map(projectOf));
    expect(new Set(await rowProjects())).toEqual(new Set(['demo', 'backlog.md']));
  });

  it('switching keeps the choice in the URL: the list is that project, a reload keeps it, Back returns to All', async () => {
    await switcher().selectOption('backlog.md');
    await page.waitForURL(/[?&]project=backlog\.md/);
    await expect.poll(async () => (await rowIds()).sort()).toEqual(listed('backlog.md'));
    // One project: its own words, its name in the header, no project badge on the rows.
    expect(await page.textContent('.brand-name')).toBe('Backlog.md');
    expect(await page.$$('.list-view .project-badge')).toHaveLength(0);
    expect(await page.getByRole('group', { name: 'Type' }).textContent()).toContain('Documents');

    await page.reload();
    await page.waitForSelector('.list-view .row');
    expect(await switcher().inputValue()).toBe('backlog.md');
    await expect.poll(async () => (await rowIds()).sort()).toEqual(listed('backlog.md'));

    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('project='));
    expect(await switcher().inputValue()).toBe('');
    await expect.poll(async () => (await rowIds()).sort()).toEqual(listed());
  });

  it('the spotlight searches the chosen scope; under All each hit shows its project', async () => {
    const query = 'task';
    const hits = async () => {
      await page.waitForSelector('#sl-list[data-key]', { state: 'attached' });
      return page.$$eval('#sl-list [role=option]', (o) =>
        o.map((e) => ({
          id: e.getAttribute('data-id'),
          project: e.querySelector('.project-badge')?.getAttribute('data-project') ?? null,
        })),
      );
    };
    await page.goto(`${server.url}/?q=${query}`);
    const all = await hits();
    const expected = await ws.searchUnified(query, spotlightParams(query, [], 'relevant'));
    expect(all.map((h) => h.id)).toEqual(expected.results.map((r) => r.id));
    expect(all.map((h) => h.project)).toEqual(
      expected.results.map((r) => (r as { project?: string }).project),
    );
    expect(new Set(all.map((h) => h.project))).toEqual(new Set(['demo', 'backlog.md']));

    await page.goto(`${server.url}/?project=demo&q=${query}`);
    await page.waitForSelector(`#sl-list[data-key="${query}||relevant|demo"]`, { state: 'attached' });
    const demo = await hits();
    const expectedDemo = await ws.searchUnified(query, spotlightParams(query, [], 'relevant', 'demo'));
    expect(demo.map((h) => h.id)).toEqual(expectedDemo.results.map((r) => r.id));
    expect(demo.every((h) => projectOf(h.id) === 'demo')).toBe(true);
    // Picking a hit opens it and keeps the project in the URL.
    await page.keyboard.press('Enter');
    await page.waitForSelector('.detail-body');
    expect(new URL(page.url()).searchParams.get('project')).toBe('demo');
  });

  it('a document two projects hold is one hit in the spotlight, saying "also in" the other project', async () => {
    const query = 'sync';
    await page.goto(`${twinServer.url}/?q=${query}`);
    await page.waitForSelector('#sl-list[data-key]', { state: 'attached' });
    const hits = await page.$$eval('#sl-list [role=option]', (o) =>
      o.map((e) => ({
        id: e.getAttribute('data-id'),
        also: e.querySelector('.sl-also')?.textContent ?? null,
        ids: e.querySelector('.sl-also')?.getAttribute('data-also') ?? null,
      })),
    );
    const expected = await twins.searchUnified(query, spotlightParams(query, [], 'relevant'));
    expect(hits.map((h) => h.id)).toEqual(expected.results.map((r) => r.id));
    expect(hits.length).toBeGreaterThan(1);
    for (const [i, h] of hits.entries()) {
      expect(h.also).toBe('also in twin');
      expect(h.ids).toBe(expected.results[i].also_in!.join(' '));
    }
    // Styled as the rest of the hit: small and muted, on the title's line.
    const style = await page.$eval('.sl-also', (e) => ({
      size: parseFloat(getComputedStyle(e).fontSize),
      line: e.parentElement!.className,
    }));
    expect(style.size).toBeLessThan(13);
    expect(style.line).toBe('sl-line');
    // One project chosen: its own answer, nothing "also in".
    await page.goto(`${twinServer.url}/?project=twin&q=${query}`);
    await page.waitForSelector(`#sl-list[data-key="${query}||relevant|twin"]`, { state: 'attached' });
    expect(await page.$$('.sl-also')).toHaveLength(0);
    expect(await page.$$('#sl-list [role=option]')).toHaveLength(hits.length);
  });

  it('the board of All has one section per project, each with its own columns; one project has one board', async () => {
    await page.goto(`${server.url}/?view=board`);
    await page.waitForSelector('.board-section .card');
    const sections = await page.$$eval('.board-section', (s) =>
      s.map((e) => ({
        project: e.getAttribute('data-project'),
        columns: [...e.querySelectorAll('.column')].map((c) => c.getAttribute('data-status')),
        cards: [...e.querySelectorAll('.card')].map((c) => c.getAttribute('data-id')),
      })),
    );
    expect(sections.map((s) => s.project)).toEqual(['demo', 'backlog.md']);
    for (const s of sections) expect(s.cards.every((id) => projectOf(id) === s.project)).toBe(true);
    const bmd = ws.projects[1].service.format.config.statuses.map((x) =>
      x.toLowerCase().replace(/\s+/g, '_'),
    );
    expect(sections[1].columns.slice(0, bmd.length)).toEqual(bmd);
    expect(sections[0].columns).toContain('in_progress');
    expect(sections[0].columns).not.toContain('to_do');
    expect(await page.$$('.board-section .project-badge')).toHaveLength(0);

    await page.getByRole('link', { name: 'Backlog.md' }).first().click();
    await page.waitForURL(/project=backlog\.md/);
    await page.waitForSelector('.board .card');
    expect(await page.$$('.board-section')).toHaveLength(0);
    const columns = await page.$$eval('.board .column', (c) => c.map((e) => e.getAttribute('data-status')));
    expect(columns.slice(0, bmd.length)).toEqual(bmd);
  });

  it('the detail shows its project, and its parent in that project', async () => {
    await page.goto(`${server.url}/?item=${encodeURIComponent('backlog.md:BACK-222.1')}`);
    await page.waitForSelector('.detail-body');
    const fields = await page.$$eval('.fields dt, .fields dd', (e) => e.map((x) => x.textContent));
    expect(fields[fields.indexOf('Project') + 1]).toBe('backlog.md');
    expect(await page.getAttribute('.parent .ref-link', 'data-id')).toBe('backlog.md:BACK-222');
    expect(await page.textContent('.detail-crumbs .row-id')).toBe('BACK-222.1');
  });

  it('with one backlog: no switcher, no project badge, no Project field', async () => {
    await page.goto(`${single.url}/?item=TASK-0001`);
    await page.waitForSelector('.list-view .row');
    await page.waitForSelector('.detail-body');
    expect(await page.$$('.project-switcher, .project-badge, .board-section')).toHaveLength(0);
    expect(await page.$$eval('.fields dt', (e) => e.map((x) => x.textContent))).not.toContain('Project');
    expect(await page.textContent('.brand-name')).toBe('demo');
    expect(pageErrors).toEqual([]);
  });
});

describe('the viewer state and words of several projects (pure)', () => {
  it('keeps project in the URL only when chosen', () => {
    expect(parseState('?project=Demo&view=board')).toMatchObject({ project: 'demo', view: 'board' });
    expect('project' in parseState('?view=board')).toBe(false);
    const state = parseState('?project=backlog.md&q=x');
    expect(parseState(serializeState(state, '/'))).toEqual(state);
    expect(serializeState({ ...state, project: '', q: null }, '/')).toBe('/');
  });

  it('merges the words of a native and a Backlog.md project for "All projects"', () => {
    const native = vocabularyOf({ ...NATIVE_VOCABULARY, project: 'demo', example_ids: ['TASK-0001'] });
    const bmd = vocabularyOf({
      project: 'Backlog.md',
      format: 'backlog-md',
      kinds: [
        { type: 'task', label: 'Task', plural: 'Tasks' },
        { type: 'document', label: 'Document', plural: 'Documents' },
        { type: 'resource', label: 'Other file', plural: 'Other files' },
      ],
      states: ['active', 'draft', 'completed', 'archived'],
      parent: 'parent task',
      example_ids: ['BACK-1'],
    });
    const all = mergeVocabularies([native, bmd], '2 projects');
    expect(all.kinds.map((k) => k.type)).toEqual(['task', 'epic', 'document', 'resource']);
    expect(all.kinds.find((k) => k.type === 'resource')?.plural).toBe('Resources');
    expect(all).toMatchObject({
      project: '2 projects',
      format: 'mixed',
      parent: 'parent',
      states: ['active', 'draft', 'completed', 'archived'],
      example_ids: ['TASK-0001', 'BACK-1'],
    });
    expect(mergeVocabularies([bmd], 'x')).toEqual({ ...bmd, project: 'x' });
  });
});
