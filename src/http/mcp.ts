/**
 * MCP over Streamable HTTP at `/mcp`, with sessions (so list-changed notifications reach clients on the
 * GET stream): one MCP server per session, over the same BacklogService.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { randomUUID } from 'node:crypto';
import { createMcpServer } from '../mcp/server.js';
import type { BacklogService } from '../service/backlog-service.js';
import type { HttpApp } from './respond.js';

export interface McpMountOptions {
  /** MCP sessions idle this long are closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** At most this many MCP sessions; the least recently used is closed beyond it (default 100). */
  maxSessions?: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
}

/** MCP Streamable HTTP with sessions (so list-changed notifications reach clients on the GET stream). */
export function mountMcp(
  app: HttpApp,
  service: BacklogService,
  options: McpMountOptions,
): () => Promise<void> {
  const sessions = new Map<string, Session>();
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 100;

  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.server.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) if (now - s.lastSeen > idleMs) void closeSession(id);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  app.all('/mcp', async (c) => {
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session)
        return c.json(
          {
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found; initialize a new session' },
            id: null,
          },
          404,
        );
      session.lastSeen = Date.now();
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') {
      return c.json(
        {
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Bad request: no mcp-session-id; start with an initialize POST' },
          id: null,
        },
        400,
      );
    }
    const server = createMcpServer(service);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastSeen: Date.now() });
        if (sessions.size > maxSessions) {
          const oldest = [...sessions].sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0][0];
          void closeSession(oldest);
        }
      },
      onsessionclosed: (id) => void closeSession(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    if (!transport.sessionId || !sessions.has(transport.sessionId))
      await server.close().catch(() => undefined);
    return response;
  });

  return async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.keys()].map(closeSession));
  };
}
