/**
 * The bundled command's V8 code cache (src/cli/chunk-loader.ts, issue #23): real processes of the bundle
 * (tsc + scripts/bundle-cli.mjs into a temporary folder), each with a cache folder of its own
 * (XDG_CACHE_HOME), and a preload (test/code-cache-probe.mjs) that logs, per chunk compiled, whether
 * cached data was given and whether V8 rejected it.
 */
import { execFile } from 'node:child_process';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtPackage, ROOT, tempBacklog } from './helpers.js';

const run = promisify(execFile);
const PROBE = join(ROOT, 'test', 'code-cache-probe.mjs');

let base: string;
let bin: string;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  base = await builtPackage('bs-codecache-');
  bin = join(base, 'dist', 'bin', 'backlog-search.js');
  ({ dir, cleanup } = await tempBacklog());
  await run(process.execPath, [bin, '--dir', dir, 'list', '-n', '1'], {
    env: { ...process.env, BACKLOG_CODE_CACHE: '0' },
  });
}, 300_000);

afterAll(async () => {
  await cleanup?.();
  if (base) await rm(base, { recursive: true, force: true });
});

interface Compiled {
  chunk: string;
  given: boolean;
  rejected: boolean;
}

/** A search through the bundle with `xdg` as the cache home: its answer and what each chunk's compile did. */
async function search(
  xdg: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ answer: unknown; compiled: Compiled[] }> {
  const log = join(base, `cc-${Math.random().toString(36).slice(2)}.jsonl`);
  const { stdout } = await run(
    process.execPath,
    ['--import', PROBE, bin, '--dir', dir, '--embeddings', 'none', 'search', 'login', '--json'],
    { env: { ...process.env, XDG_CACHE_HOME: xdg, CODE_CACHE_LOG: log, ...env } },
  );
  const compiled = (await readFile(log, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Compiled);
  return { answer: { ...JSON.parse(stdout), took_ms: 0 }, compiled };
}

/** What the run's log says of the chunk whose cache file is `file` (named `<chunk>.<hex>`). */
function compiledOf(compiled: Compiled[], file: string): Compiled {
  const chunk = file
    .split('/')
    .pop()!
    .replace(/\.[0-9a-f]+$/, '');
  return compiled.find((c) => c.chunk === chunk)!;
}

/** The cache files under `xdg`: path -> inode. */
async function cacheFiles(xdg: string): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else files.set(p, (await lstat(p)).ino);
    }
  };
  await walk(xdg);
  return files;
}

/** A fresh cache home, with a first search run that writes the cache; the answer it gave. */
async function warmed(): Promise<{ xdg: string; answer: unknown; files: Map<string, number> }> {
  const xdg = await mkdtemp(join(base, 'xdg-'));
  const first = await search(xdg);
  expect(first.compiled.length).toBeGreaterThan(3);
  expect(first.compiled.every((c) => !c.given)).toBe(true);
  return { xdg, answer: first.answer, files: await cacheFiles(xdg) };
}

describe('the code cache (issue #23)', () => {
  it('is written by a first run in a 0700 folder of the cache home, and taken by the second, same answer', async () => {
    const { xdg, answer, files } = await warmed();
    expect(files.size).toBeGreaterThan(3);
    const folder = join(xdg, 'backlog-search', 'code');
    for (const d of [folder, ...(await readdir(folder)).map((n) => join(folder, n))])
      expect(((await stat(d)).mode & 0o777).toString(8), d).toBe('700');
    for (const f of files.keys()) expect(((await stat(f)).mode & 0o077).toString(8), f).toBe('0');
    const second = await search(xdg);
    expect(second.answer).toEqual(answer);
    const cached = second.compiled.filter((c) => c.given);
    expect(cached.length).toBe(files.size);
    expect(cached.filter((c) => c.rejected)).toEqual([]);
    // Nothing to write: every file is the one the first run made.
    expect(await cacheFiles(xdg)).toEqual(files);
  }, 120_000);

  it('a corrupt, truncated or rejected file is not used (or V8 rejects it) and is written again', async () => {
    const { xdg, answer, files } = await warmed();
    const [corrupt, truncated, foreign, donor] = [...files.keys()];
    const bytes = await readFile(corrupt);
    bytes[bytes.length >> 1] ^= 0xff;
    await writeFile(corrupt, bytes);
    await truncate(truncated, (await stat(truncated)).size >> 1);
    // The right header for this chunk, with data V8 made for another chunk: V8 rejects it itself.
    const [own, theirs] = [await readFile(foreign), await readFile(donor)];
    await writeFile(foreign, Buffer.concat([own.subarray(0, 20), theirs.subarray(20)]));
    const second = await search(xdg);
    expect(second.answer).toEqual(answer);
    const of = (f: string) => compiledOf(second.compiled, f);
    expect(of(corrupt).given).toBe(false);
    expect(of(truncated).given).toBe(false);
    expect(of(foreign)).toMatchObject({ given: true, rejected: true });
    const after = await cacheFiles(xdg);
    for (const f of [corrupt, truncated, foreign]) expect(after.get(f), f).not.toBe(files.get(f));
    const third = await search(xdg);
    expect(third.answer).toEqual(answer);
    expect(third.compiled.filter((c) => c.given).length).toBe(files.size);
    expect(third.compiled.filter((c) => c.rejected)).toEqual([]);
  }, 120_000);

  it("a file others can write, another user's, or a link is ignored; so is a folder others can write", async () => {
    const { xdg, answer, files } = await warmed();
    const [writable, link, foreign, fifo] = [...files.keys()];
    await chmod(writable, 0o666);
    // A FIFO where a cache file was: opened without waiting for a writer, then refused (not a file).
    await rm(fifo);
    await run('mkfifo', [fifo]);
    const elsewhere = join(base, `linked-${Math.random()}`);
    await writeFile(elsewhere, await readFile(link));
    await rm(link);
    await symlink(elsewhere, link);
    const root = process.getuid?.() === 0;
    if (root) await chown(foreign, 4242, 4242);
    const second = await search(xdg);
    expect(second.answer).toEqual(answer);
    const of = (f: string) => compiledOf(second.compiled, f);
    expect(of(writable).given).toBe(false);
    expect(of(link).given).toBe(false);
    expect(of(fifo).given).toBe(false);
    if (root) expect(of(foreign).given).toBe(false);
    // Each replaced by a file of this user's (the rename replaces the link, not its target).
    expect((await lstat(link)).isFile()).toBe(true);
    expect((await lstat(fifo)).isFile()).toBe(true);
    expect(((await stat(writable)).mode & 0o077).toString(8)).toBe('0');

    // The bundle's folder writable by others: not read, not written.
    const bundleDir = join(
      xdg,
      'backlog-search',
      'code',
      (await readdir(join(xdg, 'backlog-search', 'code')))[0],
    );
    await chmod(bundleDir, 0o777);
    const before = await cacheFiles(xdg);
    await rm([...before.keys()][0]);
    const third = await search(xdg);
    expect(third.answer).toEqual(answer);
    expect(third.compiled.filter((c) => c.given)).toEqual([]);
    expect((await cacheFiles(xdg)).size).toBe(before.size - 1);
  }, 120_000);

  it('BACKLOG_CODE_CACHE=0 writes nothing; a cache home that cannot be made is skipped silently', async () => {
    const xdg = await mkdtemp(join(base, 'xdg-'));
    const reference = await search(xdg, { BACKLOG_CODE_CACHE: '0' });
    expect(reference.compiled.length).toBeGreaterThan(3);
    expect(reference.compiled.filter((c) => c.given)).toEqual([]);
    expect((await cacheFiles(xdg)).size).toBe(0);
    expect(await readdir(xdg)).toEqual([]);
    // A file where the folder should be (as a read-only home would refuse it, even to root).
    const blocked = join(base, `blocked-${Math.random()}`);
    await writeFile(blocked, '');
    const res = await search(join(blocked, 'cache'));
    expect(res.answer).toEqual(reference.answer);
  }, 120_000);

  it('keeps the caches of a few bundles only', async () => {
    const { xdg } = await warmed();
    const code = join(xdg, 'backlog-search', 'code');
    for (let i = 0; i < 5; i++) await mkdir(join(code, `v0.0.${i}-old`), { mode: 0o700 });
    const [ours] = (await readdir(code)).filter((n) => !n.endsWith('-old'));
    await rm(join(code, ours), { recursive: true });
    await search(xdg);
    const left = await readdir(code);
    expect(left).toContain(ours);
    expect(left.length).toBe(3);
  }, 120_000);
});
