/**
 * The viewer on a Backlog.md backlog (real excerpts, test/fixtures/backlog-md), in Debian's Chromium:
 * the board has config.yml's columns in its order, Backlog.md's documents sit under Docs, a task's
 * section markers never show, task-list checkboxes keep their state; and, at desktop size and on a
 * phone (390x844), long ids never squeeze a title, children show their titles and fit their column,
 * and a search that finds nothing says why. Screenshots go to test-output/viewer/ (printed at the end).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempBacklog } from './helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium, serveBacklog } from './viewer-browser.js';
import { box, clipping, narrowLines, textLines, within } from './viewer-layout.js';

declare const document: { body: { innerText: string }; querySelector(s: string): unknown };

const SHOTS = process.env.VIEWER_SHOTS_DIR ?? join(ROOT, 'test-output', 'viewer');
const FULL_FOLDER = join(ROOT, '..', 'shared', 'eval', 'backlog-md');
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800, titleShare: 0.55 },
  { name: 'phone', width: 390, height: 844, titleShare: 0.75 },
] as const;

/** A document known by its file name only (no id of its own): its id is a URI with the name in it. */
const LONG_NAME = 'hierarchy-review-notes-from-the-accessibility-and-keyboard-navigation-pass.md';
const LONG_NAME_IN_ID = 'hierarchy-review-notes-from-the-accessibility';

/** Two documents that are children of BACK-222: one with an id of its own, one known by its file name only. */
const DOC_CHILDREN: Record<string, string> = {
  'docs/doc-002 - Hierarchy-release-checklist.md': [
    '---',
    'id: doc-002',
    'title: Release checklist for the hierarchy work',
    'type: guide',
    'status: In Progress',
    'parent_task_id: BACK-222',
    '---',
    'What to check before the hierarchy views ship.',
  ].join('\n'),
  'docs/hierarchy-review-notes-from-the-accessibility-and-keyboard-navigation-pass.md': [
    '---',
    'status: To Do',
    'parent_task_id: BACK-222',
    '---',
    '# Accessibility review notes',
    '',
    'Keyboard order and labels of the Subtasks section.',
  ].join('\n'),
};

async function shoot(page: Page, name: string): Promise<void> {
  await page.evaluate('document.fonts.ready');
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

async function openSpotlight(page: Page, url: string, query: string): Promise<void> {
  await page.goto(`${url}/?q=${encodeURIComponent(query)}`);
  await page.waitForSelector(`#sl-list[data-key="${query}||relevant"]`, { state: 'attached' });
}

/** Every result of the open spotlight: its title has most of the row and no line of one or two letters. */
async function expectRoomyTitles(page: Page, titleShare: number): Promise<number> {
  const options = page.locator('.sl-option');
  const count = await options.count();
  for (let i = 0; i < count; i++) {
    const option = options.nth(i);
    const [row, main, side] = await Promise.all([
      box(option),
      box(option.locator('.sl-main')),
      box(option.locator('.sl-side')),
    ]);
    const title = (await option.locator('.sl-title').textContent()) ?? '';
    const where = `${await option.getAttribute('data-id')} (row ${Math.round(row.width)}px)`;
    expect(main.width / row.width, where).toBeGreaterThanOrEqual(titleShare);
    expect(narrowLines(await textLines(option.locator('.sl-title')), title), where).toEqual([]);
    expect(within(side, row), where).toBe(true);
    for (const part of await option.locator('.sl-side > *').all())
      expect(within(await box(part), row), where).toBe(true);
  }
  return count;
}

/** One viewer build and one Chromium for the whole file, made on first use. */
let shared: Promise<[Awaited<ReturnType<typeof buildViewer>>, Awaited<ReturnType<typeof launchChromium>>]>;
const viewerAndBrowser = () =>
  (shared ??= Promise.all([buildViewer(), launchChromium(), mkdir(SHOTS, { recursive: true })]).then(
    ([built, browser]) => [built, browser],
  ));
afterAll(async () => {
  if (!shared) return;
  const [built, browser] = await shared;
  await browser.close();
  await built.cleanup();
  process.stderr.write(`viewer-backlog-md: screenshots in ${SHOTS}\n`);
});

describe.skipIf(!HAS_CHROMIUM)('viewer on a Backlog.md backlog', () => {
  let url: string;
  let context: BrowserContext;
  let page: Page;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const [[built, browser], backlog] = await Promise.all([
      viewerAndBrowser(),
      tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-md')),
    ]);
    cleanups.push(backlog.cleanup, () => page.close());
    for (const [path, text] of Object.entries(DOC_CHILDREN)) await writeFile(join(backlog.dir, path), text);
    const served = await serveBacklog(backlog.dir, built.dir);
    cleanups.unshift(served.close);
    url = served.server.url;
    context = browser.context;
    page = await context.newPage();
  }, 120_000);
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it("hints at an id as this backlog writes them (BACK-…), not the native format's", async () => {
    await page.goto(`${url}/?view=board&types=task`);
    await page.waitForSelector('.board .card');
    await page.keyboard.press('Control+k');
    const hint = page.locator('.spotlight .muted', { hasText: 'Type to search' });
    await hint.waitFor();
    expect(await hint.textContent()).toMatch(/an id such as BACK-\d/);
    await page.keyboard.press('Escape');
  });

  it("shows the board's columns from config.yml, in its order", async () => {
    await page.goto(`${url}/?view=board&types=task`);
    await page.waitForSelector('.board .card');
    const columns = await page.$$eval('.board .column', (c) => c.map((e) => e.getAttribute('data-status')));
    expect(columns.slice(0, 3)).toEqual(['to_do', 'in_progress', 'done']);
  });

  it('puts documents, decisions and milestones under Docs', async () => {
    await page.goto(`${url}/?view=files&types=resource`);
    await page.waitForSelector('.files-view, .tree, .board, .list-view');
    const text = await page.evaluate(() => document.body.innerText);
    for (const title of [
      'Testing Style Guide',
      'Use Tailwind CSS v4 for web UI development',
      'New Milestones UI',
    ])
      expect(text).toContain(title);
  });

  it('renders a task without its section markers', async () => {
    await page.goto(`${url}/?item=BACK-222.1`);
    await page.waitForSelector('.detail-body');
    const body = await page.$eval('.detail-body', (e) => (e as unknown as { innerText: string }).innerText);
    expect(body).toContain('The task details modal shows a Parent section');
    expect(body).not.toMatch(/SECTION:|AC:BEGIN|<!--/);
  });

  it('keeps the state of task-list checkboxes: `- [x]` checked, `- [ ]` not, neither editable', async () => {
    const boxes = async (id: string) => {
      await page.goto(`${url}/?item=${id}`);
      await page.waitForSelector(`.detail-body[data-id="${id}"] .markdown li`);
      return page.$$eval('.markdown li > input', (inputs) =>
        inputs.map((e) => {
          const input = e as unknown as { type: string; checked: boolean; disabled: boolean };
          return { type: input.type, checked: input.checked, disabled: input.disabled };
        }),
      );
    };
    const done = { type: 'checkbox', checked: true, disabled: true };
    const open = { type: 'checkbox', checked: false, disabled: true };
    expect(await boxes('BACK-222.1')).toEqual(Array(8).fill(done));
    expect(await boxes('BACK-222')).toEqual(Array(8).fill(open));
    // Each named by its item's text (an input without a name is unreadable to a screen reader).
    expect(await page.getAttribute('.markdown li > input', 'aria-label')).toMatch(/^#1 The board, All Tasks/);
  });

  for (const vp of VIEWPORTS) {
    describe(`at ${vp.name} size (${vp.width}x${vp.height})`, () => {
      beforeAll(() => page.setViewportSize({ width: vp.width, height: vp.height }));

      it('never lets a long id squeeze a title in the spotlight: the id is cut, whole in its tooltip', async () => {
        await openSpotlight(page, url, 'accessibility keyboard');
        const long = page.locator(`.sl-option[data-id*="${LONG_NAME_IN_ID}"]`);
        expect(await long.count()).toBe(1);
        await shoot(page, `spotlight-long-id-${vp.name}`);
        expect(await expectRoomyTitles(page, vp.titleShare)).toBeGreaterThan(1);
        const id = long.locator('.row-id');
        expect(await id.getAttribute('title')).toBe(LONG_NAME);
        expect(within(await box(id), await box(long))).toBe(true);
        expect(await clipping(id)).toEqual({ overflows: true, cut: true });
      });

      it('cuts a long id in the list and on the board, never over the title', async () => {
        await page.goto(`${url}/?types=task,document`);
        const row = page.locator(`.row[data-id*="${LONG_NAME_IN_ID}"]`);
        await row.waitFor();
        const [id, title] = [row.locator('.row-id'), row.locator('.row-title')];
        expect(await id.getAttribute('title')).toBe(LONG_NAME);
        const [idBox, titleBox, rowBox] = await Promise.all([box(id), box(title), box(row)]);
        if (vp.name === 'desktop') expect(idBox.right).toBeLessThanOrEqual(titleBox.left);
        expect(within(idBox, rowBox)).toBe(true);
        expect(await clipping(id)).toEqual({ overflows: true, cut: true });
        await page.goto(`${url}/?view=board&types=task,document`);
        const card = page.locator(`.card[data-id*="${LONG_NAME_IN_ID}"]`);
        await card.waitFor();
        const column = page.locator('.column', { has: card });
        expect(within(await box(card), await box(column))).toBe(true);
        // As wide as every other column: the long id did not widen its own.
        const widths = await page.$$eval('.board .column', (cs) =>
          cs.map(
            (c) =>
              (c as unknown as { getBoundingClientRect(): { width: number } }).getBoundingClientRect().width,
          ),
        );
        expect(new Set(widths.map((w) => Math.round(w))).size).toBe(1);
        expect(within(await box(card.locator('.row-id')), await box(card))).toBe(true);
        expect(await clipping(card.locator('.row-id'))).toEqual({ overflows: true, cut: true });
      });

      it("shows children by title, each id and status pill inside the list's column", async () => {
        await page.goto(`${url}/?item=BACK-222`);
        await page.waitForSelector('.detail-body[data-id="BACK-222"] .children .child');
        const api = (await (await fetch(`${url}/tasks/BACK-222`)).json()) as {
          children: { id: string; title: string; status: string }[];
        };
        expect(api.children.map((c) => c.title).sort()).toEqual(
          [
            'Accessibility review notes',
            'Release checklist for the hierarchy work',
            'Show parent and subtask hierarchy in the web task details modal',
          ].sort(),
        );
        const list = page.locator('.children ul');
        await list.scrollIntoViewIfNeeded();
        await shoot(page, `detail-children-${vp.name}`);
        const column = await box(list);
        const rows = page.locator('.children .child');
        expect(await rows.count()).toBe(api.children.length);
        for (const [i, child] of api.children.entries()) {
          const row = rows.nth(i);
          const title = row.locator('.child-title');
          expect(await title.textContent()).toBe(child.title);
          expect(await row.innerText()).not.toContain('.md');
          expect(narrowLines(await textLines(title), child.title), child.id).toEqual([]);
          const [rowBox, titleBox, pillBox] = await Promise.all([
            box(row),
            box(title),
            box(row.locator('.pill')),
          ]);
          expect(within(rowBox, column), child.id).toBe(true);
          expect(within(pillBox, rowBox), child.id).toBe(true);
          expect(titleBox.width / rowBox.width, child.id).toBeGreaterThanOrEqual(0.45);
          expect(await row.locator('.pill').innerText()).toBe(child.status);
        }
        // The related item above the body: the parent, by its title.
        await page.goto(`${url}/?item=doc-002`);
        const parent = page.locator('.parent .ref-link');
        await parent.waitFor();
        expect(await parent.locator('.ref-title').textContent()).toBe(
          'Improve parent and subtask presentation in the Web UI',
        );
        expect(within(await box(parent), await box(page.locator('.detail-body')))).toBe(true);
      });

      it('says plainly when nothing matched: the answer’s warnings, and its suggestions as searches', async () => {
        // The real server's "did you mean": a misspelt word the backlog has.
        await openSpotlight(page, url, 'wnidwos');
        expect(await page.getAttribute('#sl-list', 'data-total')).toBe('0');
        const empty = page.locator('.sl-empty');
        expect(await empty.innerText()).toContain('No items match “wnidwos”');
        const suggestions = page.locator('.sl-suggestion');
        expect(await suggestions.allInnerTexts()).toEqual(['windows']);
        await shoot(page, `spotlight-nothing-matched-${vp.name}`);
        await suggestions.first().click();
        await page.waitForSelector('#sl-list[data-key="windows||relevant"]', { state: 'attached' });
        expect(await page.inputValue('.sl-input')).toBe('windows');
        expect(new URL(page.url()).searchParams.get('q')).toBe('windows');
        expect(Number(await page.getAttribute('#sl-list', 'data-total'))).toBeGreaterThan(0);
        expect(await page.locator('.sl-option').count()).toBeGreaterThan(0);

        // A server from before "did you mean" sends no `suggestions`: the warnings and the advice still show.
        const withoutSuggestions = async (route: Route) => {
          const response = await route.fetch();
          const body = (await response.json()) as { suggestions?: string[] };
          delete body.suggestions;
          await route.fulfill({ response, json: body });
        };
        await page.route('**/search?**', withoutSuggestions);
        try {
          await openSpotlight(page, url, 'wnidwos');
          expect(await page.getAttribute('#sl-list', 'data-total')).toBe('0');
          expect(await empty.innerText()).toContain('No items match “wnidwos”');
          expect(await empty.innerText()).toContain('Check the spelling');
          expect(await suggestions.count()).toBe(0);
        } finally {
          await page.unroute('**/search?**', withoutSuggestions);
        }
      });
    });
  }
});

describe.skipIf(!HAS_CHROMIUM || !existsSync(FULL_FOLDER))(
  "the spotlight on the Backlog.md project's own backlog (698 files, a copy)",
  () => {
    let url: string;
    let page: Page;
    const cleanups: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      const [[built, browser], backlog] = await Promise.all([viewerAndBrowser(), tempBacklog(FULL_FOLDER)]);
      cleanups.push(backlog.cleanup, () => page.close());
      const served = await serveBacklog(backlog.dir, built.dir, { embeddings: 'none', cacheDir: false });
      cleanups.unshift(served.close);
      url = served.server.url;
      page = await browser.context.newPage();
    }, 120_000);
    afterAll(async () => {
      for (const c of cleanups) await c();
    });

    for (const vp of VIEWPORTS)
      it(`"blessed" at ${vp.name} size: the archived BACK-76's title keeps its room`, async () => {
        await page.setViewportSize({ width: vp.width, height: vp.height });
        await openSpotlight(page, url, 'blessed');
        const long = page.locator('.sl-option[data-id="BACK-76@archived"]');
        expect(await long.count()).toBe(1);
        expect(await long.locator('.state-badge').innerText()).toBe('archived');
        await long.scrollIntoViewIfNeeded();
        await shoot(page, `spotlight-full-folder-${vp.name}`);
        expect(await expectRoomyTitles(page, vp.titleShare)).toBe(20);
      });
  },
);
