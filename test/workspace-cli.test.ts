/**
 * Several backlogs on the real CLI (docs/workspace.md): `--dir` repeated, `--dir NAME=PATH`, a workspace
 * file, `--project`; qualified ids in the answers, AMBIGUOUS_ID for a bare id two projects have, a missing
 * folder reported as a warning while the others are searched, one plain `--dir` as before.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKLOG_MD_FIXTURE, DEMO_DIR, runCli } from './helpers.js';

let root: string;
const env = { BACKLOG_EMBEDDINGS: 'none', BACKLOG_CACHE_DIR: '' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'backlog-search-ws-cli-'));
  await cp(DEMO_DIR, join(root, 'web', 'backlog'), { recursive: true });
  await cp(DEMO_DIR, join(root, 'api', 'backlog'), { recursive: true });
  await cp(BACKLOG_MD_FIXTURE, join(root, 'tool', 'backlog'), { recursive: true });
  // api is a copy of web (each of web's documents is shown once, with `also_in`) plus one task of its own.
  await writeFile(
    join(root, 'api', 'backlog', 'tasks', 'TASK-0900-sync-api.md'),
    '---\nid: TASK-0900\ntitle: Sync the API gateway routes\ntype: task\nstatus: todo\n---\n\nThe gateway must sync its routes on start.\n',
  );
  await writeFile(
    join(root, 'workspace.yml'),
    'backlogs:\n  - web\n  - dir: api/backlog\n    name: server\n  - tool/backlog\n',
  );
});
afterAll(() => rm(root, { recursive: true, force: true }));

const json = (out: string) =>
  JSON.parse(out) as Record<string, unknown> & {
    results: Array<{ id: string; project?: string; also_in?: string[] }>;
  };

describe('the CLI over several backlogs', () => {
  it('searches every --dir, names one with NAME=PATH, and filters by --project', async () => {
    const all = await runCli(
      [
        'search',
        'sync',
        '--json',
        '-n',
        '50',
        '--dir',
        join(root, 'web'),
        '--dir',
        `server=${join(root, 'api')}`,
      ],
      env,
    );
    expect(all.code, all.stderr).toBe(0);
    const res = json(all.stdout);
    expect(new Set(res.results.map((r) => r.project))).toEqual(new Set(['web', 'server']));
    // web's documents are in server too: each shown once, naming server's copy.
    const copies = res.results.filter((r) => r.project === 'web');
    expect(copies.length).toBeGreaterThan(0);
    const inServer = (id: string) =>
      id.replace(/^web:|^mcp:\/\/backlog\/web\//, (x) => x.replace('web', 'server'));
    for (const r of copies) expect(r.also_in).toEqual([inServer(r.id)]);
    expect(res.results.filter((r) => r.project === 'server').map((r) => r.id)).toEqual(['server:TASK-0900']);
    const human = await runCli(
      ['search', 'sync', '--dir', join(root, 'web'), '--dir', `server=${join(root, 'api')}`],
      env,
    );
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`    also in ${inServer(copies[0].id)}`);
    expect(
      res.results.every(
        (r) => r.id.startsWith(`${r.project}:`) || r.id.startsWith(`mcp://backlog/${r.project}/`),
      ),
    ).toBe(true);
    const one = await runCli(
      [
        'search',
        'sync',
        '--json',
        '--project',
        'server',
        '--dir',
        join(root, 'web'),
        '--dir',
        `server=${join(root, 'api')}`,
      ],
      env,
    );
    expect(new Set(json(one.stdout).results.map((r) => r.project))).toEqual(new Set(['server']));
  }, 60_000);

  it('reads a workspace file; a bare id in two projects is AMBIGUOUS_ID (exit 2), a qualified one is found', async () => {
    const file = join(root, 'workspace.yml');
    const list = await runCli(['list', '--json', '--workspace', file, '--state', 'all', '-n', '1000'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(new Set(json(list.stdout).results.map((r) => r.project))).toEqual(
      new Set(['web', 'server', 'backlog.md']),
    );
    const ambiguous = await runCli(['get', 'TASK-0001', '--workspace', file], env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stdout).toMatch(/web:TASK-0001, server:TASK-0001/);
    const got = await runCli(['get', 'server:TASK-0001', 'BACK-222', '--json', '--workspace', file], env);
    expect(got.code, got.stderr).toBe(0);
    const entries = JSON.parse(got.stdout) as Array<{ status: string; item: { id: string } }>;
    expect(entries.map((e) => e.item.id)).toEqual(['server:TASK-0001', 'backlog.md:BACK-222']);
  }, 60_000);

  it('warns about a missing folder and searches the others; one plain --dir is unchanged', async () => {
    const some = await runCli(
      ['search', 'sync', '--json', '--dir', join(root, 'web'), '--dir', join(root, 'nowhere')],
      env,
    );
    expect(some.code, some.stderr).toBe(0);
    expect(some.stderr).toMatch(/warning NOT_FOUND: nowhere/);
    const single = await runCli(['search', 'sync', '--json', '--dir', join(root, 'web', 'backlog')], env);
    expect(json(single.stdout).results[0].id).toMatch(/^TASK-\d+$/);
    expect(json(single.stdout).results[0].project).toBeUndefined();
    const served = await runCli(['diagnostics', '--dir', join(root, 'web'), '--dir', join(root, 'api')], env);
    expect(served.code).toBe(2);
    expect(served.stderr).toMatch(/INVALID_INPUT/);
  }, 60_000);
});
