import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openBacklog, type BacklogService } from '../src/index.js';
import { BacklogError } from '../src/errors.js';
import { DEMO_DIR, tempBacklog } from './helpers.js';

/** Files that do not fit the schema, added to a copy of the demo backlog. */
const EXTRA_FILES: Record<string, string> = {
  'tasks/TASK-0900-broken-yaml.md':
    '---\nid: TASK-0900\ntitle: Broken frontmatter\nassignee: @someone\ntags: [unclosed\n---\nThe zeppelin hangar doors jam.\n',
  'tasks/task-912 - Backlog style task.md':
    '---\nid: task-912\ntitle: Imported from Backlog.md\nstatus: To Do\nlabels: [imported, legacy]\ncustomer: Globex Corporation\n---\nMigrate the kumquat importer.\n',
  'tasks/TASK-0001-zz-duplicate.md':
    '---\nid: TASK-0001\ntitle: A second TASK-0001\ntype: task\nstatus: open\n---\nDuplicate marmalade.\n',
  'resources/notes/no-frontmatter.md': '# Heading Title Here\n\nSome walrus notes.\n',
  'resources/notes/plain.txt': 'Plain text about a narwhal.\n',
  '.hidden/secret.md': '# Hidden\n\nplatypus\n',
  'node_modules/pkg/readme.md': '# Dependency\n\nplatypus\n',
};

let service: BacklogService;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempBacklog());
  for (const [path, text] of Object.entries(EXTRA_FILES)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await writeFile(join(dir, 'resources/notes/binary.md'), Buffer.from([0x23, 0x20, 0x00, 0x01, 0x02]));
  service = await openBacklog({ dir });
});
afterAll(() => cleanup());

const ids = async (query: string, options = {}) =>
  (await service.searchUnified(query, options)).results.map((r) => r.id);
const diagnosticsFor = (path: string) => service.diagnostics().files.filter((d) => d.path === path);

describe('reading the backlog', () => {
  it('reports unparseable frontmatter with its line, keeps the file searchable and never rewrites it', async () => {
    const path = 'tasks/TASK-0900-broken-yaml.md';
    const [d] = diagnosticsFor(path).filter((x) => x.code === 'frontmatter_unparseable');
    expect(d).toMatchObject({ level: 'error', path });
    expect(d.line).toBeGreaterThan(1);
    expect(await ids('zeppelin hangar')).toEqual(['TASK-0900']);
    expect(service.get('TASK-0900').title).toBe('Broken frontmatter');
    expect(await readFile(join(dir, path), 'utf8')).toBe(EXTRA_FILES[path]);
  });

  it('keeps values outside the schema as written, flags them, and keeps the file searchable', async () => {
    const codes = diagnosticsFor('tasks/task-912 - Backlog style task.md').map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['invalid_id', 'invalid_status']));
    const item = service.get('task-912');
    expect(item).toMatchObject({ id: 'task-912', status: 'To Do', tags: ['imported', 'legacy'] });
    expect(await ids('kumquat')).toEqual(['task-912']);
    expect(await ids('kumquat', { status: 'to do' })).toEqual(['task-912']);
    expect(await ids('kumquat', { tags: 'legacy' })).toEqual(['task-912']);
  });

  it('makes unknown frontmatter fields searchable', async () => {
    expect(await ids('Globex')).toEqual(['task-912']);
  });

  it('reports duplicate ids and keeps the second file (in path order) under a qualified id', async () => {
    expect(diagnosticsFor('tasks/TASK-0001-zz-duplicate.md').map((d) => d.code)).toContain('duplicate_id');
    expect(service.get('TASK-0001').path).toBe('tasks/TASK-0001-login-rate-limit.md');
    expect(await ids('marmalade')).toEqual(['TASK-0001@active']);
    expect(service.get('mcp://backlog/tasks/TASK-0001-zz-duplicate.md').id).toBe('TASK-0001@active');
  });

  it('titles resources from frontmatter, else the first H1, else the file name', async () => {
    expect(service.get('mcp://backlog/resources/notes/no-frontmatter.md').title).toBe('Heading Title Here');
    expect(service.get('resources/notes/plain.txt')).toMatchObject({
      title: 'plain',
      type: 'resource',
      file_type: 'txt',
      folder: 'resources/notes',
    });
    expect(service.get('mcp://backlog/resources/adr/0001-crdt-for-note-sync.md').title).toMatch(/CRDT/i);
  });

  it('skips hidden folders and node_modules, reports binary files', async () => {
    await expect(service.searchUnified('platypus')).resolves.toBeDefined();
    expect(await ids('platypus')).toEqual([]);
    expect(diagnosticsFor('resources/notes/binary.md').map((d) => d.code)).toEqual(['binary_file']);
  });

  it('opening a missing folder is NOT_FOUND', async () => {
    const err = await openBacklog({ dir: join(dir, '..', 'does-not-exist') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BacklogError);
    expect((err as BacklogError).code).toBe('NOT_FOUND');
  });

  it('the demo backlog itself has no diagnostics', async () => {
    const demo = await openBacklog({ dir: DEMO_DIR });
    expect(demo.diagnostics().files).toEqual([]);
    expect(demo.diagnostics().by_type).toEqual({ task: 37, epic: 6, resource: 11 });
  });
});
