/**
 * Writes that never clobber (#14): the lock every process respects, minimal-edit updates, and the
 * clean-up of what killed writers leave behind. Real files, real child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { editFrontMatter, parseFrontmatter } from '../src/storage/frontmatter.js';
import { acquireLock, processStartTime, readLock, tryLock } from '../src/storage/file-lock.js';
import { removeWriteLeftovers } from '../src/storage/write-file.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { commitIfUnchanged } from '../src/service/write-text.js';
import { ROOT, tempBacklog } from './helpers.js';
import { stat } from 'node:fs/promises';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function backlog(): Promise<string> {
  const t = await tempBacklog();
  cleanups.push(t.cleanup);
  return t.dir;
}

/** A writer process (test/write-worker.ts) on `dir`; `call` sends one request and resolves to its answer. */
async function worker(dir: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test', 'write-worker.ts'), dir],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const pending = new Map<
    number,
    (v: { ok: boolean; code?: string; result?: Record<string, unknown> }) => void
  >();
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line === 'ready') return ready();
    const msg = JSON.parse(line);
    pending.get(msg.n)?.(msg);
  });
  await isReady;
  let n = 0;
  const w = {
    call: (op: string, args: Record<string, unknown>) =>
      new Promise<{ ok: boolean; code?: string; result?: Record<string, unknown> }>((resolve) => {
        const id = ++n;
        pending.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ n: id, op, args })}\n`);
      }),
    stop: async () => {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return w;
}

/** The pid of a process that has exited (so any lock it "holds" is stale). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

const BOM_CRLF_TASK = [
  '\ufeff---',
  '# Owned by the platform team',
  'id: TASK-0900',
  "title: 'Keep my formatting' # a comment after a value",
  'type: task',
  'status: open',
  'tags:',
  '  - one # first',
  '  - two',
  'labels_note: keep',
  'created_at: 2026-01-01',
  'updated_at: 2026-01-02',
  '---',
  '',
  'Body line one.',
  'Body line two.',
  '',
].join('\r\n');

describe('editFrontMatter: only the named fields change', () => {
  it('keeps comments, quotes, dates, BOM, CRLF and the body byte for byte', () => {
    const out = editFrontMatter(BOM_CRLF_TASK, [
      ['status', 'done'],
      ['title', 'Kept style'],
      ['milestone', 'v2'],
      ['labels_note', undefined],
    ]);
    expect(out.startsWith('\ufeff---\r\n')).toBe(true);
    expect(out.replace(/\r\n/g, '')).not.toContain('\n');
    const before = BOM_CRLF_TASK.split('\r\n');
    const after = out.split('\r\n');
    const removed = before.filter((l) => !after.includes(l));
    const added = after.filter((l) => !before.includes(l));
    expect(removed).toEqual([
      "title: 'Keep my formatting' # a comment after a value",
      'status: open',
      'labels_note: keep',
    ]);
    expect(added).toEqual(["title: 'Kept style' # a comment after a value", 'status: done', 'milestone: v2']);
    expect(parseFrontmatter(out).data).toMatchObject({
      status: 'done',
      milestone: 'v2',
      tags: ['one', 'two'],
    });
  });

  it('rewrites a list in its own style and adds a block to a file without one', () => {
    expect(editFrontMatter('---\ntags: [a, b]\n---\nx', [['tags', ['c']]])).toBe('---\ntags: [c]\n---\nx');
    expect(editFrontMatter('---\ntags:\n- a\nn: 1\n---\nx', [['tags', ['c', 'd']]])).toBe(
      '---\ntags:\n- c\n- d\nn: 1\n---\nx',
    );
    expect(editFrontMatter('# Title\r\nbody', [['id', 'TASK-0001']])).toBe(
      '---\r\nid: TASK-0001\r\n---\r\n# Title\r\nbody',
    );
    expect(editFrontMatter('---\n---\nbody', [['a', 'b']])).toBe('---\na: b\n---\nbody');
  });
});

describe('updates through the service', () => {
  it('backlog_update of one field keeps the rest of a BOM + CRLF file as written', async () => {
    const dir = await backlog();
    const path = join(dir, 'tasks', 'TASK-0900-keep.md');
    await writeFile(path, BOM_CRLF_TASK);
    const service = await openBacklog({ dir, cacheDir: false });
    try {
      await service.update({ id: 'TASK-0900', status: 'in_progress', append: 'Appended.\nTwo lines.' });
      const out = await readFile(path, 'utf8');
      expect(out.startsWith('\ufeff---\r\n# Owned by the platform team\r\n')).toBe(true);
      expect(out.replace(/\r\n/g, '')).not.toContain('\n');
      expect(out).toContain('\r\ncreated_at: 2026-01-01\r\n');
      expect(out).toContain('\r\n  - one # first\r\n');
      expect(out).toContain('\r\nstatus: in_progress\r\n');
      expect(out).toMatch(/\r\nupdated_at: 20\d\d-\d\d-\d\dT[\d:.]+Z\r\n/);
      expect(out.endsWith('Body line one.\r\nBody line two.\r\nAppended.\r\nTwo lines.')).toBe(true);
      expect(service.get('TASK-0900').status).toBe('in_progress');
    } finally {
      await closeBacklog(service);
    }
  });

  it('a file changed on disk since it was read is not overwritten: the commit says so', async () => {
    const dir = await backlog();
    const path = join(dir, 'tasks', 'x.md');
    await writeFile(path, 'one');
    const read = await stat(path);
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(path, 'two, by an editor');
    expect(await commitIfUnchanged(path, read, 'mine', 'tasks/x.md', 1)).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('two, by an editor');
    await expect(commitIfUnchanged(path, read, 'mine', 'tasks/x.md', 3)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(await commitIfUnchanged(path, await stat(path), 'mine', 'tasks/x.md', 1)).toBe(true);
    expect(await readFile(path, 'utf8')).toBe('mine');
  });
});

describe('the lock every process respects', () => {
  it('two processes appending to one task at once lose nothing (50 + 50)', async () => {
    const dir = await backlog();
    const [a, b] = await Promise.all([worker(dir), worker(dir)]);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 ? a : b).call('update', { id: 'TASK-0002', append: `line-${i}-end` }),
      ),
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    const text = await readFile(
      join(
        dir,
        'tasks',
        (await readdir(join(dir, 'tasks'))).find((f) => f.startsWith('TASK-0002'))!,
      ),
      'utf8',
    );
    for (let i = 0; i < 100; i++) expect(text).toContain(`line-${i}-end`);
    expect((await readdir(join(dir, 'tasks'))).filter((f) => f.startsWith('.'))).toEqual([]);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('racing version-checked updates from two processes: exactly one wins each round', async () => {
    const dir = await backlog();
    const [a, b] = await Promise.all([worker(dir), worker(dir)]);
    const path = join(
      dir,
      'tasks',
      (await readdir(join(dir, 'tasks'))).find((f) => f.startsWith('TASK-0003-'))!,
    );
    for (let round = 0; round < 5; round++) {
      // The version as it is on disk (neither worker watches the folder, so their indexes lag).
      const fm = parseFrontmatter(await readFile(path, 'utf8')).data;
      const current = fm.updated_at instanceof Date ? fm.updated_at.toISOString() : String(fm.updated_at);
      const [ra, rb] = await Promise.all([
        a.call('update', { id: 'TASK-0003', append: `a${round}`, expected_updated_at: current }),
        b.call('update', { id: 'TASK-0003', append: `b${round}`, expected_updated_at: current }),
      ]);
      expect([ra.ok, rb.ok].filter(Boolean)).toHaveLength(1);
      expect((ra.ok ? rb : ra).code).toBe('CONFLICT');
    }
    await Promise.all([a.stop(), b.stop()]);
  });

  it('a lock held by a live process waits; one whose owner died is broken at once', async () => {
    const dir = await backlog();
    const path = join(dir, 'tasks', '.shared.lock');
    const release = await acquireLock(path);
    expect(await tryLock(path)).toBeNull();
    const owner = (await readLock(path))!.owner!;
    expect(owner).toMatchObject({ pid: process.pid, host: hostname(), start: processStartTime(process.pid) });
    await release();
    expect(await readLock(path)).toBeNull();

    await writeFile(
      path,
      JSON.stringify({ pid: await deadPid(), host: hostname(), start: '1', nonce: 'dead', at: Date.now() }),
    );
    const started = Date.now();
    const again = await acquireLock(path, { timeoutMs: 1000 });
    expect(Date.now() - started).toBeLessThan(500);
    expect((await readLock(path))!.owner!.pid).toBe(process.pid);
    await again();
  });
});

describe('leftovers of killed writers', () => {
  it('opening a backlog removes dead writers’ locks and temporary files, keeps live ones, and skips no id', async () => {
    const dir = await backlog();
    const dead = await deadPid();
    const tasks = join(dir, 'tasks');
    const stale = { pid: dead, host: hostname(), start: '1', nonce: 'x', at: Date.now() };
    await writeFile(join(tasks, '.TASK-0038.lock'), JSON.stringify(stale));
    await writeFile(join(tasks, '.TASK-0001-login-rate-limit.md.lock'), JSON.stringify(stale));
    await writeFile(join(tasks, `.TASK-0002-x.md.${dead}.0123abcd.tmp`), 'half');
    await writeFile(join(tasks, `TASK-0003-old-style.md.${dead}.0123abcd.tmp`), 'half');
    const live = await acquireLock(join(tasks, '.held.md.lock'));
    await writeFile(join(tasks, `.TASK-0004.md.${process.pid}.0123abcd.tmp`), 'mine, being written');

    const service = await openBacklog({ dir, cacheDir: false });
    try {
      const left = (await readdir(tasks)).filter((f) => f.startsWith('.') || f.endsWith('.tmp')).sort();
      expect(left).toEqual(['.TASK-0004.md.' + process.pid + '.0123abcd.tmp', '.held.md.lock'].sort());
      const created = await service.create({ title: 'After the crash' });
      expect(created.id).toBe(`TASK-${String(38).padStart(4, '0')}`);
    } finally {
      await closeBacklog(service);
      await live();
    }
  });

  it('an id claimed by a writer that died is not skipped even without the start-up sweep', async () => {
    const dir = await backlog();
    const service = await openBacklog({ dir, cacheDir: false, removeLeftovers: false });
    try {
      const next = (await service.create({ title: 'probe' })).id;
      const n = Number(next.slice(5)) + 1;
      const id = `TASK-${String(n).padStart(4, '0')}`;
      await writeFile(
        join(dir, 'tasks', `.${id}.lock`),
        JSON.stringify({ pid: await deadPid(), host: hostname(), start: '1', nonce: 'x', at: Date.now() }),
      );
      expect((await service.create({ title: 'after' })).id).toBe(id);
      expect(await removeWriteLeftovers(dir)).toEqual({ temp: 0, locks: 0 });
    } finally {
      await closeBacklog(service);
    }
  });
});
