/**
 * Shared by the viewer's end-to-end tests and the screenshot/first-paint scripts: build the viewer
 * with Vite into a temp folder, serve a backlog with the real server, drive Debian's Chromium.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { startHttpServer, type RunningHttpServer, type StartHttpServerOptions } from '../src/http/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog, type OpenBacklogOptions } from '../src/service/open-backlog.js';
import { ROOT } from './helpers.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `vite build` of viewer/ into a fresh temp folder; resolves to that folder. */
export async function buildViewer(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const { build } = await import('vite');
  const dir = await mkdtemp(join(tmpdir(), 'backlog-viewer-build-'));
  await build({
    configFile: join(ROOT, 'viewer', 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir: dir, emptyOutDir: true },
  });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A Chromium with a fresh profile (its own user-data-dir, removed by `close`). */
export async function launchChromium(
  options: {
    width?: number;
    height?: number;
    colorScheme?: 'light' | 'dark';
    deviceScaleFactor?: number;
  } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'backlog-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    reducedMotion: 'reduce',
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** The real server over `dir` (watching it), with the viewer from `viewerDir`; `http`: e.g. `{readOnly: true}`. */
export async function serveBacklog(
  dir: string,
  viewerDir: string,
  options: OpenBacklogOptions = {},
  http: Omit<StartHttpServerOptions, 'service'> = {},
): Promise<{ service: BacklogService; server: RunningHttpServer; close: () => Promise<void> }> {
  const service = await openBacklog({ dir, watch: true, ...options });
  const server = await startHttpServer({ service, port: 0, viewerDir, ...http });
  return {
    service,
    server,
    close: async () => {
      await server.close();
      await closeBacklog(service);
    },
  };
}
