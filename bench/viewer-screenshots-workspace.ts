/**
 * `npm run screenshots:workspace`: the viewer over a workspace of two backlogs (copies of the demo and of
 * the Backlog.md project's own backlog, ../shared/eval/backlog-md, else the fixture), photographed in
 * headless Chromium into docs/screenshots/: the spotlight under "All projects" (each hit with its
 * project, the switcher in the top bar) and the board of all projects (one section per project).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpServer } from '../src/http/server.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import { BACKLOG_MD_DIR, DEMO_DIR } from '../test/helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium } from '../test/viewer-browser.js';
import { screenshot } from './common.js';

if (!HAS_CHROMIUM) throw new Error('Chromium not found at /usr/bin/chromium (apt-get install chromium)');

const root = await mkdtemp(join(tmpdir(), 'backlog-shots-ws-'));
await cp(DEMO_DIR, join(root, 'demo', 'backlog'), { recursive: true });
await cp(BACKLOG_MD_DIR, join(root, 'backlog-md', 'backlog'), { recursive: true });
const built = await buildViewer();
const ws = await openWorkspace({
  embeddings: 'none',
  cacheDir: false,
  backlogs: [{ dir: join(root, 'demo') }, { dir: join(root, 'backlog-md') }],
});
const server = await startHttpServer({ service: ws, port: 0, viewerDir: built.dir });

const browser = await launchChromium({ width: 1280, height: 800 });
try {
  const page = await browser.context.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForSelector('.list-view .row');
  await page.keyboard.press('Control+k');
  await page.locator('.sl-input').pressSequentially('search', { delay: 20 });
  await page.waitForSelector('#sl-list[data-key="search||relevant"]', { state: 'attached' });
  await screenshot(page, 'workspace-spotlight');
  await page.goto(`${server.url}/?view=board`);
  await page.waitForSelector('.board-section .card');
  await screenshot(page, 'workspace-board');
} finally {
  await browser.close();
  await server.close();
  await closeWorkspace(ws);
  await built.cleanup();
  await rm(root, { recursive: true, force: true });
}
