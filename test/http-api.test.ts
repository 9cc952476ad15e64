/**
 * The HTTP read API (/search, /tasks, /tasks/:id, /resources/*, /events) and the viewer's static
 * files, on a real server on an ephemeral port over a temp copy of the demo backlog.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BacklogError } from '../src/errors.js';
import { queryToArgs } from '../src/http/api.js';
import { createHttpApp, startHttpServer, statusOf, type RunningHttpServer } from '../src/http/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { openBacklog } from '../src/service/open-backlog.js';
import { searchOptionsSchema } from '../src/service/options.js';
import { spawnCli, tempBacklog } from './helpers.js';

/** GET with chosen headers and no automatic decompression (fetch would decode gzip and forbid Host). */
function rawGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Json = Record<string, any>;

async function getJson(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Json };
}

const ids = (results: { id: string }[]) => results.map((r) => r.id);

describe('HTTP API', () => {
  let server: RunningHttpServer;
  let service: BacklogService;
  let dir: string;
  let cleanup: () => Promise<void>;
  let viewerDir: string;
  let base: string;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempBacklog());
    service = await openBacklog({ dir });
    // A stand-in viewer build, so these tests do not depend on `vite build`.
    viewerDir = await mkdtemp(join(tmpdir(), 'backlog-viewer-'));
    await mkdir(join(viewerDir, 'assets'));
    await writeFile(
      join(viewerDir, 'index.html'),
      '<!doctype html><title>Backlog</title><div id="app"></div>',
    );
    await writeFile(
      join(viewerDir, 'assets', 'index-abc123.js'),
      `console.log(${JSON.stringify('x'.repeat(4000))});`,
    );
    await writeFile(join(viewerDir, '.secret'), 'hidden');
    const app = createHttpApp(service, { viewerDir });
    // Routes that fail on purpose, to check the status of every error code on the real error handler.
    app.get('/test/conflict', () => {
      throw new BacklogError('CONFLICT', 'already there', 'pick another');
    });
    app.get('/test/crash', () => {
      throw new Error('boom');
    });
    server = await startHttpServer({ service, app, port: 0 });
    base = server.url;
  });

  afterAll(async () => {
    await server?.close();
    await cleanup?.();
    await rm(viewerDir, { recursive: true, force: true });
  });

  describe('GET /search', () => {
    it('answers searchUnified for the same options, with status ok and the search mode', async () => {
      const { status, body } = await getJson(`${base}/search?query=login%20rate%20limit`);
      expect(status).toBe(200);
      const direct = await service.searchUnified('login rate limit');
      expect(body.status).toBe('ok');
      expect(ids(body.results)).toEqual(ids(direct.results));
      expect(body.results[0]).toMatchObject({ id: 'TASK-0001', snippet: { text: expect.any(String) } });
      expect(body).toMatchObject({
        total: direct.total,
        query: 'login rate limit',
        search_mode: direct.search_mode,
      });
      expect(typeof body.took_ms).toBe('number');
    });

    it('lists as repeated or comma-separated parameters give the same answer as arrays', async () => {
      const direct = await service.searchUnified('sync', {
        types: ['task', 'epic'],
        status: ['open', 'in_progress'],
      });
      const repeated = await getJson(
        `${base}/search?query=sync&types=task&types=epic&status=open&status=in_progress`,
      );
      const commas = await getJson(`${base}/search?query=sync&types=task,epic&status=open,in_progress`);
      expect(ids(repeated.body.results)).toEqual(ids(direct.results));
      expect(ids(commas.body.results)).toEqual(ids(direct.results));
      expect(direct.results.length).toBeGreaterThan(0);
      expect(direct.results.every((r) => ['open', 'in_progress'].includes(r.status ?? ''))).toBe(true);
    });

    it('reads numbers and booleans from their text', async () => {
      const page = await getJson(
        `${base}/search?query=sync&limit=2&offset=1&include_scores=true&include_content=1`,
      );
      expect(page.status).toBe(200);
      expect(page.body.results).toHaveLength(2);
      expect(page.body.next_offset).toBe(3);
      expect(typeof page.body.results[0].score).toBe('number');
      expect(typeof page.body.results[0].content).toBe('string');
      const off = await getJson(`${base}/search?query=sync&include_scores=false&conjunctive=0`);
      expect(off.body.results[0].score).toBeUndefined();
      const recent = await getJson(`${base}/search?query=sync&sort=recent`);
      expect(ids(recent.body.results)).toEqual(
        ids((await service.searchUnified('sync', { sort: 'recent' })).results),
      );
    });

    it('accepts the aliases of the MCP tool (q, type, tag)', async () => {
      const { body } = await getJson(`${base}/search?q=login&type=task&tag=auth`);
      expect(ids(body.results)).toEqual(
        ids((await service.searchUnified('login', { types: ['task'], tags: ['auth'] })).results),
      );
    });

    it.each([
      ['', 'INVALID_QUERY', 'query'],
      ['query=', 'INVALID_QUERY', 'empty'],
      ['query=%20%20', 'INVALID_QUERY', 'empty'],
      [`query=${'x'.repeat(2100)}`, 'INVALID_QUERY', 'limit'],
      ['query=x&limit=abc', 'INVALID_FILTER', 'limit'],
      ['query=x&limit=1000', 'INVALID_FILTER', 'limit'],
      ['query=x&offset=-1', 'INVALID_FILTER', 'offset'],
      ['query=x&sort=oldest', 'INVALID_FILTER', 'sort'],
      ['query=x&types=bug', 'INVALID_FILTER', 'types'],
      ['query=x&status=nonsense', 'INVALID_FILTER', 'status'],
      ['query=x&parent_id=EPIC-9999', 'INVALID_FILTER', 'parent_id'],
      ['query=x&conjunctive=maybe', 'INVALID_FILTER', 'conjunctive'],
      ['query=x&limt=5', 'INVALID_FILTER', 'limt'],
      ['query=x&q=y', 'INVALID_FILTER', 'q'],
    ])('?%s -> 400 %s', async (qs, code, word) => {
      const { status, body } = await getJson(`${base}/search?${qs}`);
      expect(status).toBe(400);
      expect(body).toEqual({
        status: 'error',
        error: { code, message: expect.any(String), hint: expect.any(String) },
      });
      expect(`${body.error.message} ${body.error.hint}`).toContain(word);
    });

    it('an unknown option gets a "did you mean" hint', async () => {
      const { body } = await getJson(`${base}/search?query=x&limt=5`);
      expect(body.error.hint).toBe('Did you mean "limit"?');
    });

    it('queryToArgs: one value stays a string, repeats become lists, booleans are read', () => {
      expect(
        queryToArgs(
          {
            q: ['login'],
            status: ['open', 'done'],
            conjunctive: ['yes'],
            include_scores: ['off'],
            limit: ['5'],
          },
          searchOptionsSchema,
        ),
      ).toEqual({
        query: 'login',
        status: ['open', 'done'],
        conjunctive: true,
        include_scores: false,
        limit: '5',
      });
    });
  });

  describe('GET /tasks', () => {
    it('lists like service.list, with filters, sort and paging', async () => {
      const all = await getJson(`${base}/tasks`);
      expect(all.status).toBe(200);
      const direct = service.list();
      expect(ids(all.body.results)).toEqual(ids(direct.results));
      expect(all.body.counts_by_status).toEqual(direct.counts_by_status);
      expect(all.body.total).toBe(service.size);

      const epics = await getJson(`${base}/tasks?types=epic&sort=id`);
      expect(ids(epics.body.results)).toEqual(ids(service.list({ types: ['epic'], sort: 'id' }).results));
      expect(epics.body.results.every((r: { type: string }) => r.type === 'epic')).toBe(true);

      const filtered = await getJson(
        `${base}/tasks?status=open&status=blocked&tags=auth&parent_id=EPIC-0001`,
      );
      const expected = service.list({
        status: ['open', 'blocked'],
        tags: ['auth'],
        parent_id: ['EPIC-0001'],
      });
      expect(ids(filtered.body.results)).toEqual(ids(expected.results));
      expect(expected.results.length).toBeGreaterThan(0);

      const page = await getJson(`${base}/tasks?sort=id&limit=5&offset=5`);
      expect(ids(page.body.results)).toEqual(ids(service.list({ sort: 'id' }).results.slice(5, 10)));
      expect(page.body.next_offset).toBe(10);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=5000', 'limit'],
      ['sort=relevant', 'sort'],
      ['types=story', 'types'],
      ['status=nonsense', 'status'],
      ['query=login', 'query'],
    ])('?%s -> 400 INVALID_FILTER', async (qs, word) => {
      const { status, body } = await getJson(`${base}/tasks?${qs}`);
      expect(status).toBe(400);
      expect(body.status).toBe('error');
      expect(body.error.code).toBe('INVALID_FILTER');
      expect(`${body.error.message} ${body.error.hint}`).toContain(word);
    });
  });

  describe('GET /tasks/:id and /resources/*', () => {
    it('returns the item with its content, metadata, parent and children', async () => {
      const { status, body } = await getJson(`${base}/tasks/TASK-0001`);
      expect(status).toBe(200);
      expect(body.status).toBe('ok');
      expect(body.item).toMatchObject({
        id: 'TASK-0001',
        type: 'task',
        title: service.get('TASK-0001').title,
        body: service.get('TASK-0001').body,
        parent_id: 'EPIC-0001',
        uri: 'mcp://backlog/tasks/TASK-0001-login-rate-limit.md',
      });
      expect(body.metadata).toMatchObject({
        id: 'TASK-0001',
        file_type: 'md',
        links: { parent: 'EPIC-0001' },
      });
      expect(body.parent).toMatchObject({ id: 'EPIC-0001', type: 'epic' });
      expect(body.children.map((c: { id: string }) => c.id)).toEqual(
        service.getMetadata('TASK-0001').links.children,
      );

      const epic = await getJson(`${base}/tasks/epic-0001`);
      expect(epic.body.item.id).toBe('EPIC-0001');
      expect(epic.body.parent).toBeNull();
      expect(epic.body.children.map((c: { id: string }) => c.id)).toContain('TASK-0001');
    });

    it('resolves resource URIs and paths given as ids', async () => {
      const uri = encodeURIComponent('mcp://backlog/resources/glossary.txt');
      expect((await getJson(`${base}/tasks/${uri}`)).body.item.path).toBe('resources/glossary.txt');
    });

    it('serves resources by path from the root or from resources/', async () => {
      const fromRoot = await getJson(`${base}/resources/resources/adr/0001-crdt-for-note-sync.md`);
      const short = await getJson(`${base}/resources/adr/0001-crdt-for-note-sync.md`);
      expect(fromRoot.status).toBe(200);
      expect(short.body).toEqual(fromRoot.body);
      expect(fromRoot.body.item).toMatchObject({
        type: 'resource',
        path: 'resources/adr/0001-crdt-for-note-sync.md',
        body: expect.stringContaining('CRDT'),
      });
      expect(fromRoot.body.metadata).toMatchObject({
        file_name: '0001-crdt-for-note-sync.md',
        size: expect.any(Number),
      });
      const readme = await getJson(`${base}/resources/README.md`);
      expect(readme.body.item.path).toBe('README.md');
      const json = await getJson(`${base}/resources/config/feature-flags.json`);
      expect(json.body.item.file_type).toBe('json');
    });

    it('a name with spaces or unicode works when percent-encoded', async () => {
      await service.writeResource({
        path: 'resources/notes/Заметка с пробелами.md',
        content: '# Заметка\nтекст',
      });
      const { status, body } = await getJson(
        `${base}/resources/${['notes', 'Заметка с пробелами.md'].map(encodeURIComponent).join('/')}`,
      );
      expect(status).toBe(200);
      expect(body.item.title).toBe('Заметка');
    });

    it.each(['/tasks/TASK-9999', '/resources/nope.md', '/resources/adr/missing.md', '/tasks/%20'])(
      '%s -> 404 NOT_FOUND',
      async (path) => {
        const { status, body } = await getJson(`${base}${path}`);
        expect(status).toBe(404);
        expect(body).toEqual({
          status: 'error',
          error: { code: 'NOT_FOUND', message: expect.any(String), hint: expect.any(String) },
        });
      },
    );
  });

  describe('GET /events', () => {
    it('streams a ready event, then one change per file applied or removed', async () => {
      const ctrl = new AbortController();
      const res = await fetch(`${base}/events`, { signal: ctrl.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      const next = async (): Promise<{ event: string; data: string }> => {
        for (;;) {
          const end = buffer.indexOf('\n\n');
          if (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.startsWith(':')) continue;
            const field = (name: string) =>
              block
                .split('\n')
                .filter((l) => l.startsWith(`${name}: `))
                .map((l) => l.slice(name.length + 2))
                .join('\n');
            return { event: field('event'), data: field('data') };
          }
          const { value, done } = await reader.read();
          if (done) throw new Error('stream ended');
          buffer += decoder.decode(value, { stream: true });
        }
      };
      try {
        const ready = await next();
        expect(ready.event).toBe('ready');
        expect(JSON.parse(ready.data)).toEqual({ items: service.size });

        const created = await service.create({ title: 'Evented task', body: 'sse body' });
        const change = await next();
        expect(change.event).toBe('change');
        expect(JSON.parse(change.data)).toEqual({ kind: 'upsert', path: created.path, id: created.id });

        // A file changed on disk and applied (what the watcher does).
        await writeFile(join(dir, 'resources', 'sse.md'), '# SSE\nhello');
        await service.applyFile('resources/sse.md');
        expect(JSON.parse((await next()).data)).toEqual({
          kind: 'upsert',
          path: 'resources/sse.md',
          id: 'mcp://backlog/resources/sse.md',
        });

        await rm(join(dir, 'resources', 'sse.md'));
        service.removeFile('resources/sse.md');
        expect(JSON.parse((await next()).data)).toMatchObject({ kind: 'remove', path: 'resources/sse.md' });
      } finally {
        ctrl.abort();
        await reader.cancel().catch(() => undefined);
      }
    });
  });

  describe('the viewer and errors', () => {
    it('serves index.html at / with a content security policy', async () => {
      const res = await rawGet(`${base}/`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body.toString()).toContain('<div id="app">');
      const query = await rawGet(`${base}/?view=board&item=TASK-0001`);
      expect(query.status).toBe(200);
    });

    it('serves hashed assets cached for a year, gzipped when accepted', async () => {
      const plain = await rawGet(`${base}/assets/index-abc123.js`);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-type']).toContain('text/javascript');
      expect(plain.headers['cache-control']).toContain('immutable');
      expect(plain.headers['content-encoding']).toBeUndefined();
      const gz = await rawGet(`${base}/assets/index-abc123.js`, { 'Accept-Encoding': 'gzip, br' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.body.length).toBeLessThan(plain.body.length);
      expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    });

    it.each([
      '/assets/missing.js',
      '/.secret',
      '/assets/..%2f..%2fpackage.json',
      '/%2e%2e/package.json',
      '/nope',
    ])('%s -> 404 JSON', async (path) => {
      const res = await rawGet(`${base}${path}`);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString())).toMatchObject({
        status: 'error',
        error: { code: 'NOT_FOUND' },
      });
    });

    it('without a built viewer, / explains how to build it', async () => {
      const empty = await mkdtemp(join(tmpdir(), 'backlog-noviewer-'));
      const other = await startHttpServer({ service, port: 0, viewerDir: empty });
      try {
        const { status, body } = await getJson(`${other.url}/`);
        expect(status).toBe(404);
        expect(body.error.message).toContain('not built');
        expect(body.error.hint).toContain('npm run build');
        expect((await getJson(`${other.url}/search?q=login`)).status).toBe(200);
      } finally {
        await other.close();
        await rm(empty, { recursive: true, force: true });
      }
    });

    it('maps every error code to its HTTP status', async () => {
      expect(
        ['INVALID_QUERY', 'INVALID_FILTER', 'QUERY_SYNTAX', 'NOT_FOUND', 'CONFLICT', 'INTERNAL'].map(
          statusOf,
        ),
      ).toEqual([400, 400, 400, 404, 409, 500]);
      const conflict = await getJson(`${base}/test/conflict`);
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({
        status: 'error',
        error: { code: 'CONFLICT', message: 'already there', hint: 'pick another' },
      });
      const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      let logged: unknown[][];
      const crash = await getJson(`${base}/test/crash`).finally(() => {
        logged = [...stderr.mock.calls];
        stderr.mockRestore();
      });
      expect(String(logged!.flat())).toContain('Error: boom');
      expect(crash.status).toBe(500);
      expect(crash.body).toMatchObject({ status: 'error', error: { code: 'INTERNAL', message: 'boom' } });
    });

    it('refuses a foreign Origin or Host on the API with 403', async () => {
      const origin = await rawGet(`${base}/search?q=login`, { Origin: 'http://evil.example' });
      expect(origin.status).toBe(403);
      expect(JSON.parse(origin.body.toString()).error.code).toBe('FORBIDDEN');
      const host = await rawGet(`${base}/tasks`, { Host: 'evil.example' });
      expect(host.status).toBe(403);
      const local = await rawGet(`${base}/search?q=login`, { Origin: `http://localhost:${server.port}` });
      expect(local.status).toBe(200);
    });
  });
});

describe('`backlog-search serve`', () => {
  it('watches the folder by default: a file written on disk is found through /search', async () => {
    const { dir, cleanup } = await tempBacklog();
    const child = spawnCli(['serve', '--port', '0', '--dir', dir]);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        const timer = setTimeout(() => reject(new Error(`no URL on stderr: ${err}`)), 45_000);
        child.stderr!.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
          if (m) {
            clearTimeout(timer);
            expect(err).toContain('watching for changes');
            resolve(m[1]);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      await writeFile(join(dir, 'resources', 'watched.md'), '# Watched\nwombatword');
      // watcher.test.ts holds the 1 s bound in-process; here a loaded CI machine gets some slack.
      const started = Date.now();
      let found: string[] = [];
      while (Date.now() - started < 3000 && !found.length) {
        const res = await fetch(`${url}/search?q=wombatword`);
        found = ids(((await res.json()) as { results: { id: string }[] }).results);
        if (!found.length) await new Promise((r) => setTimeout(r, 25));
      }
      expect(found).toEqual(['mcp://backlog/resources/watched.md']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      await cleanup();
    }
  }, 60_000);
});
