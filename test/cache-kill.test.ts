/**
 * Killing the process while it writes its cache loses nothing: a real child process (the CLI's `index`)
 * is killed with SIGKILL the moment its cache's temporary file appears, then the backlog is opened again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBacklog } from '../src/index.js';
import { spawnCli } from './helpers.js';

const ITEMS = 400;
let base: string;
let dir: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'backlog-kill-'));
  dir = join(base, 'backlog');
  await mkdir(join(dir, 'tasks'), { recursive: true });
  for (let i = 0; i < ITEMS; i++) {
    const id = `TASK-${String(i).padStart(4, '0')}`;
    await writeFile(
      join(dir, 'tasks', `${id}.md`),
      `---\nid: ${id}\ntitle: Item ${i} of the kill test\ntype: task\nstatus: open\n---\nword${i} appears only here. ${'filler text '.repeat(40)}\n`,
    );
  }
});
afterAll(() => rm(base, { recursive: true, force: true }));

async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of await readdir(join(dir, 'tasks')))
    out.set(name, await readFile(join(dir, 'tasks', name), 'utf8'));
  return out;
}

/** Runs `index` and SIGKILLs it as soon as a temporary cache file shows up; resolves whether it did. */
async function indexKilledMidWrite(): Promise<boolean> {
  const cacheDir = join(dir, '.cache');
  await mkdir(cacheDir, { recursive: true });
  const child = spawnCli(['--dir', dir, 'index'], { BACKLOG_EMBEDDINGS: 'none' });
  let killed = false;
  const watcher = watch(cacheDir, (_event, name) => {
    if (!killed && name?.endsWith('.tmp')) {
      killed = child.kill('SIGKILL');
    }
  });
  await new Promise((resolve) => child.once('exit', resolve));
  watcher.close();
  return killed;
}

describe('a kill during a cache write', () => {
  it('on the first build: the next start rebuilds from the markdown files, which are untouched', async () => {
    const before = await snapshot();
    expect(await indexKilledMidWrite()).toBe(true);
    expect(await snapshot()).toEqual(before);
    const service = await openBacklog({ dir, embeddings: 'none' });
    expect(service.diagnostics().items).toBe(ITEMS);
    expect((await service.searchUnified('word399')).results[0].id).toBe('TASK-0399');
    await service.flush();
    await service.close();
  }, 60_000);

  it('on a rewrite: the previous cache stays whole and the changed file is read again', async () => {
    // A complete cache first (written by the in-process open above), then a change and a killed rewrite.
    await writeFile(
      join(dir, 'tasks', 'TASK-0007.md'),
      '---\nid: TASK-0007\ntitle: Item 7 renamed\ntype: task\nstatus: open\n---\nplatypus now.\n',
    );
    expect(await indexKilledMidWrite()).toBe(true);
    const service = await openBacklog({ dir, embeddings: 'none' });
    // The signal usually lands while the temporary file is written: the previous cache is used and the
    // changed file read again (changed: 1). On a busy machine the rename can beat it: then the new cache
    // is whole and nothing is left to read again (changed: 0). Either way the answers below hold.
    expect(service.cacheStatus()).toMatchObject({ used: true });
    expect([0, 1]).toContain(service.cacheStatus().changed);
    expect(service.diagnostics().items).toBe(ITEMS);
    expect((await service.searchUnified('platypus')).results.map((r) => r.id)).toEqual(['TASK-0007']);
    // The old text is gone: its phrase matches nothing any more.
    expect((await service.searchUnified('"word7 appears"', { match_mode: 'raw' })).results).toEqual([]);
    expect((await service.searchUnified('"word8 appears"', { match_mode: 'raw' })).results[0].id).toBe(
      'TASK-0008',
    );
    // The killed write left its temporary file; opening the backlog removed it (its writer is dead).
    expect((await readdir(join(dir, '.cache'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await service.flush();
    // Nothing but the cache, its stamp and the .gitignore that keeps it out of git: no temp file left.
    expect((await readdir(join(dir, '.cache'))).sort()).toEqual([
      '.gitignore',
      'index.bin',
      'index.bin.stamp',
    ]);
    await service.close();
  }, 60_000);
});
