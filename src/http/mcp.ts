/**
 * MCP over Streamable HTTP at `/mcp`, with sessions (so list-changed notifications reach clients on the
 * GET stream): one MCP server per session, over the same BacklogService.
 *
 * Sessions end only by their own idleness (or DELETE): another client's flood can fill the table, never
 * push a session out. A full table refuses new sessions (503 SESSION_LIMIT) instead; sessions that never
 * made a call after `initialize` expire after `unusedSessionMs`, so a flood holds the table for about a
 * minute, not half an hour.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { createMcpServer } from '../mcp/server.js';
import type { BacklogService } from '../service/backlog-service.js';
import type { Workspace } from '../workspace/workspace.js';
import { DEFAULT_MAX_BODY_BYTES, isLoopbackHost } from './auth.js';
import type { HttpApp } from './respond.js';

export interface McpMountOptions {
  /** MCP sessions idle this long are closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** Sessions that made no call after initializing are closed after this long idle (default 60 s). */
  unusedSessionMs?: number;
  /** At most this many MCP sessions; beyond it `initialize` gets 503 SESSION_LIMIT (default 500). */
  maxSessions?: number;
  /** At most this many sessions per client address beyond loopback (default 50; loopback clients share `maxSessions`). */
  maxSessionsPerClient?: number;
  /** Serve search and get only: the write tools are not registered, so not listed (default false). */
  readOnly?: boolean;
  /** Request bodies over this many bytes get 413 (default 8 MB). */
  maxBodyBytes?: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  client: string;
  lastSeen: number;
  /** Requests made with the session id (the first is usually `notifications/initialized`). */
  requests: number;
}

/** The SDK transport's private maps (1.32.2), reached only to release what it keeps. */
interface TransportInternals {
  _streamMapping?: Map<string, unknown>;
  _requestToStreamMapping?: Map<string | number, string>;
}

/**
 * The SDK transport with the JSON-response leak closed. With `enableJsonResponse` the SDK (1.32.2)
 * resolves the HTTP response of a request but never deletes its `_streamMapping` entry (the SSE path
 * calls `cleanup()`, the JSON path does not), so every call kept about 10 KB until the session ended.
 * After the last response of a POST is sent, its entry is deleted here. If a later SDK renames the
 * maps, this does nothing and test/reliability-http.test.ts (which counts the entries) fails.
 */
export class JsonResponseTransport extends WebStandardStreamableHTTPServerTransport {
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const maps = this as unknown as TransportInternals;
    const isResponse = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const id = isResponse ? message.id : undefined;
    const streamId = id === undefined ? undefined : maps._requestToStreamMapping?.get(id);
    await super.send(message, options);
    if (streamId === undefined || !maps._requestToStreamMapping || !maps._streamMapping) return;
    for (const sid of maps._requestToStreamMapping.values()) if (sid === streamId) return;
    maps._streamMapping.delete(streamId);
  }

  /** Requests still waiting when the session ends (a DELETE from another request) get an answer, not a dropped connection. */
  override async close(): Promise<void> {
    for (const entry of (this as unknown as TransportInternals)._streamMapping?.values() ?? []) {
      const { resolveJson } = entry as { resolveJson?: (response: Response) => void };
      resolveJson?.(
        Response.json(jsonRpcError(-32001, 'The session ended before this request was answered'), {
          status: 404,
        }),
      );
    }
    return super.close();
  }
}

function jsonRpcError(code: number, message: string, data?: Record<string, unknown>) {
  return { jsonrpc: '2.0' as const, error: { code, message, ...(data ? { data } : {}) }, id: null };
}

const statsOf = new WeakMap<HttpApp, () => { sessions: number; streamEntries: number }>();

/** MCP Streamable HTTP with sessions (so list-changed notifications reach clients on the GET stream). */
export function mountMcp(
  app: HttpApp,
  target: BacklogService | Workspace,
  options: McpMountOptions,
): () => Promise<void> {
  const sessions = new Map<string, Session>();
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const unusedMs = Math.min(options.unusedSessionMs ?? 60_000, idleMs);
  const maxSessions = options.maxSessions ?? 500;
  const perClient = options.maxSessionsPerClient ?? 50;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  const closeSession = async (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.server.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions)
        if (now - s.lastSeen > (s.requests > 1 ? idleMs : unusedMs)) void closeSession(id);
    },
    Math.max(50, Math.min(unusedMs / 4, 15_000)),
  );
  sweep.unref();

  app.all('/mcp', async (c) => {
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return c.json(jsonRpcError(-32001, 'Session not found; initialize a new session'), 404);
      session.lastSeen = Date.now();
      session.requests++;
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') {
      return c.json(
        jsonRpcError(-32000, 'Bad request: no mcp-session-id; start with an initialize POST'),
        400,
      );
    }
    const client = c.env?.incoming?.socket?.remoteAddress ?? 'unknown';
    const full = sessions.size >= maxSessions;
    const clientFull =
      !isLoopbackHost(client.replace(/^::ffff:/, '')) &&
      [...sessions.values()].filter((s) => s.client === client).length >= perClient;
    if (full || clientFull)
      return c.json(
        jsonRpcError(
          -32000,
          full
            ? `The server holds ${maxSessions} MCP sessions, its limit; no new session now`
            : `This client holds ${perClient} MCP sessions, its limit`,
          {
            code: 'SESSION_LIMIT',
            hint: 'Reuse a session, or end unused ones with DELETE /mcp; sessions that never made a call close after a minute.',
          },
        ),
        503,
        { 'Retry-After': String(Math.ceil(unusedMs / 1000)) },
      );
    const server = createMcpServer(target, { readOnly: options.readOnly });
    const transport: JsonResponseTransport = new JsonResponseTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      maxRequestBodySize: maxBody,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, client, lastSeen: Date.now(), requests: 0 });
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

  statsOf.set(app, () => {
    let pending = 0;
    for (const s of sessions.values())
      for (const key of (s.transport as unknown as TransportInternals)._streamMapping?.keys() ?? [])
        if (key !== '_GET_stream') pending++;
    return { sessions: sessions.size, streamEntries: pending };
  });
  return async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.keys()].map(closeSession));
  };
}

/**
 * How many MCP sessions an app holds, and the SDK stream entries they keep besides each session's GET
 * notification stream (each answered request should leave none; tests and the stress bench).
 */
export function mcpSessionStats(app: HttpApp): { sessions: number; streamEntries: number } | undefined {
  return statsOf.get(app)?.();
}
