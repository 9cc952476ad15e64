/**
 * Hostile front matter (docs/security.md): no engine but YAML (and JSON) ever runs, and a YAML bomb
 * is an error, not an outage. Each case goes through a real surface: the library, the CLI, MCP
 * `backlog_write_resource`, the watcher, and `backlog_update`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../src/mcp/server.js';
import { backlogWatcher, closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { ROOT, runCli, tempBacklog } from './helpers.js';

/** A front matter block that, if evaluated, writes `marker` (the attack from the issue). */
function planted(language: string, marker: string, word: string): string {
  return [
    `---${language}`,
    `{ title: (require("fs").writeFileSync(${JSON.stringify(marker)}, String(process.pid)), "t") }`,
    '---',
    `A document about ${word}.`,
    '',
  ].join('\n');
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
});
afterAll(() => cleanup());

describe('front matter runs no code', () => {
  it('the library reports the file and indexes it as plain text', async () => {
    const marker = join(dir, '..', 'PWNED-library');
    await writeFile(join(dir, 'resources', 'planted-js.md'), planted('js', marker, 'quokkaword'));
    await writeFile(
      join(dir, 'resources', 'planted-javascript.md'),
      planted('javascript', marker, 'quokkaword'),
    );
    const service = await openBacklog({ dir, cacheDir: false });
    try {
      expect(await exists(marker)).toBe(false);
      const codes = service
        .diagnostics()
        .files.filter((d) => d.path.startsWith('resources/planted-'))
        .map((d) => d.code);
      expect(codes).toEqual(['frontmatter_language_refused', 'frontmatter_language_refused']);
      const res = await service.searchUnified('quokkaword');
      expect(res.results.map((r) => r.path).sort()).toEqual([
        'resources/planted-javascript.md',
        'resources/planted-js.md',
      ]);
    } finally {
      await closeBacklog(service);
    }
  });

  it('the CLI (search and diagnostics) runs nothing', async () => {
    const marker = join(dir, '..', 'PWNED-cli');
    await writeFile(join(dir, 'resources', 'planted-cli.md'), planted('js', marker, 'wombatword'));
    const search = await runCli(['--dir', dir, 'search', 'wombatword', '--json']);
    expect(JSON.parse(search.stdout).results[0].path).toBe('resources/planted-cli.md');
    const diagnostics = await runCli(['--dir', dir, 'diagnostics', '--json']);
    expect(diagnostics.stdout).toContain('frontmatter_language_refused');
    expect(await exists(marker)).toBe(false);
  });

  it('MCP backlog_write_resource, the watcher and backlog_update run nothing', async () => {
    const marker = join(dir, '..', 'PWNED-mcp');
    const service = await openBacklog({ dir, watch: true, cacheDir: false });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(service);
    const client = new Client({ name: 'security-test', version: '1.0.0' });
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      const written = await client.callTool({
        name: 'backlog_write_resource',
        arguments: {
          path: 'resources/notes/planted.md',
          content: planted('javascript', marker, 'okapiword'),
        },
      });
      expect(written.isError).toBeFalsy();
      // The watcher: a file planted by a pull while the server runs.
      await writeFile(join(dir, 'resources', 'pulled.md'), planted('js', marker, 'okapiword'));
      // A task file whose front matter is JavaScript: an update must not evaluate it either.
      await mkdir(join(dir, 'tasks'), { recursive: true });
      await writeFile(join(dir, 'tasks', 'TASK-0900-planted.md'), planted('js', marker, 'okapiword'));
      await waitFor(async () => (await service.searchUnified('okapiword')).total === 3);
      await backlogWatcher(service)!.idle();
      const update = await client.callTool({
        name: 'backlog_update',
        arguments: { id: 'TASK-0900', status: 'done' },
      });
      expect(update.isError).toBe(true);
      expect(await exists(marker)).toBe(false);
      expect(await readFile(join(dir, 'tasks', 'TASK-0900-planted.md'), 'utf8')).toContain('---js');
    } finally {
      await client.close();
      await closeBacklog(service);
    }
  });
});

describe('YAML limits', () => {
  const bomb = [
    '---',
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
    'title: Bomb',
    '---',
    'The body of the bomb.',
    '',
  ].join('\n');

  it('a backlog holding the bomb costs under 0.5 s of CPU and 50 MB of memory more, and says why', async () => {
    const { dir: bombDir, cleanup: done } = await tempBacklog();
    try {
      const control = await loadInChild(bombDir);
      await writeFile(join(bombDir, 'resources', 'bomb.md'), bomb);
      const loaded = await loadInChild(bombDir, 'resources/bomb.md');
      expect(loaded.codes).toContain('frontmatter_too_complex');
      // CPU time, not wall time: on a shared machine a wall clock measures the other jobs too (the
      // unguarded bomb cost 4.2 s and 784 MB).
      expect(loaded.openCpuMs - control.openCpuMs).toBeLessThan(500);
      expect(loaded.getMs).toBeLessThan(100);
      expect(loaded.title).toBe('Bomb');
      expect(loaded.maxRssMb - control.maxRssMb).toBeLessThan(50);
    } finally {
      await done();
    }
  });
});

/** Opens `backlogDir` in a fresh process and reports its timings, peak RSS and diagnostics. */
async function loadInChild(
  backlogDir: string,
  get?: string,
): Promise<{
  openMs: number;
  openCpuMs: number;
  getMs: number;
  maxRssMb: number;
  codes: string[];
  title: string | null;
}> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'open-and-report.ts'), backlogDir, get ?? ''],
    { cwd: ROOT, env: { ...process.env, BACKLOG_EMBEDDINGS: 'none' }, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout);
}

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for the index');
    await new Promise((r) => setTimeout(r, 25));
  }
}

afterAll(async () => {
  for (const name of ['PWNED-library', 'PWNED-cli', 'PWNED-mcp'])
    await rm(join(dir, '..', name), { force: true });
});
