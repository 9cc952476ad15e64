/**
 * The README's install from a clone, end to end (issues #13, #23): a fresh `git clone` of this checkout
 * into a temp folder, `npm ci` there, `npm pack` (its prepack builds dist/), then a user's install: `npm
 * install -g --prefix <empty folder> <tarball>`, timed, and its size on disk. Then the stdio client config
 * from the README (`backlog-search mcp --dir <backlog>`) started by the MCP SDK's client: tools/list and a
 * backlog_search on the demo backlog. Fails when the user's install is over 120 MB or 30 s (issue #23), or
 * when npm warns about something of this project's making (its .npmrc, its scripts, install-script
 * policy). Minutes (npm ci), so it runs from .ci/run, not in `npm test`. Usage: npm run test:install
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const base = await mkdtemp(join(tmpdir(), 'backlog-search-install-'));
const clone = join(base, 'clone');
const prefix = join(base, 'prefix');
// A user's environment: nothing set for the install (a developer's npm 10 `npm ci` needs
// ONNXRUNTIME_NODE_INSTALL=skip, see the README; npm 11 skips dependency install scripts).
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.ONNXRUNTIME_NODE_INSTALL;
/** npm's warnings about this project: its config, its scripts, the install-script policy. */
const OURS = /Unknown (project|user|builtin) config|install-scripts|backlog-search|prepare|prepack/i;
const ours: string[] = [];
/** Runs a command, echoes its stderr, keeps npm's warnings of this project's making; seconds taken. */
const run = (cmd: string, args: string[], cwd: string): number => {
  const started = performance.now();
  const res = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const seconds = (performance.now() - started) / 1000;
  if (res.stderr) process.stderr.write(res.stderr);
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status}`);
  for (const line of `${res.stderr}\n${res.stdout}`.split('\n'))
    if (/^npm (warn|WARN)/.test(line) && OURS.test(line)) ours.push(`${cmd} ${args[0]}: ${line}`);
  console.log(`${cmd} ${args.join(' ')}: ${seconds.toFixed(1)} s`);
  return seconds;
};
/** Bytes on disk under `dir` (du's blocks, as a user sees them). */
const diskMb = (dir: string) =>
  Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;

try {
  run('git', ['clone', '--quiet', root, clone], base);
  run('npm', ['ci', '--no-audit', '--no-fund'], clone);
  console.log(`the clone after npm ci: ${diskMb(clone).toFixed(0)} MB`);
  run('npm', ['pack', '--silent'], clone);
  const tarball = readdirSync(clone).find((f) => /^backlog-search-.*\.tgz$/.test(f));
  if (!tarball) throw new Error('npm pack made no tarball');
  console.log(`${tarball}: ${diskMb(join(clone, tarball)).toFixed(1)} MB`);
  // A user's install: the tarball into an empty prefix.
  const seconds = run(
    'npm',
    ['install', '-g', '--prefix', prefix, join(clone, tarball), '--no-audit', '--no-fund'],
    base,
  );
  const mb = diskMb(prefix);
  console.log(
    `user's install: ${mb.toFixed(0)} MB on disk in ${seconds.toFixed(1)} s (bounds: 120 MB, 30 s)`,
  );
  if (existsSync(join(prefix, 'lib', 'node_modules', 'onnxruntime-node')))
    throw new Error("onnxruntime-node came with a user's install");
  const failures = [
    ...(mb > 120 ? [`the user's install takes ${mb.toFixed(0)} MB, over 120`] : []),
    ...(seconds > 30 ? [`the user's install took ${seconds.toFixed(1)} s, over 30`] : []),
    ...(ours.length > 0 ? [`npm warned about this project:\n${ours.join('\n')}`] : []),
  ];
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
  console.log(`MCP ok: ${tools.length} tools; backlog_search answered (${text.length} characters)`);
  if (failures.length > 0) throw new Error(failures.join('\n'));
  console.log('install e2e ok');
} finally {
  await rm(base, { recursive: true, force: true });
}
