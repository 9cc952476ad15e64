import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEMO_DIR, runCli, tempBacklog } from './helpers.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
});
afterAll(() => cleanup());

describe('CLI', () => {
  it('search prints one line per hit and JSON with --json', async () => {
    const text = await runCli(['--dir', dir, 'search', 'rate', 'limit', '-n', '2']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^\d+ results for "rate limit" \(bm25/);
    expect(text.stdout).toContain('TASK-0001  [task/in_progress]');
    const json = await runCli(['--dir', dir, 'search', 'rate limit', '--type', 'task', '--json', '--scores']);
    const res = JSON.parse(json.stdout);
    expect(res.results[0]).toMatchObject({ id: 'TASK-0001', type: 'task' });
    expect(typeof res.results[0].score).toBe('number');
  });

  it('serves the demo backlog when there is no ./backlog and no --dir', async () => {
    const res = await runCli(['search', 'passkeys', '--json'], { BACKLOG_DIR: '' });
    expect(res.stderr).toContain('demo backlog');
    expect(JSON.parse(res.stdout).results.length).toBeGreaterThan(0);
  });

  it('BACKLOG_DIR selects the folder', async () => {
    const res = await runCli(['get', 'TASK-0004', '--json'], { BACKLOG_DIR: dir });
    expect(JSON.parse(res.stdout)).toMatchObject({
      id: 'TASK-0004',
      path: 'tasks/TASK-0004-locked-out-after-failed-sign-in.md',
    });
  });

  it('get shows items and per-id errors', async () => {
    const res = await runCli(['--dir', DEMO_DIR, 'get', 'TASK-0004', 'TASK-9999']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('# Users locked out');
    expect(res.stdout).toContain('TASK-9999: NOT_FOUND');
    const missing = await runCli(['--dir', DEMO_DIR, 'get', 'TASK-9999']);
    expect(missing.code).toBe(2);
  });

  it('errors carry a code and a hint, and a non-zero exit', async () => {
    const res = await runCli(['--dir', dir, 'search', 'sync', '--status', 'someday']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error INVALID_FILTER: status/m);
    expect(res.stderr).toMatch(/^hint: /m);
    const json = await runCli(['--dir', dir, 'search', 'sync', '--type', 'story', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'error',
      error: { code: 'INVALID_FILTER', field: 'types' },
    });
    const missing = await runCli(['--dir', '/nonexistent/backlog', 'search', 'x']);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
  });

  it('index, list and diagnostics', async () => {
    const index = await runCli(['--dir', dir, 'index']);
    expect(index.stdout).toMatch(/Indexed 54 items \(37 task, 6 epic, 11 resource\)/);
    // index is the build a user asks for: its cache keeps every prepared snippet body, not only a
    // one-shot's few (the first queries of the next process read them).
    const opened = await openBacklog({ dir, embeddings: 'none', background: false });
    try {
      expect(opened.cacheStatus().used).toBe(true);
      expect(opened.index.snippetsPartial).toBe(false);
    } finally {
      await closeBacklog(opened);
    }
    const list = await runCli(['--dir', dir, 'list', '--type', 'epic', '--json']);
    expect(JSON.parse(list.stdout).total).toBe(6);
    const diag = await runCli(['--dir', dir, 'diagnostics', '--json']);
    expect(JSON.parse(diag.stdout)).toMatchObject({ items: 54, files: [] });
  });

  it('search runs hybrid on what index built, and says how many chunks are missing when some are', async () => {
    // The suite runs with BACKLOG_EMBEDDINGS=none; this test embeds the demo backlog with the bundled model.
    const bundled = ['--dir', dir, '--embeddings', 'bundled'];
    await runCli([...bundled, 'index']);
    const hybrid = JSON.parse((await runCli([...bundled, 'search', 'user cannot sign in', '--json'])).stdout);
    expect(hybrid.search_mode).toBe('hybrid');
    expect(hybrid.warnings).toBeUndefined();
    await writeFile(
      join(dir, 'tasks', 'TASK-0900-fresh.md'),
      '---\nid: TASK-0900\ntitle: A fresh task\ntype: task\nstatus: open\n---\nWritten after the index was built.\n',
    );
    const partial = JSON.parse((await runCli([...bundled, 'search', 'fresh task', '--json'])).stdout);
    expect(partial.search_mode).toBe('bm25');
    expect(partial.warnings.join(' ')).toMatch(
      /ran bm25: the semantic index is incomplete: \d+ of \d+ chunks have no cached embedding/,
    );
    expect(partial.results[0].id).toBe('TASK-0900');
  }, 180_000);
});
