/**
 * `npm run screenshots`: the viewer on the Backlog.md project's own backlog (../shared/eval/backlog-md,
 * copied to a temp folder first), photographed in headless Chromium into docs/screenshots/: the list,
 * the board, the spotlight, a sub-task's detail, and the spotlight in the dark theme.
 *
 * `npm run screenshots -- path/to/backlog` photographs another backlog (also copied first).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { BACKLOG_MD_FULL, tempBacklog } from '../test/helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium, serveBacklog } from '../test/viewer-browser.js';
import { screenshot } from './common.js';

if (!HAS_CHROMIUM) throw new Error('Chromium not found at /usr/bin/chromium (apt-get install chromium)');

const source = resolve(process.argv[2] ?? BACKLOG_MD_FULL);
if (!existsSync(source))
  throw new Error(`No backlog at ${source}: pass one (npm run screenshots -- path/to/backlog)`);

/** What to show: a query for the spotlight and an item for the detail (Backlog.md's folder, else the demo's). */
const SCENES = existsSync(join(source, 'config.yml'))
  ? { query: 'subtask', darkQuery: 'kanban board', item: 'BACK-217.02' }
  : { query: 'login rate limit', darkQuery: 'sync offline', item: 'TASK-0001' };

const built = await buildViewer();
const backlog = await tempBacklog(source);
const served = await serveBacklog(backlog.dir, built.dir, { embeddings: 'none', cacheDir: false });
const url = served.server.url;

async function spotlight(page: Page, query: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.waitForSelector('.list-view .row');
  await page.keyboard.press('Control+k');
  await page.locator('.sl-input').pressSequentially(query, { delay: 20 });
  await page.waitForSelector(`#sl-list[data-key="${query}||relevant"]`, { state: 'attached' });
  await page.keyboard.press('ArrowDown');
}

try {
  for (const scheme of ['light', 'dark'] as const) {
    const browser = await launchChromium({
      width: 1280,
      height: 800,
      colorScheme: scheme,
      deviceScaleFactor: 1,
    });
    try {
      const page = await browser.context.newPage();
      if (scheme === 'light') {
        await page.goto(`${url}/`);
        await page.waitForSelector('.list-view .row');
        await screenshot(page, 'list');
        await page.goto(`${url}/?view=board`);
        await page.waitForSelector('.board .card');
        await screenshot(page, 'board');
        await spotlight(page, SCENES.query);
        await screenshot(page, 'spotlight');
        await page.goto(`${url}/?item=${encodeURIComponent(SCENES.item)}`);
        await page.waitForSelector(`.detail-body[data-id="${SCENES.item}"]`);
        await screenshot(page, 'detail');
      } else {
        await spotlight(page, SCENES.darkQuery);
        await screenshot(page, 'spotlight-dark');
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await served.close();
  await backlog.cleanup();
  await built.cleanup();
}
