/**
 * A `serve`-like process for the leak probe: the demo backlog over HTTP on 127.0.0.1 (lexical), run with
 * --expose-gc. Each stdin line `rss` runs a full GC and prints `rss <MB> <stream entries>`. With
 * LEAK_BASELINE=1 the SDK transport's own `send` is used (the JSON-response leak left open), to measure
 * what the fix changes.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createInterface } from 'node:readline';
import { JsonResponseTransport } from '../../src/http/mcp.js';
import { mcpSessionStats, startHttpServer } from '../../src/http/server.js';
import { openBacklog } from '../../src/service/open-backlog.js';

if (process.env.LEAK_BASELINE === '1')
  JsonResponseTransport.prototype.send = WebStandardStreamableHTTPServerTransport.prototype.send;
const service = await openBacklog({ dir: process.argv[2], embeddings: 'none', cacheDir: false });
const server = await startHttpServer({ service, port: 0 });
process.stdout.write(`url ${server.url}\n`);
const gc = (globalThis as { gc?: () => void }).gc!;
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'rss') continue;
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const stats = mcpSessionStats(server.app)!;
  process.stdout.write(`rss ${(process.memoryUsage().rss / 1e6).toFixed(1)} ${stats.streamEntries}\n`);
}
await server.close();
await service.close();
