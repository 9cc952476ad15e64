/**
 * The round trip with the real Backlog.md CLI (npm `backlog.md`, its platform binary): a project made by
 * `backlog init`, tasks written by `backlog task create/edit` found by our watcher-backed search, and
 * tasks written by our tools read back by `backlog task view`.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { idKey } from '../src/storage/ids.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../src/mcp/server.js';
import {
  BACKLOG_MD_CLI as BACKLOG_CLI,
  BACKLOG_MD_FULL,
  HAS_BACKLOG_MD_FULL,
  BACKLOG_MD_FIXTURE as FIXTURE,
  installBacklogMdCli,
} from './helpers.js';

const HAS_CLI = await installBacklogMdCli();

/** Runs the Backlog.md CLI in `cwd`; resolves to its stdout, throws with its stderr on failure. */
async function backlog(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(BACKLOG_CLI, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', BACKLOG_CWD: cwd },
  });
  return stdout;
}

/** Polls `check` until it holds or `ms` pass; resolves to the time it took. */
async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - started;
}

describe.skipIf(!HAS_CLI)('a project made and edited by the real Backlog.md CLI', () => {
  let project: string;
  let service: BacklogService;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'backlog-md-cli-'));
    await backlog(
      project,
      'init',
      'roundtrip',
      '--defaults',
      '--integration-mode',
      'none',
      '--no-git',
      '--task-prefix',
      'rt',
    );
    service = await openBacklog({
      dir: join(project, 'backlog'),
      embeddings: 'none',
      watch: { debounceMs: 20 },
    });
  }, 60_000);
  afterAll(async () => {
    await closeBacklog(service);
    await rm(project, { recursive: true, force: true });
  });

  it('is read as a Backlog.md project with its prefix', () => {
    expect(service.format.name).toBe('backlog-md');
    expect(service.format.config.taskPrefix).toBe('RT');
  });

  it('finds a task made by `backlog task create` within 1 s, with its fields', async () => {
    await backlog(
      project,
      'task',
      'create',
      'Throttle the login endpoint',
      '-d',
      'Five failures lock the account for a minute.',
      '-l',
      'auth,security',
      '--priority',
      'high',
      '-a',
      '@alice',
    );
    const took = await within(1000, async () => (await service.searchUnified('throttle login')).total > 0);
    expect(took).toBeLessThan(1000);
    const hit = (await service.searchUnified('throttle login')).results[0];
    expect(hit.id).toBe('RT-1');
    const item = service.get('rt-1');
    expect(item).toMatchObject({
      title: 'Throttle the login endpoint',
      status: 'To Do',
      tags: ['auth', 'security'],
      priority: 'high',
      assignee: '@alice',
      state: 'active',
    });
    const snippet = (await service.searchUnified('account minute')).results[0].snippet.text;
    expect(snippet).toContain('Five failures lock the account');
    expect(snippet).not.toContain('SECTION');
  });

  it('follows `backlog task edit` within 1 s', async () => {
    await backlog(
      project,
      'task',
      'edit',
      'RT-1',
      '-s',
      'In Progress',
      '--notes',
      'Started with a token bucket.',
    );
    const took = await within(1000, () => service.get('RT-1').status === 'In Progress');
    expect(took).toBeLessThan(1000);
    expect(service.list({ status: 'in progress' }).results.map((r) => r.id)).toEqual(['RT-1']);
    expect((await service.searchUnified('token bucket')).results[0]?.id).toBe('RT-1');
  });

  it('follows a sub-task and a draft', async () => {
    await backlog(project, 'task', 'create', 'Add a lockout banner', '-p', 'RT-1');
    await backlog(project, 'task', 'create', 'Maybe passkeys', '--draft');
    await within(
      2000,
      () => service.resolve('RT-1.1') !== undefined && service.resolve('DRAFT-1') !== undefined,
    );
    expect(service.get('RT-1.1').parent_id).toBe('RT-1');
    expect(service.children('RT-1')).toEqual(['RT-1.1']);
    expect(service.get('DRAFT-1').state).toBe('draft');
  });
});

/** Backlog.md's JSON view of a task (`backlog task view <id> --json`). */
async function viewJson(project: string, id: string): Promise<Record<string, unknown>> {
  return (
    JSON.parse(await backlog(project, 'task', 'view', id, '--json')) as { task: Record<string, unknown> }
  ).task;
}

/** A file's text with its creation minute blanked (two writers a minute apart still write the same file). */
const sameMinute = (text: string) => text.replace(/^created_date: .*$/m, 'created_date: <minute>');

describe.skipIf(!HAS_CLI)('tasks written through our MCP tools, read by the real Backlog.md CLI', () => {
  let ours: string;
  let theirs: string;
  let service: BacklogService;
  let client: Client;

  beforeAll(async () => {
    // Twin projects: the Backlog.md project's own excerpts (config.yml with a Definition of Done, ids up to BACK-569).
    ours = await mkdtemp(join(tmpdir(), 'backlog-md-ours-'));
    theirs = await mkdtemp(join(tmpdir(), 'backlog-md-theirs-'));
    for (const p of [ours, theirs]) await cp(FIXTURE, join(p, 'backlog'), { recursive: true });
    service = await openBacklog({ dir: join(ours, 'backlog'), embeddings: 'none', cacheDir: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(service).connect(a);
    client = new Client({ name: 'backlog-md-roundtrip', version: '1' });
    await client.connect(b);
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await closeBacklog(service);
    for (const p of [ours, theirs]) await rm(p, { recursive: true, force: true });
  });

  const create = async (args: Record<string, unknown>) => {
    const res = (await client.callTool({ name: 'backlog_create', arguments: args })) as CallToolResult;
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    return res.structuredContent as { id: string; path: string };
  };

  it('backlog_create writes the file backlog task create writes, byte for byte', async () => {
    const made = await create({
      title: 'Throttle the login endpoint',
      body: 'Five failures lock the account for a minute.',
      tags: ['auth', 'security'],
      priority: 'high',
      assignee: '@alice',
      references: ['BACK-72', 'https://example.com/rfc'],
    });
    await backlog(
      theirs,
      'task',
      'create',
      'Throttle the login endpoint',
      '-d',
      'Five failures lock the account for a minute.',
      '-l',
      'auth,security',
      '--priority',
      'high',
      '-a',
      '@alice',
      '--dep',
      'BACK-72',
      '--ref',
      'https://example.com/rfc',
    );
    expect(made).toMatchObject({ id: 'BACK-570', path: 'tasks/back-570 - Throttle-the-login-endpoint.md' });
    const a = await readFile(join(ours, 'backlog', made.path), 'utf8');
    const b = await readFile(join(theirs, 'backlog', made.path), 'utf8');
    expect(sameMinute(a)).toBe(sameMinute(b));

    // And Backlog.md shows it with the same fields.
    const view = await viewJson(ours, 'BACK-570');
    expect(view).toMatchObject({
      title: 'Throttle the login endpoint',
      status: 'To Do',
      labels: ['auth', 'security'],
      priority: 'high',
      assignees: ['@alice'],
      dependencies: ['BACK-72'],
      references: ['https://example.com/rfc'],
      description: 'Five failures lock the account for a minute.',
    });
  });

  it('a sub-task and a configured status, as Backlog.md writes them', async () => {
    const made = await create({
      title: 'Show a lockout banner',
      parent_id: 'back-222',
      status: 'in progress',
    });
    await backlog(theirs, 'task', 'create', 'Show a lockout banner', '-p', 'BACK-222', '-s', 'In Progress');
    expect(made.id).toBe('BACK-222.2');
    const a = await readFile(join(ours, 'backlog', made.path), 'utf8');
    const b = await readFile(join(theirs, 'backlog', made.path), 'utf8');
    expect(sameMinute(a)).toBe(sameMinute(b));
    expect(await viewJson(ours, 'BACK-222.2')).toMatchObject({
      status: 'In Progress',
      parentTaskId: 'BACK-222',
    });
  });

  it('a status outside config.yml is refused, listing the configured ones', async () => {
    const res = (await client.callTool({
      name: 'backlog_create',
      arguments: { title: 'x', status: 'open' },
    })) as CallToolResult;
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toMatchObject({
      error: { code: 'INVALID_FILTER', hint: expect.stringContaining('To Do, In Progress, Done') },
    });
  });

  it('backlog_update keeps every field Backlog.md wrote, and changes only the ones it names', async () => {
    await backlog(
      ours,
      'task',
      'create',
      'Rotate signing keys',
      '-d',
      'Quarterly.',
      '-l',
      'ops',
      '-a',
      '@bob',
      '--priority',
      'low',
      '--ac',
      'Old keys revoked',
      '--plan',
      'Script it',
      '--notes',
      'See runbook',
      '--dep',
      'BACK-72',
      '--ref',
      'https://example.com/keys',
    );
    await service.applyFile('tasks/back-571 - Rotate-signing-keys.md');
    const before = await viewJson(ours, 'BACK-571');
    const res = (await client.callTool({
      name: 'backlog_update',
      arguments: { id: 'BACK-571', status: 'In Progress', tags: ['ops', 'security'] },
    })) as CallToolResult;
    expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
    const after = await viewJson(ours, 'BACK-571');
    expect(after).toMatchObject({ status: 'In Progress', labels: ['ops', 'security'] });
    // Everything but what the update named (and what derives from it: the update date, the graph's statuses).
    const unchanged = (t: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(t).filter(([k]) => !['status', 'labels', 'updatedAt', 'dependencyGraph'].includes(k)),
      );
    expect(unchanged(after)).toEqual(unchanged(before));
  });

  it('backlog_delete archives the task as backlog task archive does; permanent deletes it', async () => {
    const text = await readFile(
      join(ours, 'backlog', 'tasks/back-570 - Throttle-the-login-endpoint.md'),
      'utf8',
    );
    const res = (await client.callTool({
      name: 'backlog_delete',
      arguments: { id: 'BACK-570' },
    })) as CallToolResult;
    expect(res.structuredContent).toMatchObject({
      action: 'archived',
      path: 'archive/tasks/back-570 - Throttle-the-login-endpoint.md',
    });
    expect(
      await readFile(
        join(ours, 'backlog', 'archive/tasks/back-570 - Throttle-the-login-endpoint.md'),
        'utf8',
      ),
    ).toBe(text);
    const listed = JSON.parse(await backlog(ours, 'task', 'list', '--json')) as { tasks: { id: string }[] };
    expect(listed.tasks.map((t) => t.id)).not.toContain('BACK-570');
    expect(service.get('archive/tasks/back-570 - Throttle-the-login-endpoint.md').state).toBe('archived');
    const gone = (await client.callTool({
      name: 'backlog_delete',
      arguments: { id: 'archive/tasks/back-570 - Throttle-the-login-endpoint.md', permanent: true },
    })) as CallToolResult;
    expect(gone.structuredContent).toMatchObject({ action: 'deleted' });
  });
});

/**
 * Which tasks are live, as Backlog.md's own CLI answers it, on the Backlog.md project's own backlog (#25):
 * its `task list` lists the active tasks (tasks/) and never archived, completed or draft ones, and its
 * search shows only those. Our list shows the same tasks by default, and every search result that is not
 * one of them carries its state, so an agent never reads archived work as open.
 */
// The real CLI reads all 697 files on each call (a few seconds, more on a busy machine).
describe.skipIf(!HAS_CLI || !HAS_BACKLOG_MD_FULL)(
  'live tasks, as the real Backlog.md CLI lists them (the full folder)',
  { timeout: 180_000 },
  () => {
    let project: string;
    let service: BacklogService;
    const ids = (text: string) =>
      new Set([...text.matchAll(/\bBACK-\d+(?:\.\d+)*/gi)].map((m) => idKey(m[0])));

    beforeAll(async () => {
      project = await mkdtemp(join(tmpdir(), 'backlog-md-live-'));
      await cp(BACKLOG_MD_FULL, join(project, 'backlog'), { recursive: true });
      service = await openBacklog({ dir: join(project, 'backlog'), embeddings: 'none', watch: false });
    }, 60_000);
    afterAll(async () => {
      await closeBacklog(service);
      await rm(project, { recursive: true, force: true });
    });

    /** Our task ids of every page of a list. */
    function ourTaskIds(options: Parameters<BacklogService['list']>[0]): Set<string> {
      const res = service.list({ ...options, types: 'task', limit: 1000 });
      expect(res.next_offset).toBeUndefined();
      return new Set(res.results.map((r) => idKey(r.id)));
    }

    it('list --status "In Progress": the same tasks (none here: all three are archived)', async () => {
      const theirs = ids(await backlog(project, 'task', 'list', '-s', 'In Progress', '--plain'));
      expect(ourTaskIds({ status: 'In Progress' })).toEqual(theirs);
      // The archived ones are one flag away, and marked.
      const all = service.list({ status: 'In Progress', state: 'all' });
      expect(all.total).toBeGreaterThan(theirs.size);
      for (const r of all.results) if (!theirs.has(idKey(r.id))) expect(r.state).not.toBe('active');
    });

    it('list: the same tasks', async () => {
      const theirs = ids(await backlog(project, 'task', 'list', '--plain'));
      expect(theirs.size).toBeGreaterThan(100);
      expect(ourTaskIds({})).toEqual(theirs);
    });

    it('search "board": every task Backlog.md finds is live here, and every other task result says its state', async () => {
      const live = ids(await backlog(project, 'task', 'list', '--plain'));
      const theirs = ids(await backlog(project, 'search', 'board', '--plain', '--type', 'task'));
      expect(theirs.size).toBeGreaterThan(10);
      const ours = await service.searchUnified('board', { types: 'task', limit: 100 });
      const byId = new Map(ours.results.map((r) => [idKey(r.id), r]));
      for (const id of theirs) if (byId.has(id)) expect(byId.get(id)!.state, id).toBe('active');
      for (const r of ours.results) expect(r.state === 'active', r.id).toBe(live.has(idKey(r.id)));
      // ... and archived work ranks after live work of similar relevance: none is in the first three.
      expect(ours.results.slice(0, 3).map((r) => r.state)).not.toContain('archived');
    });
  },
);
