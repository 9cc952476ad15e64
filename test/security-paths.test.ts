/**
 * Nothing outside the backlog root is ever read, written or deleted (docs/security.md): not through a
 * planted persisted index, not through a symbolic link that arrives while the server runs, not
 * through a file swapped for a link under `--no-watch`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/server.js';
import { readIndexCache, writeIndexCache, serviceCacheVersion } from '../src/service/index-cache.js';
import { CACHE_FILE } from '../src/service/cache-file.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import type { BacklogItem } from '../src/storage/types.js';
import { tempBacklog } from './helpers.js';

let dir: string;
let outside: string;
let cleanup: () => Promise<void>;
const SECRET = 'topsecretword';

beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
  // A folder beside the backlog, as `../victim` would be, and a secret elsewhere on the machine.
  outside = await mkdtemp(join(tmpdir(), 'backlog-outside-'));
  await mkdir(join(dir, '..', 'victim'), { recursive: true });
  await writeFile(join(dir, '..', 'victim', 'important.md'), '# Important\nDo not touch.\n');
  await writeFile(join(outside, 'secret.md'), `---\ntitle: Secret\n---\n${SECRET} lives here.\n`);
  await mkdir(join(outside, 'dir'));
  await writeFile(join(outside, 'dir', 'inner.md'), `# Inner\n${SECRET} in a folder.\n`);
});
afterAll(async () => {
  await cleanup();
  await rm(outside, { recursive: true, force: true });
});

async function mcpClient(service: BacklogService): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(service).connect(serverSide);
  const client = new Client({ name: 'paths-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a planted persisted index', () => {
  it('serves, updates and deletes nothing outside the root', async () => {
    // A valid cache first, then the same cache with items whose paths leave the root.
    const first = await openBacklog({ dir });
    await closeBacklog(first);
    const cachePath = join(dir, '.cache', CACHE_FILE);
    const version = serviceCacheVersion(
      new OramaSearchService().settings,
      DEFAULT_LIMITS.maxWordsPerFile,
      'native',
    );
    const read = await readIndexCache(cachePath, version);
    if (!('snapshot' in read)) throw new Error(`no cache: ${read.reason}`);
    const template = read.snapshot.items.find((i) => i.type === 'task')!;
    const hostile = (id: string, path: string): BacklogItem => ({
      ...template,
      id,
      title: `Hostile ${id}`,
      path,
      folder: path.slice(0, path.lastIndexOf('/')),
    });
    read.snapshot.items.push(
      hostile('TASK-9001', '../victim/important.md'),
      hostile('TASK-9002', '../../../../../../../../etc/passwd'),
      hostile('TASK-9003', '/etc/hostname'),
    );
    read.snapshot.files['../victim/important.md'] = { size: 1, mtime_ms: 1 };
    await writeIndexCache(cachePath, version, read.snapshot);

    const service = await openBacklog({ dir });
    const client = await mcpClient(service);
    try {
      for (const id of ['TASK-9001', 'TASK-9002', 'TASK-9003', '../victim/important.md'])
        expect(() => service.get(id)).toThrow(/No item/);
      expect(service.ids().every((id) => !service.get(id).path.startsWith('..'))).toBe(true);
      await expect(client.readResource({ uri: 'mcp://backlog/../victim/important.md' })).rejects.toThrow();
      await expect(client.readResource({ uri: 'mcp://backlog/TASK-9002' })).rejects.toThrow();
      const update = await client.callTool({
        name: 'backlog_update',
        arguments: { id: 'TASK-9001', status: 'done' },
      });
      expect(update.isError).toBe(true);
      const del = await client.callTool({ name: 'backlog_delete', arguments: { id: 'TASK-9001' } });
      expect(del.isError).toBe(true);
      expect(await readFile(join(dir, '..', 'victim', 'important.md'), 'utf8')).toBe(
        '# Important\nDo not touch.\n',
      );
    } finally {
      await client.close();
      await closeBacklog(service);
    }
  });

  it('.cache/ keeps itself out of git', async () => {
    const service = await openBacklog({ dir });
    await closeBacklog(service);
    expect(await readFile(join(dir, '.cache', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
  });
});

describe('symbolic links', () => {
  it('a link that arrives while the server watches is never followed', async () => {
    const service = await openBacklog({ dir, watch: true, cacheDir: false });
    try {
      await symlink(join(outside, 'secret.md'), join(dir, 'resources', 'pulled-link.md'));
      await symlink(join(outside, 'dir'), join(dir, 'resources', 'pulled-dir'));
      // A file written after the links: once it is indexed, the links' events were handled too.
      await writeFile(join(dir, 'resources', 'after-links.md'), '# After\nsentinelword\n');
      await waitFor(async () => (await service.searchUnified('sentinelword')).total === 1);
      await new Promise((r) => setTimeout(r, 300));
      expect((await service.searchUnified(SECRET)).total).toBe(0);
      expect(() => service.get('resources/pulled-link.md')).toThrow(/No item/);
      expect(() => service.get('resources/pulled-dir/inner.md')).toThrow(/No item/);
      // applyFile itself (the path every watcher event takes) refuses links too.
      expect(await service.applyFile('resources/pulled-link.md')).toBeNull();
      expect(await service.applyFile('resources/pulled-dir/inner.md')).toBeNull();
      expect(service.diagnostics().files.map((d) => d.code)).toContain('symbolic_link');
    } finally {
      await closeBacklog(service);
      await unlink(join(dir, 'resources', 'pulled-link.md'));
      await unlink(join(dir, 'resources', 'pulled-dir'));
    }
  });

  it('a file swapped for a link under --no-watch is not served by resources/read', async () => {
    await writeFile(join(dir, 'resources', 'swapped.md'), '# Swapped\nharmless text\n');
    const service = await openBacklog({ dir, watch: false, cacheDir: false });
    const client = await mcpClient(service);
    try {
      const before = await client.readResource({ uri: 'mcp://backlog/resources/swapped.md' });
      expect(JSON.stringify(before.contents)).toContain('harmless text');
      await unlink(join(dir, 'resources', 'swapped.md'));
      await symlink(join(outside, 'secret.md'), join(dir, 'resources', 'swapped.md'));
      const after = await client.readResource({ uri: 'mcp://backlog/resources/swapped.md' }).then(
        (r) => JSON.stringify(r.contents),
        (err: Error) => err.message,
      );
      expect(after).not.toContain(SECRET);
    } finally {
      await client.close();
      await closeBacklog(service);
      await unlink(join(dir, 'resources', 'swapped.md'));
    }
  });

  it('a write through a linked folder is refused with FORBIDDEN_PATH', async () => {
    await symlink(join(outside, 'dir'), join(dir, 'resources', 'linked-dir'));
    const service = await openBacklog({ dir, watch: false, cacheDir: false });
    try {
      await expect(
        service.writeResource({ path: 'resources/linked-dir/new.md', content: 'x' }),
      ).rejects.toMatchObject({ code: 'FORBIDDEN_PATH' });
      await expect(service.writeResource({ path: '../escape.md', content: 'x' })).rejects.toMatchObject({
        code: 'FORBIDDEN_PATH',
      });
      expect(await exists(join(outside, 'dir', 'new.md'))).toBe(false);
    } finally {
      await closeBacklog(service);
      await unlink(join(dir, 'resources', 'linked-dir'));
    }
  });
});

describe('the cache signature', () => {
  it('a cache signed with another key (or an unkeyed hash) is not used', async () => {
    const { dir: own, cleanup: done } = await tempBacklog();
    try {
      await closeBacklog(await openBacklog({ dir: own }));
      const cachePath = join(own, '.cache', CACHE_FILE);
      const bytes = await readFile(cachePath);
      // The same body, signed by someone else: an attacker who planted it, or another user.
      const body = bytes.subarray(8 + 32);
      const forged = Buffer.concat([
        bytes.subarray(0, 8),
        createHmac('sha256', randomBytes(32)).update(body).digest(),
        body,
      ]);
      await writeFile(cachePath, forged);
      const service = await openBacklog({ dir: own });
      try {
        expect(service.cacheStatus().used).toBe(false);
        expect(service.diagnostics().files).toEqual([
          expect.objectContaining({
            code: 'cache_rebuilt',
            message: expect.stringMatching(/not signed by this user/),
          }),
        ]);
      } finally {
        await closeBacklog(service);
      }
    } finally {
      await done();
    }
  });
});
