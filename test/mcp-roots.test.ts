/**
 * MCP roots end to end (issue #22): the real CLI, `backlog-search mcp` with no --dir, spawned over stdio;
 * the MCP SDK's client declares the roots capability and lists two repositories (one in this project's
 * format, one in Backlog.md's, each with its backlog under `<repo>/backlog/`) and a folder with no backlog.
 * Search covers both, `project` narrows it, a third root added with `roots/list_changed` is searchable
 * without a restart and removed the same way, a write in the two-project scope needs `project`, and the
 * root without a backlog is a warning (stderr, a log message, the next answer), never an error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Root,
} from '@modelcontextprotocol/sdk/types.js';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKLOG_MD_FIXTURE, DEMO_DIR, ROOT, cliArgs } from './helpers.js';

type Data = Record<string, unknown> & { status: string };
type Hit = { id: string; project?: string; title: string };

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({
    name,
    arguments: { ...args, response_format: 'detailed' },
  })) as CallToolResult;
  const data = (res.structuredContent ?? JSON.parse((res.content[0] as { text: string }).text)) as Data;
  return { res, data };
}

/** A write's answer (writes have no response_format). */
async function write(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { res, data: res.structuredContent as Data };
}

describe('MCP roots over stdio (spawned `backlog-search mcp` without --dir)', () => {
  let base: string;
  let client: Client;
  let stderr = '';
  let roots: Root[];
  const logs: string[] = [];
  const uri = (name: string) => pathToFileURL(join(base, name)).href;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'backlog-search-roots-'));
    await cp(DEMO_DIR, join(base, 'api', 'backlog'), { recursive: true });
    await cp(BACKLOG_MD_FIXTURE, join(base, 'web', 'backlog'), { recursive: true });
    await cp(DEMO_DIR, join(base, 'third', 'backlog'), { recursive: true });
    await mkdir(join(base, 'notes'));
    roots = [
      { uri: uri('api'), name: 'api' },
      { uri: uri('web'), name: 'web' },
      { uri: uri('notes'), name: 'notes' },
    ];
    const [command, args] = cliArgs(['mcp']);
    // No --dir and no BACKLOG_DIR (the SDK passes only a few variables); the checkout has no ./backlog.
    const env = { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' };
    const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe', env });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client(
      { name: 'roots-test', version: '1.0.0' },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String(n.params.data));
    });
    await client.connect(transport);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (base) await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  it('a root without a backlog is a warning (stderr, log message, next answer), not an error', async () => {
    expect(client.getInstructions()).toMatch(/backlogs of your roots/);
    const { res, data } = await call(client, 'backlog_search', { query: 'search', limit: 5 });
    expect(res.isError).toBeFalsy();
    expect(data.status).toBe('ok');
    const warning = `root ${uri('notes')}: no backlog`;
    expect(res.content.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining(warning) });
    await vi.waitFor(() => expect(stderr).toContain(warning)); // the pipe may deliver it after the answer
    await vi.waitFor(() => expect(logs.join('\n')).toContain(warning));
    // Said once: the next answer does not repeat it.
    const again = await call(client, 'backlog_search', { query: 'search', limit: 5 });
    expect(again.res.content).toHaveLength(1);
    expect(stderr.split(warning)).toHaveLength(2);
  });

  it('search without project finds items of both roots, with project of one only', async () => {
    const all = await call(client, 'backlog_search', { query: 'search', limit: 50 });
    const hits = all.data.results as Hit[];
    expect(new Set(hits.map((h) => h.project))).toEqual(new Set(['api', 'backlog.md']));
    // Qualified: `<project>:<id>`, or `mcp://backlog/<project>/<path>` for a document.
    for (const h of hits) expect(h.id).toMatch(new RegExp(`^(${h.project}:|mcp://backlog/${h.project}/)`));
    const web = await call(client, 'backlog_search', { query: 'search', limit: 50, project: 'backlog.md' });
    const webHits = web.data.results as Hit[];
    expect(webHits.length).toBeGreaterThan(0);
    for (const h of webHits) expect(h.project).toBe('backlog.md');
    for (const h of webHits) expect(h.id).toMatch(/^(backlog\.md:|mcp:\/\/backlog\/backlog\.md\/)/);
    const api = await call(client, 'backlog_search', { query: 'search', limit: 50, project: ['api'] });
    expect((api.data.results as Hit[]).every((h) => h.project === 'api')).toBe(true);
    // A qualified id goes back into get as returned.
    const got = await call(client, 'backlog_get', { ids: webHits[0].id });
    expect(got.data.items).toMatchObject([
      { status: 'ok', item: { id: webHits[0].id, project: 'backlog.md' } },
    ]);
    // The tools advertise project with the names open.
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'backlog_search')!;
    expect(search.inputSchema.properties!.project).toMatchObject({
      description: expect.stringContaining('api, backlog.md'),
    });
  });

  it('a write in the two-project scope needs project (PROJECT_REQUIRED), and goes where project says', async () => {
    const refused = await write(client, 'backlog_create', { title: 'Roots write' });
    expect(refused.res.isError).toBe(true);
    expect(refused.data).toMatchObject({
      status: 'error',
      error: { code: 'PROJECT_REQUIRED', projects: ['api', 'backlog.md'] },
    });
    const created = await write(client, 'backlog_create', { title: 'Roots write', project: 'api' });
    expect(created.data).toMatchObject({
      status: 'ok',
      project: 'api',
      id: expect.stringMatching(/^api:TASK-/),
    });
  });

  it('a third root added with roots/list_changed is searchable without a restart, and leaves when removed', async () => {
    const before = await call(client, 'backlog_search', { query: 'search', limit: 50 });
    expect((before.data.results as Hit[]).some((h) => h.project === 'third')).toBe(false);
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve());
    });
    roots = [...roots, { uri: uri('third'), name: 'third' }];
    await client.sendRootsListChanged();
    // Tool calls sent after the notification wait until the new root's backlog is open.
    const after = await call(client, 'backlog_search', { query: 'search', limit: 50, project: 'third' });
    expect(after.data.status).toBe('ok');
    expect((after.data.results as Hit[]).length).toBeGreaterThan(0);
    expect((after.data.results as Hit[]).every((h) => h.project === 'third')).toBe(true);
    await changed; // and the client was told the tools (their project names) changed
    // The same bare id in two projects is ambiguous; the candidates are qualified.
    const ambiguous = await call(client, 'backlog_get', { ids: 'TASK-0001' });
    expect(ambiguous.data).toMatchObject({
      status: 'error',
      error: { code: 'AMBIGUOUS_ID', candidates: ['api:TASK-0001', 'third:TASK-0001'] },
    });
    roots = roots.filter((r) => r.name !== 'third');
    await client.sendRootsListChanged();
    const gone = await call(client, 'backlog_search', { query: 'search', project: 'third' });
    expect(gone.data).toMatchObject({ status: 'error', error: { code: 'INVALID_FILTER' } });
  });
});

describe('without roots, `backlog-search mcp` with no --dir does what it always did', () => {
  async function start(capabilities: Record<string, unknown>, answer?: () => never) {
    const [command, args] = cliArgs(['mcp']);
    const env = { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' };
    const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe', env });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'no-roots', version: '1' }, { capabilities });
    if (answer) client.setRequestHandler(ListRootsRequestSchema, answer);
    await client.connect(transport);
    return { client, stderr: () => stderr };
  }

  it('a client without the roots capability gets the demo as before: its notice, read tools, no project', async () => {
    const { client } = await start({});
    try {
      expect(client.getInstructions()).toMatch(/^NOTE: .*DEMO backlog, read-only/);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'backlog_get',
        'backlog_get_metadata',
        'backlog_list',
        'backlog_search',
      ]);
      for (const t of tools) expect(t.inputSchema.properties).not.toHaveProperty('project');
      const { res, data } = await call(client, 'backlog_search', { query: 'login', limit: 1 });
      expect(data.status).toBe('ok');
      expect((data.results as Hit[])[0].id).toBe('TASK-0001');
      expect(res.content.at(-1)).toMatchObject({ text: expect.stringMatching(/^NOTE: .*DEMO/) });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a client whose roots/list fails: a warning, and the demo is served', async () => {
    const { client, stderr } = await start({ roots: {} }, () => {
      throw new Error('no roots here');
    });
    try {
      const { res, data } = await call(client, 'backlog_search', { query: 'login', limit: 1 });
      expect(res.isError).toBeFalsy();
      expect((data.results as Hit[])[0].id).toBe('TASK-0001');
      expect(stderr()).toMatch(/warning: roots\/list failed/);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('`backlog-search mcp` with several --dir serves them all', () => {
  it('searches both, names one with NAME=PATH, and a create needs project', async () => {
    const base = await mkdtemp(join(tmpdir(), 'backlog-search-mcpdirs-'));
    await cp(DEMO_DIR, join(base, 'one', 'backlog'), { recursive: true });
    await cp(BACKLOG_MD_FIXTURE, join(base, 'two', 'backlog'), { recursive: true });
    const [command, args] = cliArgs([
      'mcp',
      '--dir',
      `api=${join(base, 'one', 'backlog')}`,
      '--dir',
      join(base, 'two'),
    ]);
    const env = { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' };
    const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'ignore', env });
    const client = new Client({ name: 'mcp-dirs', version: '1' });
    try {
      await client.connect(transport);
      expect(client.getInstructions()).toMatch(/^Search and edit 2 backlogs/);
      const { data } = await call(client, 'backlog_search', { query: 'search', limit: 50 });
      expect(new Set((data.results as Hit[]).map((h) => h.project))).toEqual(new Set(['api', 'backlog.md']));
      const refused = await write(client, 'backlog_create', { title: 'Dirs write' });
      expect(refused.data).toMatchObject({ error: { code: 'PROJECT_REQUIRED' } });
    } finally {
      await client.close();
      await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  }, 90_000);
  it('answers initialize before the backlogs are read; a first search waits for them', async () => {
    const base = await mkdtemp(join(tmpdir(), 'backlog-search-mcpdirs-'));
    // A backlog big enough that reading it takes far longer than answering initialize.
    const big = join(base, 'big', 'backlog');
    await mkdir(join(big, 'tasks'), { recursive: true });
    for (let i = 1; i <= 2000; i++) {
      const id = `TASK-${String(i).padStart(4, '0')}`;
      await writeFile(
        join(big, 'tasks', `${id}-generated.md`),
        `---\nid: ${id}\ntitle: Generated task ${i} about the zeppelin hangar\ntype: task\nstatus: todo\n---\n\nBody ${i} of a generated task: the zeppelin needs a hangar, a crew and fuel number ${i}.\n`,
      );
    }
    await cp(BACKLOG_MD_FIXTURE, join(base, 'two', 'backlog'), { recursive: true });
    const [command, args] = cliArgs(['mcp', '--no-watch', '--dir', big, '--dir', join(base, 'two')]);
    const env = { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' };
    const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe', env });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'mcp-dirs-early', version: '1' });
    const opened = 'MCP over stdio for 2 backlogs: big, backlog.md';
    try {
      await client.connect(transport);
      // Before: every backlog was read first, and this line was written before initialize was answered.
      expect(stderr).not.toContain(opened);
      expect(client.getInstructions()).toMatch(/^Search and edit 2 backlogs/);
      const { data } = await call(client, 'backlog_search', { query: 'zeppelin hangar', limit: 5 });
      expect(data.total).toBe(2000);
      expect((data.results as Hit[])[0]).toMatchObject({ project: 'big' });
      const other = await call(client, 'backlog_search', { query: 'search', project: 'backlog.md' });
      expect((other.data.results as Hit[]).length).toBeGreaterThan(0);
      await vi.waitFor(() => expect(stderr).toContain(opened));
    } finally {
      await client.close();
      await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  }, 120_000);
});
