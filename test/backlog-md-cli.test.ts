/**
 * The round trip with the real Backlog.md CLI (npm `backlog.md`, its platform binary): a project made by
 * `backlog init`, tasks written by `backlog task create/edit` found by our watcher-backed search, and
 * tasks written by our tools read back by `backlog task view`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { BACKLOG_MD_CLI as BACKLOG_CLI, installBacklogMdCli } from './helpers.js';

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
