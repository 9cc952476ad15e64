/**
 * What many benches share: where the repository and the eval data are, a flag's value, a timer, a seeded
 * random number generator, a screenshot for the docs.
 *
 * Not for bench/devset/ or bench/compile.ts: bench/hybrid-ready.ts copies those into an older checkout to
 * compile them there, where this file may not exist. The compiled benches (rss, embed-speed, hybrid-ready)
 * keep their own paths too.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/** The repository's root (with a trailing slash, as `new URL('..')` gives it). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The BEIR-layout eval sets: `$BACKLOG_EVAL_DIR`, default ../shared/eval beside the repository. */
export const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));

/** The Backlog.md project's own backlog in the eval data, the folder most benches time. */
export const BACKLOG_MD = join(EVAL_DIR, 'backlog-md');

/** The value after `--name` on the command line, if any. */
export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** `f`'s result and its wall time in ms. */
export async function timed<T>(f: () => Promise<T> | T): Promise<[T, number]> {
  const t = performance.now();
  return [await f(), performance.now() - t];
}

/** A deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** docs/screenshots/<name>.png of the page, once its fonts are loaded (the viewer's screenshot scripts). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.evaluate('document.fonts.ready');
  await page.waitForTimeout(150);
  const dir = join(ROOT, 'docs', 'screenshots');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
  process.stderr.write(`docs/screenshots/${name}.png\n`);
}
