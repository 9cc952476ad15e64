import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { call, defineContract } from './mcp-contract.js';
import { ROOT, cliArgs, tempBacklog } from './helpers.js';

describe('MCP over stdio (spawned `backlog-search mcp`)', () => {
  let client: Client;
  let dir: string;
  let cleanup: () => Promise<void>;
  let reference: BacklogService;
  let stderr = '';

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog());
    reference = await openBacklog({ dir });
    const [command, args] = cliArgs(['mcp', '--dir', dir]);
    // The SDK passes only a few variables to the child; keep it lexical like the rest of the suite.
    const env = { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' };
    const transport = new StdioClientTransport({ command, args, cwd: ROOT, stderr: 'pipe', env });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await cleanup?.();
  });

  it('starts with the server name, instructions, and a note on stderr only', async () => {
    expect(client.getServerVersion()?.name).toBe('backlog-search');
    expect(client.getInstructions()).toContain('backlog_search');
    expect(client.getServerCapabilities()?.resources?.listChanged).toBe(true);
    // Printed once the backlog is read, which may be after initialize was answered.
    await vi.waitFor(() => expect(stderr).toContain('MCP over stdio'), { timeout: 10_000 });
  });

  defineContract({ client: () => client, dir: () => dir, reference: () => reference });

  it('ids never collide across processes: 20 creates over stdio and 20 in process, at once', async () => {
    const local = await openBacklog({ dir });
    const [remote, inProcess] = await Promise.all([
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call(client, 'backlog_create', { title: `Remote ${i}`, body: 'crossprocword' }),
        ),
      ),
      Promise.all(
        Array.from({ length: 20 }, (_, i) => local.create({ title: `Local ${i}`, body: 'crossprocword' })),
      ),
    ]);
    const ids = [...remote.map((r) => r.data.id as string), ...inProcess.map((r) => r.id)];
    expect(new Set(ids).size).toBe(40);
    const files = (await readdir(join(dir, 'tasks'))).filter((f) => ids.some((id) => f.startsWith(`${id}-`)));
    expect(files).toHaveLength(40);
    expect((await readdir(join(dir, 'tasks'))).filter((f) => f.endsWith('.lock'))).toEqual([]);
    // The server sees its own writes at once and, watching the folder, the other process's within a second.
    let total = 0;
    for (
      const deadline = Date.now() + 3000;
      Date.now() < deadline && total < 40;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      total = (await call(client, 'backlog_search', { query: 'crossprocword', limit: 100 })).data
        .total as number;
    }
    expect(total).toBe(40);
    expect((await local.searchUnified('crossprocword', { limit: 100 })).total).toBe(20); // not watching: its own writes only
  });
});
