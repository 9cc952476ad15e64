/**
 * How the roots become the workspace's projects (src/mcp/roots.ts), in process with the SDK's client
 * declaring roots: roots added and removed, no root with a backlog (the fallback is served again), a root
 * whose backlog is the fallback's folder (one service, shared), and URIs that are not local folders.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ListRootsRequestSchema, type JSONRPCMessage, type Root } from '@modelcontextprotocol/sdk/types.js';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Roots, backlogOfRoot } from '../src/mcp/roots.js';
import { createMcpServer } from '../src/mcp/server.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { Workspace } from '../src/workspace/workspace.js';
import { BACKLOG_MD_FIXTURE, DEMO_DIR } from './helpers.js';

const opts = { embeddings: 'none', cacheDir: false, watch: false } as const;
const changed: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };

describe('roots -> projects', () => {
  let base: string;
  let roots: Root[] = [];
  let ws: Workspace;
  let sync: Roots;
  let client: Client;
  const uri = (name: string) => pathToFileURL(join(base, name)).href;
  const names = () => ws.names().sort();

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'backlog-search-rootsync-'));
    await cp(DEMO_DIR, join(base, 'home', 'backlog'), { recursive: true });
    await cp(DEMO_DIR, join(base, 'api', 'backlog'), { recursive: true });
    await cp(BACKLOG_MD_FIXTURE, join(base, 'web', 'backlog'), { recursive: true });
    await mkdir(join(base, 'empty'));
    // The fallback: the backlog the server found in its working directory (here `home`).
    const service = await openBacklog({ ...opts, dir: join(base, 'home', 'backlog') });
    ws = Workspace.of(service);
    sync = new Roots({ ws, fallback: ws.projects[0], open: opts });
    const server = createMcpServer(ws, { roots: true, warnings: sync.takeWarnings });
    sync.attach(server);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client(
      { name: 'roots-sync', version: '1' },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
    await client.connect(b);
    // What stdio.ts shows the watcher: the client's initialize (it declared roots).
    sync.watch({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: { roots: {} },
        clientInfo: { name: 'x', version: '1' },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await sync?.close();
    await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  it('roots in, roots out; with none left the fallback is served again', async () => {
    expect(names()).toEqual(['home']);
    roots = [{ uri: uri('api') }, { uri: uri('web') }];
    await sync.watch(changed);
    expect(names()).toEqual(['api', 'backlog.md']);
    roots = [{ uri: uri('web') }];
    await sync.watch(changed);
    expect(names()).toEqual(['backlog.md']);
    roots = [{ uri: uri('empty') }];
    await sync.watch(changed);
    expect(names()).toEqual(['home']);
    expect(sync.takeWarnings()).toEqual([expect.stringContaining(`root ${uri('empty')}: no backlog`)]);
    // Said once: the same root again is not warned about again.
    await sync.watch(changed);
    expect(sync.takeWarnings()).toEqual([]);
    expect((await ws.searchUnified('login')).total).toBeGreaterThan(0);
  }, 60_000);

  it("a root whose backlog is the fallback's folder shares its service", async () => {
    const fallback = ws.projects[0].service;
    roots = [{ uri: uri('home') }, { uri: uri('web') }];
    await sync.watch(changed);
    expect(names()).toEqual(['backlog.md', 'home']);
    expect(ws.byName('home')!.service).toBe(fallback);
    roots = [{ uri: uri('web') }];
    await sync.watch(changed);
    expect(names()).toEqual(['backlog.md']);
    roots = [];
    await sync.watch(changed);
    expect(names()).toEqual(['home']);
    expect(ws.byName('home')!.service).toBe(fallback);
  }, 60_000);

  it('only local file:// URIs naming a folder are taken', async () => {
    expect(await backlogOfRoot('https://example.com/repo')).toEqual({
      problem: expect.stringContaining('not a file://'),
    });
    expect(await backlogOfRoot('file://evil.example/share')).toEqual({
      problem: expect.stringContaining('another host'),
    });
    expect(await backlogOfRoot('not a uri')).toEqual({ problem: expect.stringContaining('not a valid') });
    expect(await backlogOfRoot(uri('missing'))).toEqual({
      problem: expect.stringContaining('no such folder'),
    });
    expect(await backlogOfRoot(uri('api'))).toEqual({ dir: join(base, 'api', 'backlog') });
    // The root itself when it is a backlog.
    expect(await backlogOfRoot(pathToFileURL(join(base, 'web', 'backlog')).href)).toEqual({
      dir: join(base, 'web', 'backlog'),
    });
  });
});
