/**
 * `npx tsx bench/mcp-http.ts [backlog-dir] [--requests 200] [--json]`: round-trip latency of the
 * `backlog_search` MCP tool over Streamable HTTP (a real server on 127.0.0.1, the SDK's client),
 * lexical mode, after a warm-up. Default folder: ../shared/eval/backlog-md (the Backlog.md project's
 * own backlog, 696 files). Also prints the in-process `searchUnified` time for the same queries, so the
 * protocol overhead is visible.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { percentile } from '../src/eval/metrics.js';
import { startHttpServer } from '../src/http/server.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { BACKLOG_MD, ROOT, argValue } from './common.js';

const args = process.argv.slice(2);
const dir = resolve(args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? BACKLOG_MD);
const REQUESTS = Number(argValue('--requests') ?? 200);
const WARMUP = 50;

/** Queries an agent would send against the Backlog.md project, with varied options. */
const QUERIES: Array<Record<string, unknown>> = [
  { query: 'web ui kanban board drag and drop' },
  { query: 'mcp server tools' },
  { query: 'task dependencies', limit: 10 },
  { query: 'search', sort: 'recent' },
  { query: 'cli init config', status: 'Done' },
  { query: 'markdown frontmatter parsing' },
  { query: 'windows path', conjunctive: true },
  { query: 'subtask parent', include_scores: true },
  { query: 'documentation decisions', types: 'resource' },
  { query: 'claude agents instructions', limit: 5 },
  { query: 'bun build binary release' },
  { query: 'acceptance criteria checklist', include_content: true, limit: 5 },
];

const service = await openBacklog({
  dir,
  embeddings: 'none',
  cacheDir: join(ROOT, '.cache', 'bench', 'mcp-http'),
});
const server = await startHttpServer({ service, port: 0 });
const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));

// Fail fast on an option this backlog rejects (e.g. a status it does not use).
for (const q of QUERIES) {
  const r = await client.callTool({ name: 'backlog_search', arguments: q });
  if (r.isError) throw new Error(`${JSON.stringify(q)}: ${JSON.stringify(r.structuredContent)}`);
}
for (let i = 0; i < WARMUP; i++)
  await client.callTool({ name: 'backlog_search', arguments: QUERIES[i % QUERIES.length] });

const rtt: number[] = [];
for (let i = 0; i < REQUESTS; i++) {
  const started = performance.now();
  await client.callTool({ name: 'backlog_search', arguments: QUERIES[i % QUERIES.length] });
  rtt.push(performance.now() - started);
}
const inProcess: number[] = [];
for (let i = 0; i < REQUESTS; i++) {
  const { query, ...options } = QUERIES[i % QUERIES.length];
  const started = performance.now();
  service.searchUnified(query as string, options);
  inProcess.push(performance.now() - started);
}
await client.close();
await server.close();

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (x: number) => Number(x.toFixed(2));
  return {
    p50: r(percentile(s, 50)),
    p95: r(percentile(s, 95)),
    p99: r(percentile(s, 99)),
    mean: r(s.reduce((a, b) => a + b, 0) / s.length),
    max: r(s[s.length - 1]),
  };
};
const report = {
  backlog: dir,
  items: service.size,
  requests: REQUESTS,
  warmup: WARMUP,
  mode: 'bm25',
  http_round_trip_ms: stats(rtt),
  in_process_search_ms: stats(inProcess),
  node: process.version,
  cpu: os.cpus()[0]?.model ?? 'unknown',
};
if (args.includes('--json')) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  const h = report.http_round_trip_ms;
  const p = report.in_process_search_ms;
  process.stdout.write(
    `backlog_search over MCP Streamable HTTP, ${report.items} items (${dir}), ${REQUESTS} requests after ${WARMUP} warm-up:\n` +
      `  round trip  p50 ${h.p50} ms  p95 ${h.p95} ms  p99 ${h.p99} ms  mean ${h.mean} ms  max ${h.max} ms\n` +
      `  in process  p50 ${p.p50} ms  p95 ${p.p95} ms  p99 ${p.p99} ms\n` +
      `  ${report.node}, ${report.cpu}\n`,
  );
}
