import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BacklogService } from '../service/backlog-service.js';
import type { Workspace } from '../workspace/workspace.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/** Requests answered before the backlog is open: they need only the server's description of itself. */
const WITHOUT_ITEMS = new Set(['initialize', 'notifications/initialized', 'ping', 'tools/list']);

export interface StdioOptions extends McpServerOptions {
  /**
   * Settles when `service` has read the backlog (beginOpenBacklog's `read`). Until then `initialize` and
   * `tools/list` are answered at once and every other message waits for it, in the order it came; when it
   * fails, the server closes and `runStdioServer` rejects with its error.
   */
  opened?: Promise<unknown>;
  /**
   * Given the server, returns what sees each message from the client before the server does; a promise
   * it returns holds the later messages that need the backlogs, as `opened` does (the roots: roots.ts).
   */
  watch?: (server: McpServer) => (message: JSONRPCMessage) => Promise<unknown> | undefined;
  /** The streams to serve on instead of stdin and stdout (early.ts: `initialize` answered before). */
  stdio?: { stdin: Readable; stdout: Writable };
}

/**
 * Serves a backlog or a workspace over stdio (`backlog-search mcp`) until the client closes stdin.
 * stdout carries the protocol only; messages for people go to stderr.
 */
export async function runStdioServer(
  target: BacklogService | Workspace,
  options: StdioOptions = {},
): Promise<void> {
  const server = createMcpServer(target, options);
  // Streams given (early.ts) already hold messages: they reach the transport once it is wired up below,
  // so that what needs the backlog is held and the end of input is seen.
  const input = options.stdio ? new PassThrough() : process.stdin;
  const transport = new StdioServerTransport(input, options.stdio?.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  let failed: { error: unknown } | undefined;
  if (options.opened || options.watch) holdUntil(transport, options.opened, options.watch?.(server));
  if (options.opened) {
    options.opened.catch((error: unknown) => {
      failed = { error };
      void server.close();
    });
  }
  const stop = () => void server.close();
  input.once('end', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  options.stdio?.stdin.pipe(input);
  await closed;
  if (failed) throw failed.error;
}

/**
 * Holds the messages that need the backlog until `opened` settles (a failed open ends the process), and
 * after each promise `watch` returns, until it settles. Answers to the server's own requests (roots/list)
 * are never held: what holds the others may be waiting for them.
 */
function holdUntil(
  transport: StdioServerTransport,
  opened: Promise<unknown> | undefined,
  watch?: (message: JSONRPCMessage) => Promise<unknown> | undefined,
): void {
  const deliver = transport.onmessage!;
  let holds = 0;
  // Held messages are chained after what holds them, so they are delivered in order before any that comes later.
  let held: Promise<unknown> = Promise.resolve();
  const hold = (until: Promise<unknown>) => {
    holds++;
    held = held
      .then(() => until)
      .catch(() => undefined)
      .finally(() => holds--);
  };
  if (opened) hold(opened);
  transport.onmessage = (message: JSONRPCMessage) => {
    const method = 'method' in message ? message.method : undefined;
    const until = watch?.(message);
    if (holds === 0 || method === undefined || WITHOUT_ITEMS.has(method)) deliver(message);
    else held = held.then(() => deliver(message));
    if (until) hold(until);
  };
}
