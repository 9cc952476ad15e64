/**
 * The viewer on a Backlog.md backlog (real excerpts, test/fixtures/backlog-md), in Debian's Chromium:
 * the board has config.yml's columns in its order, Backlog.md's documents sit under Docs, and a task's
 * section markers never show.
 */
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempBacklog } from './helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium, serveBacklog } from './viewer-browser.js';

declare const document: { body: { innerText: string }; querySelector(s: string): unknown };

describe.skipIf(!HAS_CHROMIUM)('viewer on a Backlog.md backlog', () => {
  let url: string;
  let context: BrowserContext;
  let page: Page;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const [built, backlog, browser] = await Promise.all([
      buildViewer(),
      tempBacklog(join(ROOT, 'test', 'fixtures', 'backlog-md')),
      launchChromium(),
    ]);
    cleanups.push(built.cleanup, backlog.cleanup, browser.close);
    const served = await serveBacklog(backlog.dir, built.dir);
    cleanups.unshift(served.close);
    url = served.server.url;
    context = browser.context;
    page = await context.newPage();
  }, 120_000);
  afterAll(async () => {
    for (const c of cleanups) await c();
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
});
