/**
 * What a second backlog costs an agent before its first call (docs/mcp.md): the characters of the MCP
 * server's instructions and tools/list for the demo backlog alone, the Backlog.md fixture alone, and both
 * as one workspace. Copies in a temp folder; lexical only.
 *   npx tsx bench/mcp-workspace-size.ts
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createMcpServer } from '../src/mcp/server.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';

const ROOT = resolve(import.meta.dirname, '..');
const base = await mkdtemp(join(tmpdir(), 'bs-mcp-size-'));
const api = join(base, 'api', 'backlog');
const web = join(base, 'web', 'backlog');
await cp(join(ROOT, 'demo', 'backlog'), api, { recursive: true });
await cp(join(ROOT, 'test', 'fixtures', 'backlog-md'), web, { recursive: true });

async function measure(label: string, dirs: string[]): Promise<void> {
  const ws = await openWorkspace({
    embeddings: 'none',
    cacheDir: false,
    watch: false,
    backlogs: dirs.map((dir) => ({ dir })),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  // One backlog as the CLI serves it (a BacklogService); several as a workspace.
  await createMcpServer(ws.projects.length === 1 ? ws.projects[0].service : ws).connect(a);
  const client = new Client({ name: 'size', version: '1' });
  await client.connect(b);
  const tools = JSON.stringify((await client.listTools()).tools).length;
  console.log(`${label}: instructions ${client.getInstructions()!.length} chars, tools/list ${tools} chars`);
  await client.close();
  await closeWorkspace(ws);
}

try {
  await measure('demo alone', [api]);
  await measure('Backlog.md fixture alone', [web]);
  await measure('both', [api, web]);
} finally {
  await rm(base, { recursive: true, force: true });
}
