/**
 * The MCP server over a workspace of two backlogs (issue #22), in process with the SDK's client: the demo
 * (`api`) and the Backlog.md fixture (`backlog.md`). The instructions name both, every read takes
 * `project`, answers carry `project` and qualified ids, get/get_metadata/update/delete take qualified ids,
 * resources name their project, a write needs `project`, and adding a project (as roots do) changes the
 * tools' descriptions and says so.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/server.js';
import { addBacklog, closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { BACKLOG_MD_FIXTURE, DEMO_DIR } from './helpers.js';

const opts = { embeddings: 'none', cacheDir: false, watch: false } as const;
type Data = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('the MCP server over a workspace of two backlogs', () => {
  let root: string;
  let ws: Workspace;
  let client: Client;

  async function call(name: string, args: Record<string, unknown>, detailed = true) {
    const res = (await client.callTool({
      name,
      arguments: detailed ? { ...args, response_format: 'detailed' } : args,
    })) as CallToolResult;
    return {
      res,
      data: (res.structuredContent ?? {}) as Data,
      text: (res.content[0] as { text: string }).text,
    };
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'backlog-search-mcpws-'));
    await cp(DEMO_DIR, join(root, 'api', 'backlog'), { recursive: true });
    await cp(BACKLOG_MD_FIXTURE, join(root, 'web', 'backlog'), { recursive: true });
    await cp(DEMO_DIR, join(root, 'third', 'backlog'), { recursive: true });
    ws = await openWorkspace({ ...opts, backlogs: [{ dir: join(root, 'api') }, { dir: join(root, 'web') }] });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(ws).connect(a);
    client = new Client({ name: 'mcp-workspace', version: '1' });
    await client.connect(b);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (ws) await closeWorkspace(ws);
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  it('the instructions name each project compactly; the tools advertise project with the names', async () => {
    const text = client.getInstructions()!;
    expect(text).toMatch(/^Search and edit 2 backlogs/);
    expect(text).toContain('api (statuses open');
    expect(text).toContain('backlog.md (Backlog.md; statuses To Do');
    expect(text).toContain('<project>:<id>');
    expect(text.length).toBeLessThan(1500);
    const { tools } = await client.listTools();
    for (const t of tools) expect(t.inputSchema.properties!.project).toBeDefined();
    const search = tools.find((t) => t.name === 'backlog_search')!;
    expect(search.inputSchema.properties!.project).toMatchObject({
      type: 'array',
      description: expect.stringContaining('api, backlog.md'),
    });
    expect(tools.find((t) => t.name === 'backlog_create')!.description).toContain('Backlog.md task file');
  });

  it('search, list: project on every hit, qualified ids; project narrows; an unknown project lists the names', async () => {
    const all = await call('backlog_search', { query: 'search', limit: 30 });
    const projects = new Set(all.data.results.map((r: Data) => r.project));
    expect(projects).toEqual(new Set(['api', 'backlog.md']));
    const concise = await call('backlog_search', { query: 'search', limit: 5 }, false);
    expect(concise.text).toMatch(/^(api|backlog\.md):/m);
    const one = await call('backlog_list', { project: 'backlog.md', limit: 100 });
    expect(one.data.results.length).toBeGreaterThan(0);
    for (const r of one.data.results) {
      expect(r.project).toBe('backlog.md');
      expect(r.id).toMatch(/^(backlog\.md:|mcp:\/\/backlog\/backlog\.md\/)/);
    }
    const unknown = await call('backlog_search', { query: 'search', project: 'nope' });
    expect(unknown.data.error).toMatchObject({ code: 'INVALID_FILTER' });
    expect(unknown.data.error.hint).toContain('api, backlog.md');
  });

  it('get and get_metadata take qualified ids; the URI names the project; resources too', async () => {
    const got = await call('backlog_get', { ids: ['api:TASK-0001', 'backlog.md:222'] });
    expect(got.data.items).toMatchObject([
      {
        status: 'ok',
        item: {
          id: 'api:TASK-0001',
          project: 'api',
          uri: expect.stringMatching(/^mcp:\/\/backlog\/api\/tasks\//),
        },
      },
      { status: 'ok', item: { id: 'backlog.md:BACK-222', project: 'backlog.md' } },
    ]);
    const meta = await call('backlog_get_metadata', { id: 'api:TASK-0001' });
    expect(meta.data.metadata).toMatchObject({
      id: 'api:TASK-0001',
      project: 'api',
      uri: got.data.items[0].item.uri,
    });
    const list = await client.listResources();
    const uris = list.resources.map((r) => r.uri);
    expect(uris.some((u) => u.startsWith('mcp://backlog/api/'))).toBe(true);
    expect(uris.some((u) => u.startsWith('mcp://backlog/backlog.md/'))).toBe(true);
    const read = await client.readResource({ uri: got.data.items[0].item.uri });
    expect((read.contents[0] as { text: string }).text).toContain('id: TASK-0001');
  });

  it('writes: create needs project (PROJECT_REQUIRED), update and delete take qualified ids', async () => {
    const refused = await call('backlog_create', { title: 'Nowhere yet' }, false);
    expect(refused.res.isError).toBe(true);
    expect(refused.data.error).toMatchObject({ code: 'PROJECT_REQUIRED', projects: ['api', 'backlog.md'] });
    const created = await call(
      'backlog_create',
      { title: 'Mcp workspace write', project: 'backlog.md' },
      false,
    );
    expect(created.data).toMatchObject({
      project: 'backlog.md',
      id: expect.stringMatching(/^backlog\.md:BACK-\d+$/),
    });
    const updated = await call('backlog_update', { id: created.data.id, status: 'Done' }, false);
    expect(updated.data).toMatchObject({ status: 'ok', id: created.data.id, project: 'backlog.md' });
    const deleted = await call('backlog_delete', { id: created.data.id }, false);
    expect(deleted.data).toMatchObject({ status: 'ok', project: 'backlog.md' });
  });

  it('a project added later (as roots add one): tools/list_changed, a new name, the same bare id is AMBIGUOUS_ID', async () => {
    let toolsChanged = 0;
    let resourcesChanged = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolsChanged++);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void resourcesChanged++);
    const added = await addBacklog(ws, { dir: join(root, 'third') }, opts);
    expect(added).toMatchObject({ name: 'third' });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'backlog_search')!.inputSchema.properties!.project).toMatchObject({
      description: expect.stringContaining('api, backlog.md, third'),
    });
    const ambiguous = await call('backlog_get', { ids: 'TASK-0001' });
    expect(ambiguous.data.error).toMatchObject({
      code: 'AMBIGUOUS_ID',
      candidates: ['api:TASK-0001', 'third:TASK-0001'],
    });
    const scoped = await call('backlog_get', { ids: 'TASK-0001', project: 'third' });
    expect(scoped.data.items[0].item).toMatchObject({ id: 'third:TASK-0001', project: 'third' });
    expect(toolsChanged).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(resourcesChanged).toBeGreaterThan(0);
  });

  it('third is a copy of api: each document is one hit naming the other copy (also_in), in both formats', async () => {
    const query = 'offline sync conflict';
    const detailed = await call('backlog_search', { query, limit: 10 });
    const hits = detailed.data.results as Data[];
    const copies = hits.filter((r) => r.project === 'api' || r.project === 'third');
    expect(copies.length).toBeGreaterThan(1);
    const bare = copies.map((r) => r.id.slice(r.id.indexOf(':') + 1));
    expect(new Set(bare).size).toBe(bare.length);
    // Of two equal copies, the one of the project listed first (api) is shown.
    for (const r of copies) {
      expect(r.project).toBe('api');
      expect(r.also_in).toEqual([
        r.id.replace(/^api:|^mcp:\/\/backlog\/api\//, (x: string) => x.replace('api', 'third')),
      ]);
    }
    const concise = await call('backlog_search', { query, limit: 10 }, false);
    expect(concise.text).toContain(`(also in ${copies[0].also_in[0]})`);
    expect(concise.text).not.toMatch(/^third:/m);
    // Scoped to one project, that project's own answer: no also_in.
    const scoped = await call('backlog_search', { query, limit: 10, project: 'third' });
    expect(scoped.data.results.length).toBeGreaterThan(0);
    expect(scoped.data.results.some((r: Data) => r.also_in)).toBe(false);
  });
});
