/**
 * The HTTP API over a workspace (docs/workspace.md, docs/viewer.md): a real server on an ephemeral port
 * over a real Workspace of two temp copies (the demo backlog, native; the Backlog.md fixture) and a
 * folder that does not exist; and the real CLI's `serve` with two `--dir`.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { BACKLOG_MD_FIXTURE, DEMO_DIR, spawnCli, stopped } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

let root: string;
let ws: Workspace;
let server: RunningHttpServer;
let base: string;
const dirs = { demo: '', bmd: '' };

async function getJson(path: string) {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as Json };
}
const ids = (results: { id: string }[]) => results.map((r) => r.id);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'backlog-http-ws-'));
  dirs.demo = join(root, 'demo', 'backlog');
  dirs.bmd = join(root, 'repo', 'backlog');
  await cp(DEMO_DIR, dirs.demo, { recursive: true });
  await cp(BACKLOG_MD_FIXTURE, dirs.bmd, { recursive: true });
  ws = await openWorkspace({
    embeddings: 'none',
    cacheDir: false,
    watch: true,
    backlogs: [{ dir: join(root, 'demo') }, { dir: dirs.bmd }, { dir: join(root, 'missing'), name: 'gone' }],
  });
  server = await startHttpServer({ service: ws, port: 0, viewerDir: false });
  base = server.url;
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (ws) await closeWorkspace(ws);
  await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

describe('HTTP API over a workspace', () => {
  it('/mcp serves every project: a search finds both, project narrows it', async () => {
    const client = new Client({ name: 'http-ws-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const call = async (args: Json) => {
        const res = await client.callTool({
          name: 'backlog_search',
          arguments: { ...args, response_format: 'detailed' },
        });
        return res.structuredContent as Json;
      };
      const all = await call({ query: 'task', limit: 50 });
      expect(new Set(all.results.map((r: Json) => r.project))).toEqual(new Set(['demo', 'backlog.md']));
      const one = await call({ query: 'task', limit: 50, project: 'backlog.md' });
      expect(one.results.length).toBeGreaterThan(0);
      expect(one.results.every((r: Json) => r.project === 'backlog.md')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('GET /projects lists each open project (name, format, size) and the folder that failed, with its code', async () => {
    const { status, body } = await getJson('/projects');
    expect(status).toBe(200);
    expect(body.projects.map((p: Json) => [p.name, p.format.name, p.items])).toEqual([
      ['demo', 'native', ws.projects[0].service.size],
      ['backlog.md', 'backlog-md', ws.projects[1].service.size],
    ]);
    expect(body.projects[1].project).toBe('Backlog.md');
    expect(body.projects[1].vocabulary.kinds.map((k: Json) => k.type)).toContain('document');
    expect(body.problems).toEqual([
      expect.objectContaining({ name: 'gone', code: 'NOT_FOUND', hint: expect.any(String) }),
    ]);
  });

  it('GET /health lists the projects and the problems; items is their sum', async () => {
    const { body } = await getJson('/health');
    expect(body.status).toBe('ok');
    expect(body.items).toBe(ws.size);
    expect(body.project).toBeNull();
    expect(body.projects.map((p: Json) => p.name)).toEqual(['demo', 'backlog.md']);
    expect(body.problems.map((p: Json) => p.code)).toEqual(['NOT_FOUND']);
  });

  it('GET /search: without project both projects, with project one, each hit with its project and a qualified id', async () => {
    const all = await getJson('/search?q=task&limit=50');
    expect(all.status).toBe(200);
    const projects = new Set(all.body.results.map((r: Json) => r.project));
    expect(projects).toEqual(new Set(['demo', 'backlog.md']));
    for (const r of all.body.results)
      expect(r.id.startsWith(`${r.project}:`) || r.id.startsWith('mcp://')).toBe(true);
    expect(ids(all.body.results)).toEqual(ids((await ws.searchUnified('task', { limit: 50 })).results));

    const one = await getJson('/search?q=task&limit=50&project=backlog.md');
    expect(one.body.results.length).toBeGreaterThan(0);
    expect(one.body.results.every((r: Json) => r.project === 'backlog.md')).toBe(true);
    expect(ids(one.body.results)).toEqual(
      ids((await ws.searchUnified('task', { limit: 50, project: 'backlog.md' })).results),
    );
    // A list (repeated or comma-separated) and `*` are every project.
    for (const q of ['project=demo,backlog.md', 'project=demo&project=backlog.md', 'project=*'])
      expect(ids((await getJson(`/search?q=task&limit=50&${q}`)).body.results)).toEqual(
        ids(all.body.results),
      );
  });

  it('GET /search and /tasks: an unknown or unopened project, and bad options, keep their codes and hints', async () => {
    const unknown = await getJson('/search?q=task&project=nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_FILTER');
    expect(unknown.body.error.hint).toContain('demo, backlog.md');
    const gone = await getJson('/tasks?project=gone');
    expect(gone.body.error.code).toBe('INVALID_FILTER');
    expect(gone.body.error.message).toContain('could not be opened (NOT_FOUND');
    expect((await getJson('/search?project=demo')).body.error.code).toBe('INVALID_QUERY');
    const bad = await getJson('/search?q=task&limit=abc');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_FILTER']);
    const typo = await getJson('/tasks?stauts=open');
    expect(typo.body.error.code).toBe('INVALID_FILTER');
    expect(typo.body.error.hint).toContain('status');
  });

  it('GET /tasks: project narrows the list; every item carries its project', async () => {
    const all = await getJson('/tasks?limit=1000&state=all');
    expect(all.body.total).toBe(ws.list({ limit: 1000, state: 'all' }).total);
    expect(new Set(all.body.results.map((r: Json) => r.project))).toEqual(new Set(['demo', 'backlog.md']));
    const one = await getJson('/tasks?limit=1000&state=all&project=demo');
    expect(one.body.total).toBe(ws.projects[0].service.list({ limit: 1000, state: 'all' }).total);
    expect(
      one.body.results.every(
        (r: Json) =>
          r.project === 'demo' && (r.id.startsWith('demo:') || r.id.startsWith('mcp://backlog/demo/')),
      ),
    ).toBe(true);
  });

  it('GET /tasks/:id: qualified and unique bare ids; the item, its parent and children carry the project', async () => {
    const q = await getJson('/tasks/demo:TASK-0001');
    expect(q.status).toBe(200);
    expect(q.body.item).toMatchObject({ id: 'demo:TASK-0001', project: 'demo', parent_id: 'demo:EPIC-0001' });
    expect(q.body.item.uri).toBe(`mcp://backlog/demo/${q.body.item.path}`);
    expect(q.body.parent).toMatchObject({ id: 'demo:EPIC-0001', project: 'demo' });
    expect((await getJson('/tasks/TASK-0001')).body.item.id).toBe('demo:TASK-0001');
    const sub = await getJson(`/tasks/${encodeURIComponent('backlog.md:BACK-222')}`);
    expect(sub.body.children.map((c: Json) => [c.id, c.project])).toContainEqual([
      'backlog.md:BACK-222.1',
      'backlog.md',
    ]);
    const missing = await getJson('/tasks/demo:BACK-222');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('AMBIGUOUS_ID lists the qualified candidates; a project-qualified path or ?project= picks one', async () => {
    const amb = await getJson('/resources/README.md');
    expect(amb.status).toBe(400);
    expect(amb.body.error.code).toBe('AMBIGUOUS_ID');
    expect(amb.body.error.candidates).toEqual([
      'mcp://backlog/demo/README.md',
      'mcp://backlog/backlog.md/README.md',
    ]);
    expect((await getJson('/tasks/README.md')).body.error.code).toBe('AMBIGUOUS_ID');
    expect((await getJson('/resources/demo/README.md')).body.item.project).toBe('demo');
    expect((await getJson('/resources/backlog.md:README.md')).body.item.project).toBe('backlog.md');
    expect((await getJson('/tasks/README.md?project=backlog.md')).body.item.project).toBe('backlog.md');
    // Relative to the project's resources/ folder, as for one backlog.
    const adr = (await getJson('/tasks?project=demo&types=resource&limit=1000')).body.results.find(
      (r: Json) => r.path.startsWith('resources/'),
    );
    const short = adr.path.slice('resources/'.length);
    expect((await getJson(`/resources/demo:${short}`)).body.item.path).toBe(adr.path);
  });

  it('GET /events: a change names its project and carries the qualified id', async () => {
    const ctrl = new AbortController();
    const res = await fetch(`${base}/events`, { signal: ctrl.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (re: RegExp) => {
      const deadline = Date.now() + 10_000;
      while (!re.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      return re.exec(text);
    };
    expect(await until(/event: ready\ndata: (.*)/)).toBeTruthy();
    expect(JSON.parse(/event: ready\ndata: (.*)/.exec(text)![1])).toEqual({ items: ws.size });
    await writeFile(
      join(dirs.bmd, 'tasks', 'back-900 - Live-event.md'),
      '---\nid: BACK-900\ntitle: Live event probe\nstatus: To Do\n---\nzeppelin\n',
    );
    const m = await until(/event: change\n(?:id: .*\n)?data: (.*)/);
    ctrl.abort();
    expect(m).toBeTruthy();
    expect(JSON.parse(m![1])).toMatchObject({ project: 'backlog.md', id: 'backlog.md:BACK-900' });
  });
});

describe('backlog-search serve with several --dir', () => {
  it('GET /search shows a document two projects hold once, with also_in naming the other copy', async () => {
    const twinDir = join(root, 'twin', 'backlog');
    await cp(DEMO_DIR, twinDir, { recursive: true });
    const twins = await openWorkspace({
      embeddings: 'none',
      cacheDir: false,
      watch: false,
      backlogs: [{ dir: dirs.demo }, { dir: twinDir }],
    });
    const twinServer = await startHttpServer({ service: twins, port: 0, viewerDir: false });
    try {
      const all = (await (await fetch(`${twinServer.url}/search?q=sync&limit=20`)).json()) as Json;
      expect(all.results.length).toBeGreaterThan(1);
      for (const r of all.results) {
        // Of two equal copies, the one of the project listed first is shown.
        expect(r.project).toBe('demo');
        expect(r.also_in).toEqual([
          r.id.replace(/^demo:|^mcp:\/\/backlog\/demo\//, (x: string) => x.replace('demo', 'twin')),
        ]);
      }
      expect(all.results).toEqual((await twins.searchUnified('sync', { limit: 20 })).results);
      const one = (await (
        await fetch(`${twinServer.url}/search?q=sync&limit=20&project=twin`)
      ).json()) as Json;
      expect(one.results.length).toBe(all.results.length);
      expect(one.results.some((r: Json) => r.also_in)).toBe(false);
    } finally {
      await twinServer.close();
      await closeWorkspace(twins);
    }
  });

  it('serves a workspace: /projects names both, search finds both', async () => {
    const child = spawnCli([
      'serve',
      '--dir',
      join(root, 'demo'),
      '--dir',
      `other=${dirs.bmd}`,
      '--port',
      '0',
      '--no-watch',
      '--embeddings',
      'none',
    ]);
    try {
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const deadline = Date.now() + 60_000;
      while (!/at (http:\/\/\S+)/.test(err) && Date.now() < deadline && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 100));
      const url = /at (http:\/\/\S+)/.exec(err)?.[1];
      expect(url, err).toBeTruthy();
      const projects = (await (await fetch(`${url}/projects`)).json()) as Json;
      expect(projects.projects.map((p: Json) => p.name)).toEqual(['demo', 'other']);
      const found = (await (await fetch(`${url}/search?q=task&limit=50`)).json()) as Json;
      expect(new Set(found.results.map((r: Json) => r.project))).toEqual(new Set(['demo', 'other']));
    } finally {
      expect(await stopped(child)).toBe(true);
    }
  }, 90_000);
});
