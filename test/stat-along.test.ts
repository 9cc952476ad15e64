import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STAT_ASIDE_FILES,
  statFiles,
  statFilesAlong,
  walkBacklog,
  walkBacklogSync,
} from '../src/storage/backlog-store.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stat-along-'));
  await mkdir(join(dir, 'tasks', 'deep'), { recursive: true });
  await mkdir(join(dir, '.hidden'));
  await writeFile(join(dir, '.hidden', 'x.md'), 'hidden');
  // Past the thread's threshold, with sizes of their own.
  for (let i = 0; i < STAT_ASIDE_FILES + 300; i++)
    await writeFile(join(dir, i % 7 ? 'tasks' : join('tasks', 'deep'), `t-${i}.md`), 'x'.repeat(i % 50));
  await symlink(join(dir, 'tasks', 't-1.md'), join(dir, 'tasks', 'link.md'));
}, 120_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('statFilesAlong', () => {
  it('lists as the walk does, synchronously', async () => {
    expect(walkBacklogSync(dir)).toEqual(await walkBacklog(dir));
  });

  it('gives statFiles numbers along the paths, shared by the thread and the main thread; -1 for a path gone', async () => {
    const { files } = walkBacklogSync(dir);
    const paths = [...files, 'tasks/gone.md', 'tasks/link.md'];
    const expected = await statFiles(dir, paths);
    for (const help of [false, true]) {
      const along = statFilesAlong(dir, paths);
      if (help) along.help();
      const stats = await along.stats;
      expect(stats.length).toBe(2 * paths.length);
      paths.forEach((p, i) => {
        const e = expected[p];
        expect([stats[2 * i], stats[2 * i + 1]], p).toEqual(e ? [e.size, e.mtime_ms] : [-1, -1]);
      });
    }
  });
});
