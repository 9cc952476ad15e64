import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { call, defineContract } from './mcp-contract.js';
import { spawnCli, stopped, tempBacklog } from './helpers.js';

/** A raw GET with chosen headers (fetch would not let us set Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('MCP over Streamable HTTP', () => {
  let server: RunningHttpServer;
  let service: BacklogService;
  let reference: BacklogService;
  let client: Client;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog());
    service = await openBacklog({ dir });
    reference = await openBacklog({ dir });
    server = await startHttpServer({ service, port: 0 });
    client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await cleanup?.();
  });

  it('binds to 127.0.0.1 by default and answers /health', async () => {
    expect(server.host).toBe('127.0.0.1');
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', name: 'backlog-search', items: service.size });
  });

  defineContract({ client: () => client, dir: () => dir, reference: () => reference });

  it('50 parallel backlog_create calls: 50 distinct ids, 50 files, all searchable', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(client, 'backlog_create', {
          title: `Parallel task ${i}`,
          body: `quokkafest item ${i}`,
          tags: 'load',
        }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const ids = results.map((r) => r.data.id as string);
    expect(new Set(ids).size).toBe(50);
    const files = (await readdir(join(dir, 'tasks'))).filter((f) => ids.some((id) => f.startsWith(`${id}-`)));
    expect(files).toHaveLength(50);
    const found = await call(client, 'backlog_search', { query: 'quokkafest', limit: 100 });
    expect(found.data.total).toBe(50);
    expect(new Set(found.data.results.map((r: { id: string }) => r.id))).toEqual(new Set(ids));
  });

  it('refuses a foreign Origin or Host with 403 (DNS rebinding)', async () => {
    const origin = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        Origin: 'http://evil.example',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(origin.status).toBe(403);
    expect(await origin.json()).toMatchObject({ status: 'error', error: { code: 'FORBIDDEN' } });
    const host = await rawGet(`${server.url}/health`, { Host: 'evil.example:3030' });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error.message).toContain('evil.example');
    expect(
      (
        await rawGet(`${server.url}/health`, {
          Host: `localhost:${server.port}`,
          Origin: `http://localhost:5173`,
        })
      ).status,
    ).toBe(200);
    expect((await rawGet(`${server.url}/health`, { Host: `[::1]:${server.port}` })).status).toBe(200);
  });

  it('an allowlist admits other hosts and origins', async () => {
    const other = await startHttpServer({
      service,
      port: 0,
      allowedHosts: ['backlog.internal'],
      allowedOrigins: ['https://viewer.example.com'],
    });
    try {
      expect(
        (
          await rawGet(`${other.url}/health`, {
            Host: 'backlog.internal:80',
            Origin: 'https://viewer.example.com',
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await rawGet(`${other.url}/health`, {
            Host: 'backlog.internal',
            Origin: 'https://evil.example.com',
          })
        ).status,
      ).toBe(403);
    } finally {
      await other.close();
    }
  });

  it('unknown sessions and session-less GETs get JSON-RPC errors; unknown routes a JSON 404', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const stale = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(stale.status).toBe(404);
    const get = await fetch(`${server.url}/mcp`);
    expect(get.status).toBe(400);
    const notInit = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(notInit.status).toBe(400);
    const route = await fetch(`${server.url}/nope`);
    expect(route.status).toBe(404);
    expect(await route.json()).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND' } });
  });

  it('`backlog-search serve --port 0` logs its URL on stderr and serves MCP', async () => {
    const child = spawnCli(['serve', '--port', '0', '--dir', dir]);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${err}`)), 15_000);
        child.stderr!.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      const c = new Client({ name: 'serve-test', version: '1.0.0' });
      await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      const r = await call(c, 'backlog_search', { query: 'login' });
      expect(r.data.results[0].id).toBe('TASK-0001');
      await c.close();
    } finally {
      // It stops on SIGTERM (a process left behind would outlive the test run).
      expect(await stopped(child)).toBe(true);
    }
  });
});
