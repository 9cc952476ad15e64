/**
 * Small requests never cost unbounded time or memory, and odd ones get a code, never a 500
 * (docs/security.md): repeated ids, grouping over many matches, long queries, oversized files,
 * query parameters named like Object.prototype members, malformed escapes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { createMcpServer } from '../src/mcp/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { tempBacklog } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let service: BacklogService;
let server: RunningHttpServer;

beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
  service = await openBacklog({ dir, cacheDir: false });
  server = await startHttpServer({ service, port: 0, viewerDir: false });
});
afterAll(async () => {
  await server.close();
  await closeBacklog(service);
  await cleanup();
});

/** A raw GET: fetch would normalize the path's escapes before sending them. */
function rawGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('odd HTTP requests get 400 with a code', () => {
  it.each(['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty', 'isPrototypeOf'])(
    '/search?q=login&%s=x',
    async (name) => {
      const res = await rawGet(`${server.url}/search?q=login&${name}=x`);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe('INVALID_FILTER');
    },
  );

  it.each(['/resources/%E0%A4%A', '/resources/%ZZ', '/tasks/%ZZ', '/tasks/%E0%A4%A'])('%s', async (path) => {
    const res = await rawGet(`${server.url}${path}`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('budgets', () => {
  it('2,000 repeated ids get INPUT_TOO_LARGE at once (library, MCP)', async () => {
    const ids = Array.from({ length: 2000 }, () => 'resources/design/sync-engine-design.md');
    const started = performance.now();
    expect(() => service.get(ids)).toThrow(expect.objectContaining({ code: 'INPUT_TOO_LARGE' }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(service).connect(serverSide);
    const client = new Client({ name: 'budget-test', version: '1.0.0' });
    await client.connect(clientSide);
    const res = await client.callTool({ name: 'backlog_get', arguments: { ids } });
    await client.close();
    expect(res.isError).toBe(true);
    expect((res.structuredContent as { error: { code: string } }).error.code).toBe('INPUT_TOO_LARGE');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a simple-mode query over the term budget gets INPUT_TOO_LARGE', async () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    await expect(service.searchUnified(words)).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
  });

  it('a 1 MB filter value or 1,000 values get INPUT_TOO_LARGE naming the field, in well under a second', async () => {
    const started = performance.now();
    await expect(service.searchUnified('sync', { status: 'a '.repeat(512 * 1024) })).rejects.toMatchObject({
      code: 'INPUT_TOO_LARGE',
      details: { field: 'status' },
    });
    const tags = Array.from({ length: 1000 }, (_, i) => `t${i}`);
    await expect(service.searchUnified('sync', { tags })).rejects.toMatchObject({
      code: 'INPUT_TOO_LARGE',
      details: { field: 'tags' },
    });
    expect(() => service.list({ folder: 'x'.repeat(5000) })).toThrow(
      expect.objectContaining({ code: 'INPUT_TOO_LARGE' }),
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a file over the term budget is indexed up to the budget and reported', async () => {
    const words = Array.from({ length: 150_000 }, (_, i) => `w${i.toString(36)}x`).join(' ');
    await writeFile(join(dir, 'resources', 'huge.md'), `# Huge\nfirstword ${words} lastwordzz\n`);
    const item = await service.applyFile('resources/huge.md');
    expect(item?.title).toBe('Huge');
    expect((await service.searchUnified('firstword')).total).toBe(1);
    expect((await service.searchUnified('lastwordzz')).total).toBe(0);
    const codes = service
      .diagnostics()
      .files.filter((d) => d.path === 'resources/huge.md')
      .map((d) => d.code);
    expect(codes).toContain('terms_over_budget');
    service.removeFile('resources/huge.md');
  });
});

describe('grouping is linear', () => {
  let big: string;
  let bigService: BacklogService;
  beforeAll(async () => {
    big = await mkdtemp(join(tmpdir(), 'backlog-group-'));
    await mkdir(join(big, 'tasks'));
    await mkdir(join(big, 'resources'));
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 20_000; i++) {
      const task = i % 3 === 0;
      const name = task
        ? join(big, 'tasks', `TASK-${String(i).padStart(5, '0')}-n.md`)
        : join(big, 'resources', `note-${i}.md`);
      const text = task
        ? `---\nid: TASK-${String(i).padStart(5, '0')}\ntitle: Task ${i}\nstatus: open\n---\ncommonword ${i}${i % 100 === 0 ? ' hundredthword' : ''}\n`
        : `# Note ${i}\ncommonword and more ${i}${i % 100 === 0 ? ' hundredthword' : ''}\n`;
      writes.push(writeFile(name, text));
      if (writes.length >= 500) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);
    bigService = await openBacklog({ dir: big, cacheDir: false });
  }, 120_000);
  afterAll(async () => {
    await closeBacklog(bigService);
    await rm(big, { recursive: true, force: true });
  });

  it('group_by grows linearly: 20,000 matches cost at most 100x 200 matches', async () => {
    // CPU time of this process (vitest runs each file in its own): other tests running meanwhile on a
    // shared machine do not count, as they do in wall time. 100x the matches: linear measured 18-20x at
    // load 8 on 2 cores (a fixed cost dominates the 200); the cheapest quadratic (an indexOf over the
    // matches per match) measured 320x. 20,000 against 2,000 gave 7-9x quiet and 23x once in CI,
    // and that quadratic would give about 75x by the same figures: too close to tell apart under load.
    const time = async (query: string, total: number) => {
      const t = process.cpuUsage();
      const res = await bigService.searchUnified(query, { group_by: 'type' });
      const used = process.cpuUsage(t);
      expect(res.total).toBe(total);
      if (total === 20_000)
        expect(res.groups?.map((g) => [g.key, g.count])).toEqual([
          ['task', 6667],
          ['resource', 13_333],
        ]);
      return (used.user + used.system) / 1000;
    };
    for (let i = 0; i < 3; i++) await Promise.all([time('commonword', 20_000), time('hundredthword', 200)]);
    const all: number[] = [];
    const hundredth: number[] = [];
    for (let i = 0; i < 15; i++) {
      all.push(await time('commonword', 20_000));
      hundredth.push(await time('hundredthword', 200));
    }
    // The fastest of interleaved runs is each one's own cost; a median still moves with a busy machine.
    expect(Math.min(...all)).toBeLessThanOrEqual(100 * Math.min(...hundredth));
  });
});
