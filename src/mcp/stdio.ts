import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { BacklogService } from '../service/backlog-service.js';
import { createMcpServer, type McpServerOptions } from './server.js';

/**
 * Serves `service` over stdio (`backlog-search mcp`) until the client closes stdin. stdout carries the
 * protocol only; messages for people go to stderr.
 */
export async function runStdioServer(service: BacklogService, options: McpServerOptions = {}): Promise<void> {
  const server = createMcpServer(service, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  const stop = () => void server.close();
  process.stdin.once('end', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await closed;
}
