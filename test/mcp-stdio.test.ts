import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { beginOpenBacklog, closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { PROTOCOL_VERSIONS, keptInitializePath } from '../src/mcp/early.js';
import { createMcpServer } from '../src/mcp/server.js';
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

describe('MCP over stdio: initialize answered before the SDK loads (mcp/early.ts)', () => {
  /** Spawns `mcp --dir` and collects stdout's messages and stderr. */
  function spawnMcp(dir: string) {
    const [command, args] = cliArgs(['mcp', '--dir', dir]);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, BACKLOG_EMBEDDINGS: 'none' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const messages: Record<string, unknown>[] = [];
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
        messages.push(JSON.parse(out.slice(0, i)) as Record<string, unknown>);
        out = out.slice(i + 1);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    return { send, messages, stderr: () => err, close: () => (child.stdin.end(), exited) };
  }
  const initialize = (protocolVersion: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

  it('lists the SDK protocol versions and announces its capabilities', async () => {
    const { SUPPORTED_PROTOCOL_VERSIONS } = await import('@modelcontextprotocol/sdk/types.js');
    expect(PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });

  it('answers once, as the SDK answers, and the SDK serves the session', async () => {
    const { dir, cleanup } = await tempBacklog();
    const mcp = spawnMcp(dir);
    try {
      mcp.send(initialize('2025-06-18'));
      await vi.waitFor(() => expect(mcp.messages.length).toBe(1), { timeout: 30_000 });
      // What the SDK answers for the same server before its items are read (createMcpServer in process).
      const { service, opened } = await beginOpenBacklog({ dir, embeddings: 'none' });
      const [local, remote] = InMemoryTransport.createLinkedPair();
      await createMcpServer(service).connect(remote);
      const sdk = new Promise<JSONRPCMessage>((resolve) => (local.onmessage = resolve));
      await local.start();
      await local.send(initialize('2025-06-18') as JSONRPCMessage);
      expect(mcp.messages[0]).toEqual(await sdk);
      await local.close();
      await closeBacklog(await opened);

      mcp.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      mcp.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      mcp.send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'backlog_search', arguments: { query: 'login' } },
      });
      await vi.waitFor(() => expect(mcp.messages.map((m) => m.id)).toEqual([1, 2, 3]), { timeout: 30_000 });
      expect((mcp.messages[2].result as { isError?: boolean }).isError).toBeFalsy();
      expect(mcp.stderr()).not.toContain('differs');
      await mcp.close();

      // The next start answers from the kept text (outside the backlog), the same answer.
      const kept = keptInitializePath(dir);
      expect(JSON.parse(await readFile(kept, 'utf8')).instructions).toBe(
        (mcp.messages[0].result as { instructions: string }).instructions,
      );
      const again = spawnMcp(dir);
      again.send(initialize('2025-06-18'));
      again.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      again.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      await vi.waitFor(() => expect(again.messages.map((m) => m.id)).toEqual([1, 2]), { timeout: 30_000 });
      expect(again.messages[0]).toEqual(mcp.messages[0]);
      expect(again.stderr()).not.toContain('differs');
      await again.close();

      // A kept text that config.yml no longer gives (another build of the same version) is said on stderr
      // and dropped once the storage modules are loaded, so the next start makes it anew.
      const wrong = JSON.parse(await readFile(kept, 'utf8')) as { instructions: string };
      await writeFile(kept, JSON.stringify({ ...wrong, instructions: 'stale' }));
      const stale = spawnMcp(dir);
      stale.send(initialize('2025-06-18'));
      stale.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      stale.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      await vi.waitFor(() => expect(stale.messages.map((m) => m.id)).toEqual([1, 2]), { timeout: 30_000 });
      expect((stale.messages[0].result as { instructions: string }).instructions).toBe('stale');
      await vi.waitFor(() => expect(stale.stderr()).toContain('out of date'), { timeout: 30_000 });
      expect(await readFile(kept, 'utf8').catch(() => 'gone')).toBe('gone');
      expect(stale.stderr()).not.toContain('differs');
      await stale.close();
    } finally {
      await mcp.close();
      await cleanup();
    }
  }, 90_000);

  it('leaves a protocol version it does not list to the SDK, and ends when stdin ends', async () => {
    const { dir, cleanup } = await tempBacklog();
    const mcp = spawnMcp(dir);
    try {
      mcp.send(initialize('1999-01-01'));
      await vi.waitFor(() => expect(mcp.messages.length).toBe(1), { timeout: 30_000 });
      const { LATEST_PROTOCOL_VERSION } = await import('@modelcontextprotocol/sdk/types.js');
      expect((mcp.messages[0].result as { protocolVersion: string }).protocolVersion).toBe(
        LATEST_PROTOCOL_VERSION,
      );
    } finally {
      expect(await mcp.close()).toBe(0);
      await cleanup();
    }
  }, 60_000);
});
