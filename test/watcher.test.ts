import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacklogChange, BacklogService } from '../src/service/backlog-service.js';
import { backlogWatcher, beginOpenBacklog, closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { tempBacklog } from './helpers.js';

/** Polls `check` until it holds; fails after `ms`. Returns how long it took. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

const ids = async (service: BacklogService, query: string) =>
  (await service.searchUnified(query, { limit: 100 })).results.map((r) => r.id);

describe('watcher: live updates from the files on disk', () => {
  let service: BacklogService;
  let dir: string;
  let cleanup: () => Promise<void>;
  const changes: BacklogChange[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog());
    service = await openBacklog({ dir, watch: true });
    service.onChange((c) => changes.push(c));
  });

  afterAll(async () => {
    await closeBacklog(service);
    await cleanup?.();
  });

  it('starts with openBacklog({watch: true}) and is exposed by backlogWatcher', async () => {
    expect(backlogWatcher(service)).toBeDefined();
  });

  it('a new file is searchable within 1 s', async () => {
    await writeFile(
      join(dir, 'tasks', 'TASK-0900-zebra-crossing.md'),
      '---\nid: TASK-0900\ntitle: Zebra crossing detector\nstatus: open\n---\nDetect zebrafinch patterns.\n',
    );
    expect(
      await within(1000, async () => (await ids(service, 'zebrafinch')).includes('TASK-0900')),
    ).toBeLessThan(1000);
    expect(changes).toContainEqual({
      kind: 'upsert',
      path: 'tasks/TASK-0900-zebra-crossing.md',
      id: 'TASK-0900',
    });
  });

  it('a changed file is re-indexed within 1 s (old words gone, new words found)', async () => {
    const path = join(dir, 'tasks', 'TASK-0001-login-rate-limit.md');
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/^title: .*$/m, 'title: Throttle login with a kumquat bucket'));
    await within(1000, async () => (await ids(service, 'kumquat'))[0] === 'TASK-0001');
    expect(service.get('TASK-0001').title).toBe('Throttle login with a kumquat bucket');
  });

  it('a deleted file leaves the index within 1 s', async () => {
    expect(await ids(service, 'passkeys')).toContain('TASK-0005');
    await rm(join(dir, 'tasks', 'TASK-0005-passkeys-second-factor.md'));
    await within(1000, async () => !(await ids(service, 'passkeys')).includes('TASK-0005'));
    expect(() => service.get('TASK-0005')).toThrow(/No item/);
  });

  it('a renamed file is found under its new path within 1 s', async () => {
    const from = join(dir, 'resources', 'glossary.txt');
    const to = join(dir, 'resources', 'glossary-renamed.txt');
    expect(service.resolve('resources/glossary.txt')).toBeDefined();
    await rename(from, to);
    await within(
      1000,
      () =>
        service.resolve('resources/glossary.txt') === undefined &&
        service.resolve('resources/glossary-renamed.txt') !== undefined,
    );
  });

  it('a folder renamed: its files move with it', async () => {
    await rename(join(dir, 'resources', 'runbooks'), join(dir, 'resources', 'playbooks'));
    // Both of its files: the events of the second may come after the first is applied, and the next
    // test counts the items.
    const moved = (name: string) =>
      service.resolve(`resources/runbooks/${name}`) === undefined &&
      service.resolve(`resources/playbooks/${name}`) !== undefined;
    await within(1000, () => moved('sync-outage.md') && moved('database-failover.md'));
    await backlogWatcher(service)!.idle();
  });

  it('ignores hidden folders, node_modules and non-text files', async () => {
    const before = service.size;
    await mkdir(join(dir, '.cache'), { recursive: true });
    await mkdir(join(dir, 'node_modules', 'x'), { recursive: true });
    await writeFile(join(dir, '.cache', 'index.md'), '# hidden\nquinoaword');
    await writeFile(join(dir, 'node_modules', 'x', 'README.md'), '# dep\nquinoaword');
    await writeFile(join(dir, 'resources', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    // A visible file written after them: once it is indexed, the others had their chance.
    await writeFile(join(dir, 'resources', 'marker.md'), '# Marker\nmarkerword');
    await within(1000, async () => (await ids(service, 'markerword')).length === 1);
    await backlogWatcher(service)!.idle();
    expect(await ids(service, 'quinoaword')).toEqual([]);
    expect(service.resolve('resources/logo.png')).toBeUndefined();
    expect(service.size).toBe(before + 1);
  });

  it('a burst of writes to one file is applied once it settles', async () => {
    const path = join(dir, 'resources', 'burst.md');
    const seen = changes.length;
    for (let i = 0; i < 10; i++) await writeFile(path, `# Burst ${i}\nburstword version ${i}`);
    await within(1000, async () => (await ids(service, 'burstword')).length === 1);
    await backlogWatcher(service)!.idle();
    await within(1000, () => service.get('resources/burst.md').title === 'Burst 9');
    expect(changes.slice(seen).filter((c) => c.path === 'resources/burst.md').length).toBeLessThanOrEqual(3);
  });

  it('closeBacklog stops watching', async () => {
    await closeBacklog(service);
    expect(backlogWatcher(service)).toBeUndefined();
    await writeFile(join(dir, 'resources', 'after-close.md'), '# After\nafterclosedword');
    await new Promise((r) => setTimeout(r, 300));
    expect(await ids(service, 'afterclosedword')).toEqual([]);
    await closeBacklog(service); // twice is fine
  });
});

describe('the watcher starts after the read, and catches up', () => {
  it('catchUp applies what changed on disk since the read: changed, added, removed', async () => {
    const { dir, cleanup } = await tempBacklog();
    const service = await openBacklog({ dir, embeddings: 'none' });
    try {
      expect(await service.catchUp()).toBe(0);
      const path = join(dir, 'tasks', 'TASK-0001-login-rate-limit.md');
      await writeFile(path, (await readFile(path, 'utf8')).replace(/^title: .*$/m, 'title: Kumquat login'));
      await writeFile(join(dir, 'resources', 'new-note.md'), '# New note\nzebrafinch');
      await rm(join(dir, 'tasks', 'TASK-0005-passkeys-second-factor.md'));
      expect(await service.catchUp()).toBe(3);
      expect(await ids(service, 'kumquat')).toEqual(['TASK-0001']);
      expect(await ids(service, 'zebrafinch')).toEqual(['mcp://backlog/resources/new-note.md']);
      expect(() => service.get('TASK-0005')).toThrow(/No item/);
      expect(await service.catchUp()).toBe(0);
    } finally {
      await closeBacklog(service);
      await cleanup();
    }
  });

  it('`read` settles before the watcher is ready; changes made in between are in when `opened` settles', async () => {
    const { dir, cleanup } = await tempBacklog();
    const { read, opened } = await beginOpenBacklog({ dir, watch: true, embeddings: 'none' });
    const service = await read;
    try {
      expect(backlogWatcher(service)).toBeUndefined();
      expect(await ids(service, 'passkeys')).toContain('TASK-0005');
      await rm(join(dir, 'tasks', 'TASK-0005-passkeys-second-factor.md'));
      await writeFile(join(dir, 'resources', 'between.md'), '# Between\nbetweenword');
      await opened;
      // No wait for the watcher's events: the catch-up has applied both.
      expect(await ids(service, 'passkeys')).not.toContain('TASK-0005');
      expect(await ids(service, 'betweenword')).toEqual(['mcp://backlog/resources/between.md']);
      expect(backlogWatcher(service)).toBeDefined();
      // And the watcher follows later changes.
      await writeFile(join(dir, 'resources', 'later.md'), '# Later\nlaterword');
      await within(1000, async () => (await ids(service, 'laterword')).length === 1);
    } finally {
      await closeBacklog(service);
      await cleanup();
    }
  });
});
