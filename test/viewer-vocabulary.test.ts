/**
 * Issue 25 in the viewer, in Debian's Chromium on a Backlog.md backlog (test/fixtures/backlog-md, a temp
 * copy): every task that is not active carries its state (list rows, board cards, the detail, spotlight
 * results); the state filter defaults to what GET /tasks lists, lives in the URL and says what it left
 * out; the chips, filters, icons and header speak the backlog's vocabulary (no epics), with one item
 * count; the board opens at its first column; rows show a date; an empty search says its message once;
 * the first key typed right after Ctrl+K or `/` is kept; a read-only server shows a banner.
 */
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKLOG_MD_FIXTURE, tempBacklog } from './helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium, serveBacklog } from './viewer-browser.js';
import { box } from './viewer-layout.js';

declare const document: { title: string; body: { innerText: string } };

interface Summary {
  id: string;
  type: string;
  state: string | null;
  parent_id: string | null;
  updated_at: string | null;
  created_at: string | null;
}
interface ListAnswer {
  results: Summary[];
  total: number;
  not_shown?: Record<string, number>;
}

describe.skipIf(!HAS_CHROMIUM)('the viewer speaks a Backlog.md backlog', () => {
  let url: string;
  let readOnlyUrl: string;
  let page: Page;
  const cleanups: (() => Promise<void>)[] = [];

  const api = async <T>(path: string): Promise<T> => (await (await fetch(`${url}${path}`)).json()) as T;
  const attr = (selector: string, name: string) =>
    page.$$eval(selector, (els, n) => els.map((e) => e.getAttribute(n)), name);
  /** The state badge of each element matched by `selector`, by its data-id ('' where it has none). */
  const badges = (selector: string) =>
    page.$$eval(selector, (els) =>
      Object.fromEntries(
        els.map((e) => [e.getAttribute('data-id'), e.querySelector('.state-badge')?.textContent ?? '']),
      ),
    );
  const expectedBadges = (items: { id: string; state: string | null }[]) =>
    Object.fromEntries(items.map((i) => [i.id, i.state && i.state !== 'active' ? i.state : '']));

  beforeAll(async () => {
    const [built, browser, backlog] = await Promise.all([
      buildViewer(),
      launchChromium(),
      tempBacklog(BACKLOG_MD_FIXTURE),
    ]);
    cleanups.push(built.cleanup, browser.close, backlog.cleanup);
    const served = await serveBacklog(backlog.dir, built.dir, { embeddings: 'none', cacheDir: false });
    const readOnly = await serveBacklog(
      backlog.dir,
      built.dir,
      { embeddings: 'none', cacheDir: false, watch: false },
      { readOnly: true },
    );
    cleanups.unshift(served.close, readOnly.close);
    url = served.server.url;
    readOnlyUrl = readOnly.server.url;
    page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
  }, 120_000);
  afterAll(async () => {
    for (const c of cleanups) await c().catch(() => undefined);
  });

  it('marks every task that is not active: list rows, board cards, the detail, spotlight results', async () => {
    const all = await api<ListAnswer>('/tasks?state=all&types=task&limit=1000');
    expect(all.results.some((i) => i.state === 'archived')).toBe(true);
    expect(all.results.some((i) => i.state === 'completed')).toBe(true);
    expect(all.results.some((i) => i.state === 'draft')).toBe(true);

    await page.goto(`${url}/?state=all&types=task`);
    await page.waitForSelector('.list-view .row');
    expect(await badges('.list-view .row')).toEqual(expectedBadges(all.results));

    await page.goto(`${url}/?view=board&state=all&types=task`);
    await page.waitForSelector('.board .card');
    expect(await badges('.board .card')).toEqual(expectedBadges(all.results));

    await page.goto(`${url}/?item=${encodeURIComponent('BACK-569@archived')}`);
    await page.waitForSelector('.detail-body[data-id="BACK-569@archived"]');
    expect(await page.textContent('.detail-pills .state-badge')).toBe('archived');

    await page.goto(`${url}/?q=${encodeURIComponent('browser task loading')}`);
    await page.waitForSelector('#sl-list[data-key="browser task loading||relevant"]', { state: 'attached' });
    const found = await api<{ results: { id: string; state: string | null }[] }>(
      '/search?q=browser+task+loading&limit=20&sort=relevant',
    );
    expect(found.results.map((r) => r.id)).toContain('BACK-569@archived');
    expect(await badges('.sl-option')).toEqual(expectedBadges(found.results));
  });

  it('filters by state: what /tasks lists by default, in the URL, saying what it left out', async () => {
    const live = await api<ListAnswer>('/tasks?types=task,epic&limit=1000');
    expect(live.not_shown).toBeDefined();
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    expect((await attr('.list-view .row', 'data-id')).sort()).toEqual(live.results.map((r) => r.id).sort());
    const state = page.getByLabel('State', { exact: true });
    expect(await state.inputValue()).toBe('');
    // What the default left out, as the server counts it, and a way to see it.
    const notShown = page.locator('.not-shown');
    for (const [s, n] of Object.entries(live.not_shown!))
      expect(await notShown.innerText()).toContain(`${n} ${s}`);
    await notShown.click();
    await page.waitForURL(/[?&]state=all\b/);
    const all = await api<ListAnswer>('/tasks?types=task,epic&state=all&limit=1000');
    await page.waitForFunction((n) => document.body.innerText.includes(`${n} items`), all.total);
    expect((await attr('.list-view .row', 'data-id')).sort()).toEqual(all.results.map((r) => r.id).sort());

    await state.selectOption('archived');
    await page.waitForURL(/[?&]state=archived\b/);
    const archived = await api<ListAnswer>('/tasks?types=task,epic&state=archived&limit=1000');
    await page.waitForFunction((n) => document.body.innerText.includes(`${n} items`), archived.total);
    expect((await attr('.list-view .row', 'data-id')).sort()).toEqual(
      archived.results.map((r) => r.id).sort(),
    );
    expect(new Set(await page.locator('.list-view .row .state-badge').allInnerTexts())).toEqual(
      new Set(['archived']),
    );
    // Back: the default again.
    await page.goBack();
    await page.goBack();
    await page.waitForFunction((n) => document.body.innerText.includes(`${n} items`), live.total);
    expect(await state.inputValue()).toBe('');
  });

  it("offers the backlog's kinds, its parent word and name, and one item count", async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    const chips = page.locator('.filters .chips .chip');
    expect(await chips.allInnerTexts()).toEqual([
      'Tasks',
      'Documents',
      'Decisions',
      'Milestones',
      'Other files',
    ]);
    expect(await page.locator('.filters').innerText()).not.toMatch(/epic/i);
    expect(await page.getByLabel('Parent task', { exact: true }).count()).toBe(1);
    expect(await page.getByLabel('Epic', { exact: true }).count()).toBe(0);
    // The project's name (config.yml's project_name) instead of "Backlog".
    expect(await page.textContent('.brand-name')).toBe('Backlog.md');
    expect(await page.evaluate(() => document.title)).toBe('Backlog.md');
    // One count of items on the page, and it is the number of rows.
    const text = await page.evaluate(() => document.body.innerText);
    const counts = [...text.matchAll(/(\d+) items?\b/g)].map((m) => Number(m[1]));
    expect(counts).toEqual([await page.locator('.list-view .row').count()]);

    // A sub-task's parent: the parent-task icon and word, never the epic's.
    const sub = page.locator('.row[data-id="BACK-222.1"] .parent-label');
    expect(await sub.locator('svg').getAttribute('class')).toContain('t-parent');
    expect(await sub.getAttribute('title')).toMatch(/^Parent task: BACK-222 · /);
    expect(await page.locator('.list-view .t-epic').count()).toBe(0);
    await page.goto(`${url}/?item=BACK-222.1`);
    await page.waitForSelector('.detail-body[data-id="BACK-222.1"]');
    expect(await page.locator('.detail .parent').getAttribute('aria-label')).toBe('Parent task');
    expect(await page.locator('.detail .parent .t-epic').count()).toBe(0);
    expect(await page.locator('.detail-crumbs .type-badge').innerText()).toBe('Task');

    // Documents chip: the URL names the kinds, and the list shows those kinds only.
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    await page.getByRole('button', { name: 'Documents' }).click();
    await page.waitForURL(/types=task%2Cdocument|types=task,document/);
    await page.waitForSelector('.row[data-id="doc-001"]');
    const withDocuments = await api<ListAnswer>('/tasks?types=task,document&limit=1000');
    expect((await attr('.list-view .row', 'data-id')).sort()).toEqual(
      withDocuments.results.map((r) => r.id).sort(),
    );

    // The spotlight's chips are the kinds too (a search without one still finds the other files).
    await page.keyboard.press('Control+k');
    await page.waitForSelector('.spotlight');
    expect(await page.locator('.sl-controls .chip').allInnerTexts()).toEqual([
      'Tasks',
      'Documents',
      'Decisions',
      'Milestones',
    ]);
    expect(await page.locator('.sl-input').getAttribute('aria-label')).toBe(
      'Search tasks, documents, decisions, milestones and other files',
    );
    await page.keyboard.press('Escape');
  });

  // The columns' order comes with GET /health; when it arrives after the tasks, the columns are drawn
  // twice, and a board that keeps its snapped column would open on "In Progress" (the issue: 140 px).
  const slowHealth = async (route: Route) => {
    await new Promise((r) => setTimeout(r, 400));
    await route.continue();
  };
  for (const vp of [
    { width: 1280, height: 800 },
    { width: 800, height: 700 },
    { width: 390, height: 844 },
  ])
    it(`opens the board at its first column (${vp.width}x${vp.height})`, async () => {
      await page.setViewportSize(vp);
      try {
        for (const slow of [false, true])
          for (const query of ['?view=board', '?view=board&state=all', '?view=board&types=all']) {
            const where = `${query}${slow ? ', /health late' : ''}`;
            if (slow) await page.route('**/health', slowHealth);
            try {
              await page.goto(`${url}/${query}`);
              await page.waitForSelector('.board .card');
              // Until the last answer has come and been drawn.
              await page.waitForLoadState('networkidle');
              await page.waitForTimeout(200);
            } finally {
              if (slow) await page.unroute('**/health', slowHealth);
            }
            const board = page.locator('.board');
            expect(await board.evaluate((b) => b.scrollLeft), where).toBe(0);
            const [first, outer] = await Promise.all([
              box(page.locator('.board .column').first()),
              box(board),
            ]);
            expect(first.left, where).toBeGreaterThanOrEqual(outer.left);
            expect(await page.locator('.board .column').first().getAttribute('data-status'), where).toBe(
              'to_do',
            );
          }
      } finally {
        await page.setViewportSize({ width: 1280, height: 800 });
      }
    });

  it('shows a date on every row whose file has one: the update, else the creation', async () => {
    const all = await api<ListAnswer>('/tasks?state=all&limit=1000');
    await page.goto(`${url}/?state=all&types=all`);
    await page.waitForSelector('.list-view .row');
    const dated = all.results.filter((i) => i.updated_at ?? i.created_at);
    expect(dated.length).toBeGreaterThan(all.results.filter((i) => i.updated_at).length);
    const times = Object.fromEntries(
      await page.$$eval('.list-view .row', (rows) =>
        rows.map((r) => [
          r.getAttribute('data-id'),
          r.querySelector('time.when')?.getAttribute('datetime') ?? '',
        ]),
      ),
    );
    for (const i of dated) expect(times[i.id], i.id).toBe(i.updated_at ?? i.created_at);
    expect(await page.locator('.list-view .row time.when:empty').count()).toBe(0);
  });

  it('says once that nothing matched: no raw warning under the sentence', async () => {
    await page.goto(`${url}/?q=wnidwos`);
    await page.waitForSelector('#sl-list[data-key="wnidwos||relevant"]', { state: 'attached' });
    const text = await page.locator('.sl-empty').innerText();
    expect(text).toContain('No items match “wnidwos”');
    expect(text.match(/wnidwos/g)).toHaveLength(1);
    expect(text).not.toContain('nothing matched');
    expect(await page.locator('.sl-suggestion').allInnerTexts()).toEqual(['windows']);
    // Other warnings still show.
    const extraWarning = async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { warnings?: string[] };
      body.warnings = [...(body.warnings ?? []), 'mode "semantic" is not available; ran bm25'];
      await route.fulfill({ response, json: body });
    };
    await page.route('**/search?**', extraWarning);
    try {
      await page.goto(`${url}/?q=wnidwos`);
      await page.waitForSelector('#sl-list[data-key="wnidwos||relevant"]', { state: 'attached' });
      expect(await page.locator('.sl-warnings li').allInnerTexts()).toEqual([
        'mode "semantic" is not available; ran bm25',
      ]);
    } finally {
      await page.unroute('**/search?**', extraWarning);
    }
  });

  for (const [name, open] of [
    ['Ctrl+K', 'Control+k'],
    ['/', '/'],
  ] as const)
    it(`keeps the first key typed right after ${name} (12 tries)`, async () => {
      const words = ['board', 'search', 'draft', 'milestone', 'windows', 'parent'];
      for (let i = 0; i < 12; i++) {
        const word = words[i % words.length];
        if (i % 2 === 0) {
          // A fresh page, the key pressed as soon as the list shows.
          await page.goto(`${url}/`);
          await page.waitForSelector('.list-view .row');
        } else {
          await page.locator('.list-view .row').first().waitFor();
        }
        await page.keyboard.press(open);
        await page.keyboard.type(word);
        const input = page.locator('.sl-input');
        await input.waitFor();
        await page.waitForTimeout(50);
        expect(await input.inputValue(), `try ${i + 1}`).toBe(word);
        await page.keyboard.press('Escape');
        await page.locator('.spotlight').waitFor({ state: 'detached' });
      }
    }, 120_000);

  it('says when the server is read-only, and when it serves the demo', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('.list-view .row');
    expect(await page.locator('.banner').count()).toBe(0);

    await page.goto(`${readOnlyUrl}/`);
    const banner = page.locator('.banner');
    await banner.waitFor();
    expect(await banner.getAttribute('role')).toBe('status');
    expect(await banner.innerText()).toMatch(/serves this backlog read-only/);

    // `demo: true` is what /health adds for the built-in demo (served read-only when no backlog is found).
    const demo = async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as Record<string, unknown>;
      await route.fulfill({ response, json: { ...body, demo: true } });
    };
    await page.route('**/health', demo);
    try {
      await page.goto(`${readOnlyUrl}/`);
      await banner.waitFor();
      expect(await banner.innerText()).toMatch(/^Demo backlog, read-only\./);
    } finally {
      await page.unroute('**/health', demo);
    }
  });
});
