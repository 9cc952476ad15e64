/**
 * A one-shot `search` asks a running `serve` of the same backlog (src/http/discovery.ts, issue #23 item
 * 4): the real CLI and a real server, each a child process, with a config folder of their own.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findServer, registerServer, serversDir } from '../src/http/discovery.js';
import { VERSION } from '../src/version.js';
import { cliArgs, runCli, tempBacklog } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let config: string;
let server: ChildProcess;
/** The CLI's environment: its own config folder, asking servers allowed (vitest's env turns it off). */
let env: NodeJS.ProcessEnv;

function startServe(args: string[]): Promise<ChildProcess> {
  const [cmd, argv] = cliArgs(['--dir', dir, 'serve', '--port', '0', ...args]);
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((ready, fail) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('backlog-search: serving')) ready(child);
    });
    child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${err}`)));
  });
}

const json = async (args: string[], command = 'search') => {
  const out = await runCli(['--dir', dir, command, ...args, '--json'], env);
  expect(out.code, out.stderr).toBe(0);
  const answer = JSON.parse(out.stdout) as { took_ms?: number; results: { id: string }[] };
  delete answer.took_ms;
  return answer;
};

beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
  config = await mkdtemp(join(tmpdir(), 'bs-config-'));
  env = { XDG_CONFIG_HOME: config, BACKLOG_NO_SERVER: '', BACKLOG_EMBEDDINGS: 'none' };
  // Not watching: a file added now is seen by a search made here, not by the server.
  server = await startServe(['--no-watch']);
}, 120_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await cleanup();
  await rm(config, { recursive: true, force: true });
});

describe('a one-shot search and a running serve of the same backlog', () => {
  it("answers with the server's answer, equal to its own", async () => {
    expect(await readdir(join(config, 'backlog-search', 'servers'))).toHaveLength(1);
    for (const q of [
      ['sync', 'conflict'],
      ['rate', 'limit', '--limit', '3', '--offset', '1'],
      ['login', '--status', 'open'],
    ])
      expect(await json(q)).toEqual(await json([...q, '--no-server']));
    const list = ['--status', 'open', '-n', '5', '--sort', 'title'];
    expect(await json(list, 'list')).toEqual(await json([...list, '--no-server'], 'list'));
  }, 120_000);

  it('is answered by the server: a file the server has not read is found only with --no-server', async () => {
    await mkdir(join(dir, 'tasks'), { recursive: true });
    await writeFile(
      join(dir, 'tasks', 'TASK-0990-okapi.md'),
      '---\nid: TASK-0990\ntitle: Okapi importer\ntype: task\nstatus: open\n---\nokapi\n',
    );
    expect((await json(['okapi'])).results).toEqual([]);
    expect((await json(['okapi', '--no-server'])).results.map((r) => r.id)).toEqual(['TASK-0990']);
    const ids = async (args: string[]) => (await json(args, 'list')).results.map((r) => r.id);
    expect(await ids(['-n', '1000'])).not.toContain('TASK-0990');
    expect(await ids(['-n', '1000', '--no-server'])).toContain('TASK-0990');
  }, 120_000);

  it('answers itself when the server is gone, and forgets the stale entry', async () => {
    server.kill('SIGKILL');
    await new Promise((r) => server.once('exit', r));
    const servers = join(config, 'backlog-search', 'servers');
    expect(await readdir(servers)).toHaveLength(1);
    expect((await json(['okapi'])).results.map((r) => r.id)).toEqual(['TASK-0990']);
    expect(await readdir(servers)).toEqual([]);
  }, 120_000);

  it('a server that stops with SIGTERM takes its entry away', async () => {
    const again = await startServe([]);
    const servers = join(config, 'backlog-search', 'servers');
    expect(await readdir(servers)).toHaveLength(1);
    again.kill('SIGTERM');
    await new Promise((r) => again.once('exit', r));
    expect(await readdir(servers)).toEqual([]);
  }, 120_000);
});

describe('a serve stopped while it reads the backlog', () => {
  it('exits at once with status 0, saying so (not killed by the signal)', async () => {
    const big = await mkdtemp(join(tmpdir(), 'bs-big-'));
    try {
      await mkdir(join(big, 'tasks'));
      for (let i = 0; i < 3000; i++)
        await writeFile(
          join(big, 'tasks', `TASK-${i}-generated.md`),
          `---\nid: TASK-${i}\ntitle: Generated task ${i}\nstatus: open\n---\nBody ${i} of a generated task about hangars and zeppelins.\n`,
        );
      const [cmd, argv] = cliArgs(['--dir', big, 'serve', '--port', '0', '--no-watch']);
      const child = spawn(cmd, argv, {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<[number | null, string | null]>((resolve) =>
        child.once('exit', (code, signal) => resolve([code, signal])),
      );
      // Past a second of reading, the server says it is reading: the signal comes then.
      await vi.waitFor(() => expect(err).toContain('reading the backlog'), { timeout: 60_000, interval: 20 });
      child.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      expect(err).toContain('stopped while reading the backlog');
      expect(err).not.toContain('serving');
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('server entries', () => {
  it('are found only for the same folder, version and embedding provider, and only on loopback', async () => {
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = config;
    try {
      const unregister = registerServer([{ dir }], {
        port: 4321,
        host: '0.0.0.0',
        version: VERSION,
        embeddings: 'none',
      });
      expect(findServer(dir, VERSION, 'none')).toMatchObject({
        url: 'http://127.0.0.1:4321',
        pid: process.pid,
      });
      expect(findServer(dir, VERSION, 'auto')).toBeUndefined();
      expect(findServer(dir, '0.0.0-other', 'none')).toBeUndefined();
      expect(findServer(tmpdir(), VERSION, 'none')).toBeUndefined();
      // An entry pointing anywhere but this machine is not one of ours.
      const [file] = await readdir(serversDir());
      await writeFile(
        join(serversDir(), file),
        JSON.stringify({
          pid: process.pid,
          url: 'http://evil.example:80',
          version: VERSION,
          embeddings: 'none',
          dir,
        }),
      );
      expect(findServer(dir, VERSION, 'none')).toBeUndefined();
      unregister();
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });
});
