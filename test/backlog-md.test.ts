/**
 * Backlog.md projects, read as Backlog.md reads them: real excerpts of its own backlog
 * (test/fixtures/backlog-md), the real files on disk and the real index.
 */
import { resourceUri } from '../src/storage/parse.js';
import { existsSync } from 'node:fs';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';
import { backlogWatcher, closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { quoteBareNames, backlogMdDate } from '../src/storage/formats/backlog-md.js';
import { detectFormat } from '../src/storage/formats/detect.js';
import { parseFrontmatter } from '../src/storage/frontmatter.js';
import { DEMO_DIR, ROOT, runCli, tempBacklog } from './helpers.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'backlog-md');
const TASK_FOLDERS = ['tasks', 'completed', 'archive/tasks', 'drafts'];

/** Every markdown file under `folder` (relative to the fixture) with the front matter as written. */
async function filesIn(
  dir: string,
  folder: string,
): Promise<{ path: string; data: Record<string, unknown> }[]> {
  const names = await readdir(join(dir, folder)).catch(() => [] as string[]);
  const out = [];
  for (const name of names.filter((n) => n.endsWith('.md'))) {
    const path = `${folder}/${name}`;
    out.push({ path, data: parseFrontmatter(await readFile(join(dir, path), 'utf8'), quoteBareNames).data });
  }
  return out;
}

describe('a Backlog.md folder', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let service: BacklogService;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(FIXTURE));
    service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
  });
  afterAll(async () => {
    await closeBacklog(service);
    await cleanup();
  });

  it('is detected from its config.yml, with its statuses and id prefix', () => {
    expect(service.format.name).toBe('backlog-md');
    expect(service.format.config.statuses).toEqual(['To Do', 'In Progress', 'Done']);
    expect(service.format.config.taskPrefix).toBe('BACK');
    expect(service.diagnostics().format.config_path).toBe('config.yml');
  });

  it('reads every file with an id under tasks/, completed/, archive/tasks/ and drafts/ as a task, with its state', async () => {
    const states: Record<string, string> = {
      tasks: 'active',
      completed: 'completed',
      'archive/tasks': 'archived',
      drafts: 'draft',
    };
    let checked = 0;
    for (const folder of TASK_FOLDERS) {
      for (const { path, data } of await filesIn(dir, folder)) {
        if (!data.id) continue;
        const item = service.get(path);
        expect(item.type, path).toBe('task');
        expect(item.state, path).toBe(states[folder]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
    // readme.md files are documents, never task cards.
    expect(service.get('tasks/readme.md').type).toBe('document');
    expect(service.list({ types: 'task' }).results.some((r) => r.path.endsWith('readme.md'))).toBe(false);
  });

  it('resolves ids in every spelling Backlog.md users write', () => {
    expect(service.get('BACK-72').path).toMatch(/^completed\/back-72 - /);
    expect(service.get('back-72').id).toBe('BACK-72');
    expect(service.get('back 72').id).toBe('BACK-72');
    expect(service.get('BACK-222.1').parent_id).toBe('BACK-222');
    expect(service.children('BACK-222')).toContain('BACK-222.1');
    // Two files claim BACK-569: the active task keeps the id, as `backlog task view` shows it.
    expect(service.get('BACK-569').path).toMatch(/^tasks\//);
    const archived = service.get(
      'archive/tasks/back-569 - Make-browser-task-loading-asynchronous-and-idle-stable.md',
    );
    // The archived copy is addressed by the id qualified with its state, in any spelling, and by its URI.
    expect(archived.id).toBe('BACK-569@archived');
    for (const ref of ['BACK-569@archived', 'back-0569@Archived', resourceUri(archived.path)])
      expect(service.get(ref).path, ref).toBe(archived.path);
    // A bare number is a task number, as Backlog.md's CLI reads it.
    expect(service.get('569').path).toMatch(/^tasks\//);
    const dup = service.diagnostics().files.find((d) => d.code === 'duplicate_id');
    expect(dup).toMatchObject({ level: 'info', path: archived.path });
    expect(dup!.message).toContain('BACK-569@archived');
  });

  it('routes id queries to the task first', async () => {
    for (const q of ['BACK-72', 'back 72', 'back-72']) {
      const res = await service.searchUnified(q);
      expect(res.results[0]?.id, q).toBe('BACK-72');
    }
  });

  it('filters by a configured status in any case and spacing, exactly the items that have it', async () => {
    const expected = new Set<string>();
    for (const folder of [...TASK_FOLDERS, 'docs', 'decisions', 'milestones'])
      for (const { path, data } of await filesIn(dir, folder))
        if (String(data.status ?? '').toLowerCase() === 'in progress') expected.add(path);
    expect(expected.size).toBeGreaterThan(0);
    for (const spelling of ['In Progress', 'in progress', 'IN_PROGRESS', 'in-progress']) {
      const listed = service.list({ status: spelling, state: 'all' });
      expect(new Set(listed.results.map((r) => r.path)), spelling).toEqual(expected);
      const found = await service.searchUnified('task', { status: spelling, limit: 100 });
      for (const r of found.results) expect(expected.has(r.path)).toBe(true);
    }
  });

  it('counts "To do" with "To Do", and lists the configured statuses first, in board order', () => {
    const { counts_by_status, statuses } = service.list({ types: 'task' });
    expect(Object.keys(counts_by_status)).not.toContain('To do');
    expect(counts_by_status['To Do']).toBeGreaterThan(0);
    expect(statuses.slice(0, 3)).toEqual(['To Do', 'In Progress', 'Done']);
  });

  it('refuses a status the backlog does not have, listing the ones it has', async () => {
    await expect(service.searchUnified('board', { status: 'open' })).rejects.toMatchObject({
      code: 'INVALID_FILTER',
      hint: expect.stringContaining('To Do, In Progress, Done'),
    });
  });

  it('filters tasks by state', () => {
    const completed = service.list({ state: 'completed' }).results.map((r) => r.id);
    expect(completed.sort()).toEqual(['BACK-72', 'BACK-91']);
    expect(service.list({ state: ['draft'] }).results.map((r) => r.id)).toEqual(['DRAFT-1']);
  });

  it('reads `assignee: @MrLesk` as Backlog.md does: the text, no error', () => {
    const item = service.get('BACK-91');
    expect(item.assignee).toBe('@MrLesk');
    expect(item.author).toBe('@MrLesk'); // `reporter`
    expect(service.diagnostics().files.filter((d) => d.level === 'error')).toEqual([]);
  });

  it('keeps dates as Backlog.md writes them', () => {
    expect(service.get('BACK-91').created_at).toBe('2025-06-19');
    expect(service.get('BACK-222.1').created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(backlogMdDate(new Date('2025-06-09T00:00:00Z'))).toBe('2025-06-09');
    expect(backlogMdDate(new Date('2025-06-09T14:30:00Z'))).toBe('2025-06-09 14:30');
  });

  it('reads documents, decisions and milestones as types of their own, by their ids', () => {
    expect(service.get('doc-001')).toMatchObject({ type: 'document', title: 'Testing Style Guide' });
    expect(service.get('decision-1').type).toBe('decision');
    expect(service.get('m-6')).toMatchObject({ type: 'milestone', state: null });
    expect(service.get('m-0')).toMatchObject({ type: 'milestone', state: 'archived' });
    expect(service.get('docs/readme.md').type).toBe('document');
    // config.yml is the backlog's settings: a searchable file, never a task or a document.
    expect(service.get('config.yml').type).toBe('resource');
    // `resource` stands for every kind of document.
    const kinds = new Set(service.list({ types: 'resource' }).results.map((r) => r.type));
    expect(kinds).toEqual(new Set(['resource', 'document', 'decision', 'milestone']));
  });

  it('never shows or matches the section markers', async () => {
    const res = await service.searchUnified('hierarchy subtasks', { limit: 10 });
    expect(res.total).toBeGreaterThan(0);
    for (const r of res.results) expect(r.snippet.text).not.toMatch(/<!--|SECTION:|AC:BEGIN/);
    // The markers' words are in every task; a query for them finds none (no body has "begin" otherwise).
    expect((await service.searchUnified('begin')).total).toBe(0);
  });

  it('diagnostics at level error list nothing: Backlog.md reads every file here', async () => {
    const out = await runCli([
      '--dir',
      dir,
      '--embeddings',
      'none',
      'diagnostics',
      '--level',
      'error',
      '--json',
    ]);
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout);
    expect(report.format.name).toBe('backlog-md');
    expect(report.files).toEqual([]);
    expect(report.summary).toContainEqual(
      expect.objectContaining({
        level: 'info',
        code: 'status',
        message: expect.stringMatching(/use status "To Do", configured in config.yml: fine/),
      }),
    );
  });
});

describe('format detection', () => {
  it('keeps a native backlog native', async () => {
    expect((await detectFormat(DEMO_DIR)).name).toBe('native');
  });

  it('recognises a Backlog.md folder without config.yml by its layout', async () => {
    const { dir, cleanup } = await tempBacklog(FIXTURE);
    try {
      await rm(join(dir, 'config.yml'));
      const format = await detectFormat(dir);
      expect(format.name).toBe('backlog-md');
      expect(format.config.statuses).toEqual(['To Do', 'In Progress', 'Done']);
    } finally {
      await cleanup();
    }
  });

  it('reports a config.yml that is not YAML and reads the folder with defaults', async () => {
    const { dir, cleanup } = await tempBacklog(FIXTURE);
    try {
      await writeFile(join(dir, 'config.yml'), 'statuses: [To Do\n  : : bad');
      const format = await detectFormat(dir);
      expect(format.name).toBe('backlog-md');
      expect(format.configDiagnostics[0]).toMatchObject({ code: 'config_unparseable', level: 'error' });
    } finally {
      await cleanup();
    }
  });

  it('follows config.yml while watching: new statuses are the new vocabulary', async () => {
    const { dir, cleanup } = await tempBacklog(FIXTURE);
    const service = await openBacklog({
      dir,
      embeddings: 'none',
      cacheDir: false,
      watch: { debounceMs: 20 },
    });
    try {
      const config = await readFile(join(dir, 'config.yml'), 'utf8');
      await writeFile(
        join(dir, 'config.yml'),
        config.replace(
          'statuses: ["To Do", "In Progress", "Done"]',
          'statuses: ["To Do", "In Progress", "Review", "Done"]',
        ),
      );
      const deadline = Date.now() + 20_000;
      while (!service.format.config.statuses.includes('Review') && Date.now() < deadline) {
        await backlogWatcher(service)!.idle();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(service.format.config.statuses).toEqual(['To Do', 'In Progress', 'Review', 'Done']);
      expect(service.list({ status: 'review' }).total).toBe(0);
      expect(service.get('BACK-72').state).toBe('completed');
    } finally {
      await closeBacklog(service);
      await cleanup();
    }
  }, 30_000);
});

describe('quoteBareNames', () => {
  it('quotes a bare @name as Backlog.md does, and leaves everything else as written', () => {
    expect(quoteBareNames('assignee: @MrLesk')).toBe('assignee: "@MrLesk"');
    expect(quoteBareNames('reporter: @a "b"')).toBe('reporter: "@a \\"b\\""');
    expect(quoteBareNames('assignee: [@a, "@b", c] # who')).toBe('assignee: ["@a", "@b", c] # who');
    expect(quoteBareNames("assignee: '@x'")).toBe("assignee: '@x'");
    expect(quoteBareNames('assignee:\n  - @x')).toBe('assignee:\n  - @x');
    expect(quoteBareNames('title: @not-an-assignee')).toBe('title: @not-an-assignee');
  });
});

const FULL_FOLDER = join(ROOT, '..', 'shared', 'eval', 'backlog-md');

describe.skipIf(!existsSync(FULL_FOLDER))("the Backlog.md project's own backlog (698 files, a copy)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let service: BacklogService;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog(FULL_FOLDER));
    service = await openBacklog({ dir, embeddings: 'none', cacheDir: false });
  }, 60_000);
  afterAll(async () => {
    await closeBacklog(service);
    await cleanup();
  });

  it('reads every file with an id in a task folder as a task, and nothing else as one', async () => {
    let tasks = 0;
    for (const folder of [...TASK_FOLDERS, 'archive/drafts'])
      for (const { path, data } of await filesIn(dir, folder))
        if (data.id) {
          expect(service.get(path).type, path).toBe('task');
          tasks++;
        }
    expect(service.list({ types: 'task', limit: 1000, state: 'all' }).total).toBe(tasks);
  });

  it('resolves BACK-72, back-72 and BACK-222.1, and filters "In Progress" to exactly its items', async () => {
    expect(service.get('BACK-72').path).toMatch(/^completed\/back-72 - /);
    expect(service.get('back-72').id).toBe('BACK-72');
    expect(service.get('BACK-222.1').parent_id).toBe('BACK-222');
    const expected = new Set<string>();
    for (const folder of [...TASK_FOLDERS, 'archive/drafts', 'docs', 'decisions', 'milestones'])
      for (const { path, data } of await filesIn(dir, folder))
        if (String(data.status ?? '').toLowerCase() === 'in progress') expected.add(path);
    expect(expected.size).toBe(3);
    // All three are archived: list shows what Backlog.md lists (none), and says what it left out.
    const live = service.list({ status: 'In Progress' });
    expect(live.total).toBe(0);
    expect(live.not_shown).toEqual({ archived: 3 });
    const all = service.list({ status: 'In Progress', state: 'all' });
    expect(new Set(all.results.map((r) => r.path))).toEqual(expected);
    expect(all.results.every((r) => r.state === 'archived')).toBe(true);
  });

  it("an archived sub-task's parent is the archived copy of its parent id, not the completed task", async () => {
    // archive/tasks has BACK-76 and its sub-tasks BACK-76.1-5; completed/ has another BACK-76, which keeps the id.
    expect(service.get('BACK-76').state).toBe('completed');
    expect(service.get('BACK-76@archived').path).toMatch(/^archive\/tasks\/back-76 - migrate/);
    const kids = service.children('BACK-76@archived');
    expect(kids).toEqual(expect.arrayContaining(['BACK-76.1', 'BACK-76.5']));
    expect(service.children('BACK-76')).not.toContain('BACK-76.1');
    const under = await service.searchUnified('blessed', { parent_id: 'BACK-76@archived', limit: 50 });
    expect(under.results.map((r) => r.id)).toContain('BACK-76.3');
  });

  it('reports no error: Backlog.md reads every file (the 21 with `assignee: @MrLesk` included)', () => {
    const d = service.diagnostics();
    expect(d.files.filter((f) => f.level === 'error')).toEqual([]);
    expect(d.files.filter((f) => f.level === 'warning')).toEqual([]);
    expect(d.format.statuses).toEqual(['To Do', 'In Progress', 'Done']);
  });
});
