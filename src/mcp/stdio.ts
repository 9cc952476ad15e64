import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { BacklogService } from '../service/backlog-service.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/** Requests answered before the backlog is open: they need only the server's description of itself. */
const WITHOUT_ITEMS = new Set(['initialize', 'notifications/initialized', 'ping', 'tools/list']);

export interface StdioOptions extends McpServerOptions {
  /**
   * Settles when `service` has read the backlog (beginOpenBacklog's `opened`). Until then `initialize` and
   * `tools/list` are answered at once and every other message waits for it, in the order it came; when it
   * fails, the server closes and `runStdioServer` rejects with its error.
   */
  opened?: Promise<unknown>;
}

/**
 * Serves `service` over stdio (`backlog-search mcp`) until the client closes stdin. stdout carries the
 * protocol only; messages for people go to stderr.
 */
export async function runStdioServer(service: BacklogService, options: StdioOptions = {}): Promise<void> {
  const server = createMcpServer(service, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  let failed: { error: unknown } | undefined;
  if (options.opened) {
    holdUntil(transport, options.opened);
    options.opened.catch((error: unknown) => {
      failed = { error };
      void server.close();
    });
  }
  const stop = () => void server.close();
  process.stdin.once('end', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await closed;
  if (failed) throw failed.error;
}

/** Holds the messages that need the backlog until `opened` settles (a failed open ends the process). */
function holdUntil(transport: StdioServerTransport, opened: Promise<unknown>): void {
  const deliver = transport.onmessage!;
  let ready = false;
  // Held messages are chained after the open, so they are delivered in order before any that comes later.
  let held: Promise<unknown> = opened.then(
    () => (ready = true),
    () => undefined,
  );
  transport.onmessage = (message: JSONRPCMessage) => {
    const method = 'method' in message ? message.method : undefined;
    if (ready || (method !== undefined && WITHOUT_ITEMS.has(method))) deliver(message);
    else held = held.then(() => deliver(message));
  };
}
