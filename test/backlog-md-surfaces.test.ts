/**
 * The Backlog.md project as its users see it, on every surface (#25): ids as people type them (a bare
 * number, any case, a duplicate's qualified id) answer on the CLI, MCP and HTTP; a task that is not live
 * says so on each; and the filters speak the backlog's kinds (no epics).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { createMcpServer } from '../src/mcp/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { BACKLOG_MD_FULL, HAS_BACKLOG_MD_FULL, runCli, tempBacklog } from './helpers.js';

/** What each spelling must name: BACK-74's path, and the archived copy of BACK-569. */
const REFS: Record<string, RegExp> = {
  '74': /^completed\/back-74 - /,
  'back-74': /^completed\/back-74 - /,
  'BACK-74': /^completed\/back-74 - /,
  'BACK-569@archived': /^archive\/tasks\/back-569 - /,
  'back-569@archived': /^archive\/tasks\/back-569 - /,
};

// The ids below (BACK-74, BACK-569@archived) are the full folder's, in ../shared/eval.
describe.skipIf(!HAS_BACKLOG_MD_FULL)('a Backlog.md project on the CLI, MCP and HTTP', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let service: BacklogService;
  let client: Client;
  let http: RunningHttpServer;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(BACKLOG_MD_FULL));
    service = await openBacklog({ dir, embeddings: 'none', watch: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(service).connect(a);
    client = new Client({ name: 'surfaces', version: '1' });
    await client.connect(b);
    http = await startHttpServer({ service, port: 0 });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await http?.close();
    if (service) await closeBacklog(service);
    await cleanup?.();
  });

  it('get 74, back-74, BACK-74 and BACK-569@archived: the CLI', async () => {
    const res = await runCli(['--dir', dir, 'get', ...Object.keys(REFS), '--json']);
    expect(res.code, res.stderr).toBe(0);
    const entries = JSON.parse(res.stdout) as Array<{ id: string; status: string; item: { path: string } }>;
    for (const [i, [ref, path]] of Object.entries(REFS).entries()) {
      expect(entries[i].status, ref).toBe('ok');
      expect(entries[i].item.path, ref).toMatch(path);
    }
  });

  it('... MCP backlog_get and resources/read', async () => {
    for (const [ref, path] of Object.entries(REFS)) {
      const got = (await client.callTool({
        name: 'backlog_get',
        arguments: { ids: ref, response_format: 'detailed', max_chars: 1 },
      })) as CallToolResult;
      expect(got.isError, ref).toBeFalsy();
      const items = (got.structuredContent as { items: Array<{ item: { path: string } }> }).items;
      expect(items[0].item.path, ref).toMatch(path);
      const read = await client.readResource({ uri: `mcp://backlog/${ref}` });
      expect(read.contents[0].uri, ref).toBeTruthy();
    }
  });

  it('... HTTP GET /tasks/:id', async () => {
    for (const [ref, path] of Object.entries(REFS)) {
      const res = await fetch(`${http.url}/tasks/${encodeURIComponent(ref)}`);
      expect(res.status, ref).toBe(200);
      expect(((await res.json()) as { item: { path: string } }).item.path, ref).toMatch(path);
    }
  });

  it('a task that is not live says so on each surface', async () => {
    const cli = await runCli(['--dir', dir, 'get', 'BACK-569@archived']);
    expect(cli.stdout).toMatch(/state: archived/);
    const list = await runCli(['--dir', dir, 'list', '--status', 'In Progress', '--state', 'all']);
    for (const line of list.stdout.split('\n').filter((l) => /^BACK-/.test(l)))
      expect(line).toMatch(/\[task\/In Progress, archived\]/);
    const mcp = (await client.callTool({
      name: 'backlog_search',
      arguments: { query: 'browser task loading asynchronous idle stable' },
    })) as CallToolResult;
    expect((mcp.content[0] as { text: string }).text).toMatch(/BACK-569@archived \[In Progress, archived\]/);
    const body = (await (
      await fetch(`${http.url}/search?query=${encodeURIComponent('browser task loading idle stable')}`)
    ).json()) as { results: Array<{ id: string; state: string | null }> };
    expect(body.results.find((r) => r.id === 'BACK-569@archived')?.state).toBe('archived');
  });

  it('speaks the backlog kinds: epic is refused with the kinds it has, the hints name its own ids', async () => {
    await expect(service.searchUnified('board', { types: 'epic' })).rejects.toMatchObject({
      code: 'INVALID_FILTER',
      hint: expect.stringMatching(/task, document, decision, milestone.*parent task: filter by parent_id/),
    });
    const missing = await runCli(['--dir', dir, 'get', 'BACK-99999']);
    expect(missing.code).toBe(2);
    const said = missing.stdout + missing.stderr;
    expect(said).toMatch(/hint: Use an id from search results \(BACK-\d+, doc-/);
    expect(said).not.toMatch(/TASK-0001|EPIC-0001/);
    const health = (await (await fetch(`${http.url}/health`)).json()) as {
      project: string;
      vocabulary: { kinds: Array<{ type: string }>; parent: string };
    };
    expect(health.project).toBe('Backlog.md');
    expect(health.vocabulary.kinds.map((k) => k.type)).not.toContain('epic');
    expect(health.vocabulary.parent).toBe('parent task');
  });
});
