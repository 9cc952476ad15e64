/**
 * No write ever lands in the built-in demo (#25): with no backlog found, `mcp` and `serve` fall back to the
 * demo shipped in the package, and serve it read-only, saying so in the MCP instructions, in every tool
 * answer and in GET /health (which the viewer shows).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { DEMO_NOTICE, createMcpServer } from '../src/mcp/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { DEMO_BACKLOG_DIR } from '../src/storage/demo.js';
import { DEMO_DIR, runCli } from './helpers.js';

describe('the built-in demo backlog is served read-only', () => {
  let service: BacklogService;
  let client: Client;
  let http: RunningHttpServer;
  let filesBefore: string[];

  beforeAll(async () => {
    expect(DEMO_BACKLOG_DIR).toBe(DEMO_DIR);
    filesBefore = await readdir(join(DEMO_DIR, 'tasks'));
    service = await openBacklog({ dir: DEMO_BACKLOG_DIR, embeddings: 'none', watch: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(service).connect(a);
    client = new Client({ name: 'demo-read-only', version: '1' });
    await client.connect(b);
    http = await startHttpServer({ service, port: 0 });
  });
  afterAll(async () => {
    await client?.close();
    await http?.close();
    if (service) await closeBacklog(service);
  });

  it('lists no write tool and says why in the instructions', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['backlog_get', 'backlog_get_metadata', 'backlog_list', 'backlog_search']);
    expect(client.getInstructions()).toMatch(/^NOTE: .*DEMO backlog, read-only.*--dir/);
  });

  it('ends every tool answer, and every error, with the notice', async () => {
    const search = (await client.callTool({
      name: 'backlog_search',
      arguments: { query: 'login' },
    })) as CallToolResult;
    expect(search.content.at(-1)).toEqual({ type: 'text', text: DEMO_NOTICE });
    expect((search.content[0] as { text: string }).text).toMatch(/results? for "login"/);
    const detailed = (await client.callTool({
      name: 'backlog_list',
      arguments: { response_format: 'detailed' },
    })) as CallToolResult;
    expect(detailed.structuredContent).toMatchObject({ status: 'ok', notice: DEMO_NOTICE });
    // The answer's own JSON text stays parseable.
    expect(() => JSON.parse((detailed.content[0] as { text: string }).text) as unknown).not.toThrow();
    const write = (await client.callTool({
      name: 'backlog_create',
      arguments: { title: 'Should never land' },
    })) as CallToolResult;
    expect(write.isError).toBe(true);
    expect(write.content.at(-1)).toEqual({ type: 'text', text: DEMO_NOTICE });
    expect(write.structuredContent).toMatchObject({ error: { code: 'FORBIDDEN' } });
  });

  it('refuses writes through the library too, and the folder is unchanged', async () => {
    await expect(service.create({ title: 'Should never land' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      hint: expect.stringMatching(/--dir/),
    });
    await expect(service.update({ id: 'TASK-0001', status: 'done' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await readdir(join(DEMO_DIR, 'tasks'))).toEqual(filesBefore);
  });

  it('GET /health says demo and read-only (the viewer shows it)', async () => {
    const health = (await (await fetch(`${http.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ demo: true, read_only: true, project: 'demo' });
  });

  it('the CLI says it fell back to the demo, read-only, on stderr', async () => {
    const res = await runCli(['list', '-n', '1'], { BACKLOG_DIR: '' });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/built-in demo backlog, read-only/);
  });
});
