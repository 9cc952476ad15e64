/**
 * The viewer end to end, in real headless Chromium (Debian's package, driven by playwright-core):
 * the demo backlog (a temp copy) served by the real server with the viewer built by Vite.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { spotlightParams, type SpotlightType } from '../viewer/src/search-params.js';
import { tempBacklog } from './helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium, serveBacklog } from './viewer-browser.js';

if (!HAS_CHROMIUM)
  process.stderr.write('viewer-e2e: /usr/bin/chromium not found; skipped (apt-get install chromium).\n');

const XSS = '<img src=x onerror="window.__xss=1">';

// The page's globals as seen by the callbacks given to page.evaluate (this file compiles without the DOM lib).
interface PageElement {
  classList: { contains(name: string): boolean };
}
declare const document: {
  querySelectorAll(selector: string): { length: number };
  querySelector(selector: string): unknown;
  activeElement: PageElement | null;
  documentElement: { scrollWidth: number };
  body: unknown;
};
declare const window: { innerWidth: number; __xss?: number; __sameDocument?: boolean };
declare function getComputedStyle(element: unknown): { backgroundColor: string };

describe.skipIf(!HAS_CHROMIUM)('viewer in Chromium', () => {
  let service: BacklogService;
  let url: string;
  let dir: string;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const [built, backlog, browser] = await Promise.all([buildViewer(), tempBacklog(), launchChromium()]);
    cleanups.push(built.cleanup, backlog.cleanup, browser.close);
    dir = backlog.dir;
    await writeFile(
      join(dir, 'tasks', 'TASK-0666-xss-probe.md'),
      [
        '---',
        'id: TASK-0666',
        `title: '${XSS} xssprobe title'`,
        'status: open',
        'tags: [security]',
        '---',
        `Body with raw HTML: ${XSS} and <script>window.__xss = 2</script> xssprobe.`,
        '',
        `<div onclick="window.__xss=3">${XSS}</div>`,
        '',
        '[a javascript link](javascript:window.__xss=4) and ![image](x" onerror="window.__xss=5)',
        '',
      ].join('\n'),
    );
    const served = await serveBacklog(dir, built.dir);
    cleanups.unshift(served.close);
    service = served.service;
    url = served.server.url;
    context = browser.context;
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.setDefaultTimeout(8000);
  });

  afterAll(async () => {
    for (const c of cleanups) await c().catch(() => undefined);
  });

  const spotlight = () => page.locator('.spotlight');
  const searchInput = () => page.getByRole('combobox', { name: 'Search tasks, epics and resources' });
  const rowIds = () => page.$$eval('.list-view .row', (rows) => rows.map((r) => r.getAttribute('data-id')));
  const optionIds = () =>
    page.$$eval('#sl-list [role=option]', (o) => o.map((e) => e.getAttribute('data-id')));

  /** Waits until the spotlight shows the answer for exactly these options. */
  async function spotlightSettled(query: string, types: SpotlightType[], sort: 'relevant' | 'recent') {
    const key = `${query}|${types.join(',')}|${sort}`.replace(/"/g, '\\"');
    await page.waitForSelector(`#sl-list[data-key="${key}"]`, { state: 'attached' });
  }

  it('shows the backlog as a list grouped by status, first painted within 1 s', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    const expected = service.list({ types: ['task', 'epic'], limit: 1000 });
    expect((await rowIds()).sort()).toEqual(expected.results.map((r) => r.id).sort());
    const groups = await page.$$eval('.group', (g) => g.map((e) => e.getAttribute('data-status')));
    expect(groups.slice(0, 2)).toEqual(['in_progress', 'open']);
    expect(new Set(groups)).toEqual(new Set(Object.keys(expected.counts_by_status)));
    const painted = await page.evaluate(
      () => performance.getEntriesByName('backlog:list-rendered')[0]?.startTime,
    );
    expect(painted).toBeGreaterThan(0);
    // The target is 1 s on localhost (docs/viewer.md measures it); this bound only catches a regression.
    expect(painted).toBeLessThan(3000);
  });

  it('Ctrl+K, type, highlighted results, mode badge; ArrowDown + Enter opens the detail', async () => {
    await page.keyboard.press('Control+k');
    const input = searchInput();
    await input.waitFor();
    expect(await input.evaluate((el) => el === document.activeElement)).toBe(true);
    await input.pressSequentially('login rate limit', { delay: 15 });
    await spotlightSettled('login rate limit', [], 'relevant');
    const expected = await service.searchUnified(
      'login rate limit',
      spotlightParams('login rate limit', [], 'relevant'),
    );
    expect(await optionIds()).toEqual(expected.results.map((r) => r.id));

    const marks = await page.$$eval('#sl-list mark.hl', (m) => m.map((e) => e.textContent!.toLowerCase()));
    expect(marks.length).toBeGreaterThan(2);
    expect(marks.every((m) => /login|rate|limit/.test(m))).toBe(true);
    expect(await page.getAttribute('.mode-badge', 'data-mode')).toBe(expected.search_mode);
    expect(await page.getAttribute('#sl-opt-0', 'aria-selected')).toBe('true');

    await page.keyboard.press('ArrowDown');
    expect(await page.getAttribute('#sl-opt-1', 'aria-selected')).toBe('true');
    expect(await input.getAttribute('aria-activedescendant')).toBe('sl-opt-1');
    await page.keyboard.press('Enter');
    const second = expected.results[1];
    await page.waitForSelector(`.detail-body[data-id="${second.id}"]`);
    expect(await page.isVisible('.spotlight')).toBe(false);
    expect(await page.textContent('.detail-title')).toBe(second.title);
    expect(new URL(page.url()).searchParams.get('item')).toBe(
      second.type === 'resource' ? second.path : second.id,
    );
  });

  it('the detail renders markdown, links the parent and children, and deep links restore it', async () => {
    await page.goto(`${url}/?item=EPIC-0001`);
    await page.waitForSelector('.detail-body[data-id="EPIC-0001"]');
    const children = await page.$$eval('.children [data-id]', (a) => a.map((e) => e.getAttribute('data-id')));
    expect(children.sort()).toEqual([...service.getMetadata('EPIC-0001').links.children].sort());
    await page.click(`.children [data-id="TASK-0001"]`);
    await page.waitForSelector('.detail-body[data-id="TASK-0001"]');
    expect(await page.$$eval('.markdown h2', (h) => h.length)).toBeGreaterThan(0);
    expect(await page.$$eval('.markdown pre code', (c) => c.length)).toBeGreaterThan(0);
    expect(await page.textContent('.parent [data-id]')).toContain('EPIC-0001');
    await page.goBack();
    await page.waitForSelector('.detail-body[data-id="EPIC-0001"]');
  });

  it("keeps the native format's words: Tasks, Epics and Resources, the Epic filter, the epic icon", async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    expect(await page.locator('.filters .chips .chip').allInnerTexts()).toEqual([
      'Tasks',
      'Epics',
      'Resources',
    ]);
    expect(await page.getByLabel('Epic', { exact: true }).count()).toBe(1);
    // Every task here is active: no state filter, no badge.
    expect(await page.getByLabel('State', { exact: true }).count()).toBe(0);
    expect(await page.locator('.state-badge').count()).toBe(0);
    const parent = page.locator('.row[data-id="TASK-0001"] .parent-label');
    expect(await parent.locator('svg').getAttribute('class')).toContain('t-epic');
    expect(await parent.getAttribute('title')).toMatch(/^Epic: EPIC-0001 · /);
    await page.getByLabel('Epic', { exact: true }).selectOption('EPIC-0001');
    await page.waitForURL(/[?&]parent=EPIC-0001\b/);
    const expected = service.list({ types: ['task', 'epic'], parent_id: ['EPIC-0001'], limit: 1000 });
    await page.waitForFunction(
      (n) => document.querySelectorAll('.list-view .row').length === n,
      expected.results.length,
    );
    expect((await rowIds()).sort()).toEqual(expected.results.map((r) => r.id).sort());
    // Older links with `epic=` still filter.
    await page.goto(`${url}/?epic=EPIC-0001`);
    await page.waitForSelector('.list-view .row');
    expect(await page.getByLabel('Epic', { exact: true }).inputValue()).toBe('EPIC-0001');
  });

  it('board, filters and the resources tree come from the URL', async () => {
    await page.goto(`${url}/?view=board&status=open&tag=auth`);
    await page.waitForSelector('.board .card');
    const cards = await page.$$eval('.board .card', (c) => c.map((e) => e.getAttribute('data-id')).sort());
    const expected = service.list({ types: ['task', 'epic'], status: ['open'], tags: ['auth'] });
    expect(cards).toEqual(expected.results.map((r) => r.id).sort());
    expect(await page.inputValue('select >> nth=0')).toBe('open');

    await page.goto(`${url}/?view=files`);
    await page.waitForSelector('.files-view .file');
    const files = await page.$$eval('.files-view .file', (f) =>
      f.map((e) => e.getAttribute('data-id')).sort(),
    );
    expect(files).toEqual(
      service
        .list({ types: ['resource'], limit: 1000 })
        .results.map((r) => r.id)
        .sort(),
    );
    await page.click('.files-view .file[data-id="mcp://backlog/resources/config/feature-flags.json"]');
    await page.waitForSelector('.detail pre.plain');
  });

  it('edits on disk show up without a reload', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    await page.evaluate(() => (window.__sameDocument = true));
    await page.waitForSelector('.live-live');

    const path = join(dir, 'tasks', 'TASK-0002-retry-after-header.md');
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/^title: .*$/m, 'title: Retry-After header, edited on disk'));
    await page.waitForSelector('.row[data-id="TASK-0002"] >> text=Retry-After header, edited on disk');

    await writeFile(
      join(dir, 'tasks', 'TASK-0777-new-on-disk.md'),
      '---\nid: TASK-0777\ntitle: Added while the page was open\nstatus: blocked\n---\nhello\n',
    );
    await page.waitForSelector('.group[data-status="blocked"] .row[data-id="TASK-0777"]');
    await rm(join(dir, 'tasks', 'TASK-0777-new-on-disk.md'));
    await page.waitForSelector('.row[data-id="TASK-0777"]', { state: 'detached' });
    expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
  });

  it('markup in a title or body renders as text, never as elements', async () => {
    await page.goto(`${url}/?item=TASK-0666`);
    await page.waitForSelector('.detail-body[data-id="TASK-0666"]');
    expect(await page.textContent('.detail-title')).toBe(`${XSS} xssprobe title`);
    const body = await page.textContent('.markdown');
    expect(body).toContain(XSS);
    expect(body).toContain('<script>window.__xss = 2</script>');
    expect(body).toContain('<div onclick="window.__xss=3">');
    expect(await page.textContent('.row[data-id="TASK-0666"]')).toContain(XSS);

    await page.keyboard.press('Control+k');
    await searchInput().fill('xssprobe');
    await spotlightSettled('xssprobe', [], 'relevant');
    expect(await page.textContent('#sl-list [data-id="TASK-0666"] .sl-title')).toContain(XSS);
    expect(await page.$$eval('#sl-list [data-id="TASK-0666"] mark.hl', (m) => m.length)).toBeGreaterThan(0);

    const dangerous = await page.evaluate(() => ({
      img: document.querySelectorAll('img:not(.brand img)').length,
      script: document.querySelectorAll('body script').length,
      onclick: document.querySelectorAll('[onclick], [onerror]').length,
      javascriptLinks: document.querySelectorAll('a[href^="javascript:"]').length,
      xss: window.__xss,
    }));
    expect(dangerous).toEqual({ img: 0, script: 0, onclick: 0, javascriptLinks: 0, xss: undefined });
    await page.keyboard.press('Escape');
  });

  it('parity: the ids in the spotlight equal searchUnified for the same options', async () => {
    const cases: [string, SpotlightType[], 'relevant' | 'recent'][] = [
      ['sync', [], 'relevant'],
      ['sync', ['task'], 'recent'],
      ['offline mobile app', ['task', 'epic'], 'relevant'],
      ['TASK-0003', [], 'relevant'],
      ['billing stripe', ['resource'], 'relevant'],
      ['синхронизация заметок', [], 'relevant'],
    ];
    for (const [query, types, sort] of cases) {
      const qs = new URLSearchParams({ q: query });
      if (types.length) qs.set('qtypes', types.join(','));
      if (sort !== 'relevant') qs.set('qsort', sort);
      await page.goto(`${url}/?${qs}`);
      await spotlightSettled(query, types, sort);
      const expected = await service.searchUnified(query, spotlightParams(query, types, sort));
      expect({ query, ids: await optionIds() }).toEqual({ query, ids: expected.results.map((r) => r.id) });
    }
    // Chips and the order toggle change the question the same way.
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    await page.keyboard.press('Control+k');
    await searchInput().fill('sync');
    await spotlight().getByRole('button', { name: 'Epics' }).click();
    await spotlight().getByRole('button', { name: 'Recent' }).click();
    await spotlightSettled('sync', ['epic'], 'recent');
    const expected = await service.searchUnified('sync', spotlightParams('sync', ['epic'], 'recent'));
    expect(await optionIds()).toEqual(expected.results.map((r) => r.id));
    expect(new URL(page.url()).searchParams.get('qtypes')).toBe('epic');
    // Seven page loads: on a loaded 2-core machine that takes longer than the default 30 s.
  }, 90_000);

  it('explains an empty result, keeps recent searches, and is keyboard accessible', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    await page.keyboard.press('Control+k');
    const input = searchInput();
    await input.fill('zzqxv');
    await spotlightSettled('zzqxv', [], 'relevant');
    expect(await page.textContent('.sl-empty')).toContain('No items match “zzqxv”');

    // A word found only in tasks: with the Docs chip on, the empty state points to the other types.
    await input.fill('webauthn');
    await spotlightSettled('webauthn', [], 'relevant');
    await spotlight().getByRole('button', { name: 'Resources' }).click();
    await spotlightSettled('webauthn', ['resource'], 'relevant');
    await page.waitForSelector('.sl-empty >> text=1 result in other types.');
    await spotlight().getByRole('button', { name: 'Search all types' }).click();
    await spotlightSettled('webauthn', [], 'relevant');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.detail-body');

    await page.keyboard.press('Control+k');
    await page.waitForSelector('.sl-option.recent');
    expect(await page.$$eval('.sl-option.recent', (o) => o.map((e) => e.textContent))).toContain('webauthn');
    await page.keyboard.press('Escape');
    expect(await page.isVisible('.spotlight')).toBe(false);
    // Focus goes back to the item's title (after a tick); only then is it moved below.
    await page.waitForFunction(() => document.activeElement?.classList.contains('detail-title'));

    // The search button opens the spotlight, and Escape gives focus back to it.
    await page.getByRole('button', { name: 'Search (Ctrl+K)' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.spotlight');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.activeElement?.classList.contains('search-trigger'));

    // Every control has an accessible name.
    const unnamed = await page.$$eval('button, select, input, a[href]', (els) =>
      els
        .filter((el) => {
          const named =
            el.getAttribute('aria-label') ||
            el.textContent?.trim() ||
            (el.id && document.querySelector(`label[for="${el.id}"]`)) ||
            el.closest('label');
          return !named;
        })
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);
  });

  it('is usable on a narrow window and in the dark theme', async () => {
    await page.setViewportSize({ width: 380, height: 760 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${url}/?item=TASK-0001`);
    await page.waitForSelector('.detail-body');
    expect(await page.isVisible('.list-view')).toBe(false);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(13, 14, 18)');
    await page.getByRole('button', { name: 'Back to the list' }).click();
    await page.waitForSelector('.list-view .row');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('raised no errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
