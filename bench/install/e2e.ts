/**
 * The README's install from a clone, end to end (issue #13): a fresh `git clone` of this checkout into
 * a temp folder, `npm ci` there (which builds dist/), `npm install -g --prefix <tmp> .`, then the stdio
 * client config from the README (`backlog-search mcp --dir <backlog>`) started by the MCP SDK's client:
 * tools/list and a backlog_search on the demo backlog. Minutes (npm ci), so it runs from .ci/run, not
 * in `npm test`. Usage: npm run test:install
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const base = await mkdtemp(join(tmpdir(), 'backlog-search-install-'));
const clone = join(base, 'clone');
const prefix = join(base, 'prefix');
// Install scripts see this as npm 10 would pass it; see the README's Troubleshooting on CUDA.
const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' };
const run = (cmd: string, args: string[], cwd: string) => {
  const started = performance.now();
  execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
  console.log(`${cmd} ${args.join(' ')}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
};

try {
  run('git', ['clone', '--quiet', root, clone], base);
  run('npm', ['ci', '--no-audit', '--no-fund'], clone);
  run('npm', ['install', '-g', '--prefix', prefix, '.', '--no-audit', '--no-fund'], clone);
  const bin = join(prefix, 'bin', 'backlog-search');
  if (!existsSync(bin)) throw new Error(`no ${bin} after npm install -g`);
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  console.log(`backlog-search --version: ${version}`);

  // The README's stdio config, with the command found on the PATH.
  const transport = new StdioClientTransport({
    command: 'backlog-search',
    args: ['mcp', '--dir', join(clone, 'demo', 'backlog')],
    env: {
      ...(env as Record<string, string>),
      PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
      BACKLOG_EMBEDDINGS: 'none',
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'install-e2e', version: '1.0.0' });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  if (!tools.includes('backlog_search'))
    throw new Error(`tools/list has no backlog_search: ${tools.join(', ')}`);
  const res = await client.callTool({ name: 'backlog_search', arguments: { query: 'passkeys', limit: 3 } });
  const text = JSON.stringify(res);
  if (res.isError || !/TASK-\d{4}/.test(text))
    throw new Error(`backlog_search failed: ${text.slice(0, 500)}`);
  await client.close();
  console.log(`install e2e ok: ${tools.length} tools; backlog_search answered (${text.length} characters)`);
} finally {
  await rm(base, { recursive: true, force: true });
}
