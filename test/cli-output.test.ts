import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { DEMO_DIR, ROOT, cliArgs, runCli, tempBacklog } from './helpers.js';
import { runOnTerminal } from './terminal.js';

// Colour is decided by the CLI alone in these tests: whatever the runner's environment says.
const NO_FORCE = { FORCE_COLOR: undefined, NO_COLOR: undefined, CI: 'true', BACKLOG_EMBEDDINGS: 'none' };
const ESC = '\x1b[';

/** Runs the CLI with stdout piped to a reader that closes its end at once (`| head -0`). */
function runWithClosedPipe(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const [cmd, argv] = cliArgs(args);
  const child = spawn(cmd, argv, {
    cwd: ROOT,
    env: { ...process.env, ...NO_FORCE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
});
afterAll(() => cleanup());

describe('CLI output', () => {
  it('stops quietly with status 0 when the reader closes the pipe (list | head, diagnostics --json | head)', async () => {
    for (const args of [
      ['--dir', DEMO_DIR, 'list', '-n', '200'],
      ['--dir', DEMO_DIR, 'diagnostics', '--json'],
    ]) {
      const res = await runWithClosedPipe(args);
      expect(res.stderr).not.toMatch(/EPIPE|Error|at /);
      expect(res.code).toBe(0);
    }
  });

  it('exits 2 on usage errors and input errors, 0 on --help and --version, as the README says', async () => {
    const usage = await runCli(['--dir', DEMO_DIR, 'list', '--bogus']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("unknown option '--bogus'");
    expect((await runCli(['--dir', DEMO_DIR, 'list', '--sort', 'size'])).code).toBe(2);
    expect((await runCli(['--dir', DEMO_DIR, 'search'])).code).toBe(2); // missing argument
    expect((await runCli(['--memory-budget', '-3', 'list'])).code).toBe(2); // the option's own parser
    expect((await runCli([])).code).toBe(2); // no command
    const json = await runCli(['--dir', DEMO_DIR, 'list', '--bogus', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'error', error: { code: 'INVALID_INPUT' } });
    expect((await runCli(['--help'])).code).toBe(0);
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }, 120_000);

  it('list pages with --offset and orders with --sort', async () => {
    const ids = async (...args: string[]) =>
      (
        JSON.parse((await runCli(['--dir', DEMO_DIR, 'list', '--json', ...args], NO_FORCE)).stdout) as {
          results: { id: string }[];
        }
      ).results.map((r) => r.id);
    const all = await ids('--sort', 'id', '-n', '1000');
    expect(all.length).toBe(54);
    expect(await ids('--sort', 'id', '--offset', '10', '-n', '5')).toEqual(all.slice(10, 15));
    // Numbers in ids by value: TASK-0002 before TASK-0010, and the list is sorted.
    const tasks = all.filter((id) => id.startsWith('TASK-'));
    expect(tasks).toEqual([...tasks].sort());
    const byTitle = JSON.parse(
      (await runCli(['--dir', DEMO_DIR, 'list', '--json', '--sort', 'title', '-n', '1000'], NO_FORCE)).stdout,
    ).results.map((r: { title: string }) => r.title.toLowerCase());
    expect(byTitle).toEqual([...byTitle].sort((a: string, b: string) => a.localeCompare(b)));
    // Priority: critical, high, medium, low, then none (the service's order, checked on every task).
    const service = await openBacklog({ dir: DEMO_DIR, embeddings: 'none', watch: false });
    try {
      const order = ['critical', 'high', 'medium', 'low', null];
      const ranks = service
        .list({ types: 'task', sort: 'priority', limit: 1000 })
        .results.map((r) => order.indexOf(service.get(r.id).priority));
      expect(ranks).toEqual([...ranks].sort((x, y) => x - y));
      expect(new Set(ranks).size).toBeGreaterThan(2);
    } finally {
      await closeBacklog(service);
    }
  }, 120_000);

  it('says plainly when nothing matched, and which filters applied', async () => {
    const list = await runCli(
      ['--dir', DEMO_DIR, 'list', '--type', 'epic', '--status', 'cancelled'],
      NO_FORCE,
    );
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^Nothing matched --type epic --status cancelled\. Statuses in this backlog: open, /,
    );
    expect(list.stdout).not.toMatch(/0 items/);
    const search = await runCli(['--dir', DEMO_DIR, 'search', 'zzqxv', '--tag', 'auth'], NO_FORCE);
    expect(search.stdout).toMatch(/^Nothing matched "zzqxv" \(bm25, [\d.]+ ms, filters --tag auth\)\.$/m);
    const typo = await runCli(['--dir', DEMO_DIR, 'search', 'dtaabsae'], NO_FORCE);
    expect(typo.stdout).toMatch(
      /^Nothing matched "dtaabsae" \(bm25, [\d.]+ ms\)\. Did you mean "database"\?$/m,
    );
    const empty = join(dir, '..', 'empty');
    await mkdir(join(empty, 'tasks'), { recursive: true });
    expect((await runCli(['--dir', empty, 'list'], NO_FORCE)).stdout.trim()).toBe(
      'The backlog has no items.',
    );
    const past = await runCli(['--dir', DEMO_DIR, 'list', '--offset', '500'], NO_FORCE);
    expect(past.stdout).toMatch(/^54 items, none past --offset 500 /);
  }, 120_000);

  it('colours and marks the matched words on a terminal; plain text when piped, with NO_COLOR or --no-color', async () => {
    const args = ['--dir', DEMO_DIR, 'search', 'locked', 'out', '-n', '3'];
    const tty = await runOnTerminal(args);
    expect(tty).toContain(ESC);
    // The matched word in bold yellow, in the title or the snippet.
    expect(
      tty.includes(`${ESC}1m${ESC}33mlocked${ESC}39m${ESC}22m`) ||
        tty.includes(`${ESC}1m${ESC}33mLocked${ESC}39m${ESC}22m`),
    ).toBe(true);
    const piped = await runCli(args, NO_FORCE);
    expect(piped.stdout).toMatch(/locked/i);
    expect(piped.stdout).not.toContain(ESC);
    expect(await runOnTerminal(args, { NO_COLOR: '1' })).not.toContain(ESC);
    expect(await runOnTerminal(['--no-color', ...args])).not.toContain(ESC);
    // --json is the same on a terminal as in a pipe: no colour, the same data.
    const json = await runOnTerminal([...args, '--json']);
    expect(json).not.toContain(ESC);
    expect(JSON.parse(json).results.map((r: { id: string }) => r.id)).toEqual(
      JSON.parse((await runCli([...args, '--json'], NO_FORCE)).stdout).results.map(
        (r: { id: string }) => r.id,
      ),
    );
  }, 120_000);

  it('never passes a control character from a file to the terminal', async () => {
    await writeFile(
      join(dir, 'tasks', 'TASK-0950-escape.md'),
      '---\nid: TASK-0950\ntitle: "Escape \\e[2J\\e]0;pwned\\a title"\ntype: task\nstatus: open\n---\nBody with \x1b[31mred\x1b[0m escape.\n',
    );
    const tty = await runOnTerminal(['--dir', dir, 'search', 'escape', 'title']);
    expect(tty).toContain('TASK-0950');
    for (const sequence of [`${ESC}2J`, '\x1b]0;', '\x07', `${ESC}31m`]) expect(tty).not.toContain(sequence);
    const get = await runCli(['--dir', dir, 'get', 'TASK-0950'], NO_FORCE);
    expect(get.stdout).toContain('Body with  [31mred [0m escape.');
  }, 120_000);
});
