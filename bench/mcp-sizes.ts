/**
 * `npm run bench:mcp-sizes [-- <backlog-dir>] [--embeddings none|bundled] [--json]`: how much an agent
 * reads from our MCP server and from Backlog.md's (`backlog mcp start`, 1.52.0) for the same requests on
 * the same folder, both started over stdio and driven by the MCP SDK's client. Default folder:
 * ../shared/eval/backlog-md (the Backlog.md project's own backlog), copied to a temp folder first.
 *
 * Size of an answer = the characters of its JSON as the client receives it (`result` of the JSON-RPC
 * reply: every content block, structuredContent, isError, nextCursor), and its tokens by gpt-tokenizer
 * (o200k_base, GPT-4o's encoding; other models' tokenizers differ by some percent). The budgets of
 * issue #13 are checked and printed; the process exits 1 if one is missed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { countTokens } from 'gpt-tokenizer';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  BACKLOG_MD_CLI,
  BACKLOG_MD_FULL,
  BACKLOG_MD_VERSION,
  CLI_ENTRY,
  ROOT,
  installBacklogMdCli,
} from '../test/helpers.js';
import { argValue } from './common.js';

const args = process.argv.slice(2);
const source = resolve(
  args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? BACKLOG_MD_FULL,
);
const embeddings = argValue('--embeddings') ?? 'none';
const JSON_OUT = args.includes('--json');

/** Budgets of issue #13 (characters of the whole result). */
const SEARCH_BUDGET = 8_000;
const GET_OVER_BODY = 1_500;
const TOOLS_LIST_BUDGET = 14_000;

const QUERIES = [
  'mcp server tools',
  'web ui kanban board drag and drop',
  'task dependencies',
  'windows path',
  'acceptance criteria checklist',
  'search',
];
const TASK_IDS = ['BACK-287', 'BACK-302', 'BACK-507.1', 'BACK-594', 'BACK-72', 'BACK-222.1'];

interface Row {
  request: string;
  ours: number;
  oursTokens: number;
  theirs?: number;
  theirsTokens?: number;
  budget?: number;
  note?: string;
}

function size(value: unknown): [number, number] {
  const json = JSON.stringify(value);
  return [json.length, countTokens(json)];
}

async function connect(command: string, argv: string[], cwd: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command,
    args: argv,
    cwd,
    stderr: 'ignore',
    env: { ...(process.env as Record<string, string>), NO_COLOR: '1' },
  });
  const client = new Client({ name: 'bench-mcp-sizes', version: '1' });
  await client.connect(transport);
  return client;
}

const work = await mkdtemp(join(tmpdir(), 'mcp-sizes-'));
// Backlog.md finds its backlog as ./backlog of the folder it starts in.
const dir = join(work, 'backlog');
await cp(source, dir, { recursive: true });
const ours = await connect(
  process.execPath,
  ['--import', 'tsx', CLI_ENTRY, '--dir', dir, '--embeddings', embeddings, 'mcp', '--no-watch'],
  ROOT,
);
const hasTheirs = await installBacklogMdCli();
const theirs = hasTheirs ? await connect(BACKLOG_MD_CLI, ['mcp', 'start'], work) : undefined;

// With embeddings, wait until the semantic index is built, so the searches below are hybrid (not bm25 with a warning).
if (embeddings !== 'none') {
  const started = Date.now();
  for (;;) {
    const r = (await ours.callTool({ name: 'backlog_search', arguments: { query: 'probe', limit: 1 } })) as {
      content: Array<{ text: string }>;
    };
    if (!r.content[0].text.includes('still being built')) break;
    if (Date.now() - started > 30 * 60_000) throw new Error('the semantic index was not built in 30 minutes');
    await new Promise((done) => setTimeout(done, 5000));
  }
  process.stderr.write(`semantic index built in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

const rows: Row[] = [];
async function compare(
  request: string,
  ourCall: () => Promise<unknown>,
  theirCall: (() => Promise<unknown>) | undefined,
  budget?: number,
  note?: string,
): Promise<void> {
  const [o, ot] = size(await ourCall());
  const row: Row = { request, ours: o, oursTokens: ot, budget, note };
  if (theirs && theirCall) [row.theirs, row.theirsTokens] = size(await theirCall());
  rows.push(row);
}

try {
  await compare(
    'tools/list',
    () => ours.listTools(),
    () => theirs!.listTools(),
    TOOLS_LIST_BUDGET,
  );
  await compare(
    'resources/list (first page)',
    () => ours.listResources(),
    () => theirs!.listResources(),
    undefined,
    'theirs: 4 workflow guides, no backlog file',
  );
  for (const query of QUERIES) {
    const mine = (await ours.callTool({ name: 'backlog_search', arguments: { query } })) as {
      content: Array<{ text: string }>;
    };
    const [, ...lines] = mine.content[0].text.split('\n');
    const hits = lines.filter((l) => !l.startsWith('warning: ')).length;
    for (const l of lines) if (l.startsWith('warning: ')) process.stderr.write(`ours, "${query}": ${l}\n`);
    const their = (await theirs?.callTool({ name: 'task_search', arguments: { query, limit: 20 } })) as
      { content: Array<{ text: string }> } | undefined;
    // Backlog.md lists one task per line, indented under "Tasks:".
    const theirHits = their?.content[0].text.split('\n').filter((l) => /^ {2}\S/.test(l)).length;
    await compare(
      `search "${query}" (ours ${hits} hits, theirs ${theirHits ?? '-'})`,
      async () => mine,
      their && (async () => their),
      SEARCH_BUDGET,
    );
  }
  for (const id of TASK_IDS) {
    const detailed = (await ours.callTool({
      name: 'backlog_get',
      arguments: { ids: id, response_format: 'detailed' },
    })) as { structuredContent?: { items: Array<{ item: { content_length: number } }> }; isError?: boolean };
    if (detailed.isError) throw new Error(`backlog_get ${id}: ${JSON.stringify(detailed).slice(0, 300)}`);
    const bodyLength = detailed.structuredContent!.items[0].item.content_length;
    await compare(
      `get ${id} (body ${bodyLength})`,
      () => ours.callTool({ name: 'backlog_get', arguments: { ids: id } }),
      () => theirs!.callTool({ name: 'task_view', arguments: { id } }),
      bodyLength + GET_OVER_BODY,
    );
  }
  await compare(
    'search "mcp server tools" detailed',
    () =>
      ours.callTool({
        name: 'backlog_search',
        arguments: { query: 'mcp server tools', response_format: 'detailed' },
      }),
    undefined,
  );
} finally {
  await ours.close();
  await theirs?.close();
  await rm(work, { recursive: true, force: true });
}

const missed = rows.filter((r) => r.budget !== undefined && r.ours > r.budget);
if (JSON_OUT) {
  process.stdout.write(
    `${JSON.stringify({ embeddings, theirs: hasTheirs && BACKLOG_MD_VERSION, rows }, null, 2)}\n`,
  );
} else {
  const pad = (s: string | number | undefined, n: number) => String(s ?? '-').padStart(n);
  process.stdout.write(
    `MCP answer sizes on ${source} (ours: --embeddings ${embeddings}; theirs: backlog.md ${hasTheirs ? BACKLOG_MD_VERSION : 'not installed'})\n` +
      `characters of the result's JSON, tokens by gpt-tokenizer (o200k_base)\n\n` +
      `| request | ours chars | ours tokens | Backlog.md chars | Backlog.md tokens | ours / theirs | budget |\n` +
      `|---|--:|--:|--:|--:|--:|--:|\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `| ${r.request}${r.note ? ` (${r.note})` : ''} | ${pad(r.ours, 6)} | ${pad(r.oursTokens, 5)} | ${pad(r.theirs, 6)} | ${pad(r.theirsTokens, 5)} | ${r.theirs ? (r.ours / r.theirs).toFixed(2) : '-'} | ${r.budget ? `${r.ours <= r.budget ? '<=' : 'OVER'} ${r.budget}` : '-'} |\n`,
    );
  if (missed.length) process.stdout.write(`\nover budget: ${missed.map((r) => r.request).join('; ')}\n`);
}
process.exitCode = missed.length ? 1 : 0;
