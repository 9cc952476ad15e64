/**
 * One id spelling (#13): every id or URI a surface returns (backlog_search, resources/list, GET /tasks,
 * GET /search) is accepted by every surface that takes one (backlog_get, resources/read, GET /tasks/:id),
 * as returned, %-encoded or %-decoded. On a copy of the Backlog.md project's backlog (file names with
 * spaces, sub-task ids like BACK-222.1, documents, decisions): the index is built once, fast-check samples.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/http/server.js';
import { createMcpServer } from '../src/mcp/server.js';
import type { BacklogService } from '../src/service/backlog-service.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { RESOURCE_URI_PREFIX } from '../src/storage/parse.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { BACKLOG_MD_DIR, BACKLOG_MD_FIXTURE, DEMO_DIR, tempBacklog } from './helpers.js';

let service: BacklogService;
let cleanup: () => Promise<void>;
let client: Client;
let http: RunningHttpServer;

/** A reference some surface returned, and the id of the item it names. */
interface Ref {
  ref: string;
  id: string;
  from: string;
}
const refs: Ref[] = [];

const QUERIES = ['mcp server', 'windows path', 'search', 'decision', 'documentation', 'sub-task parent'];

async function getJson(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${http.url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempBacklog(BACKLOG_MD_DIR));
  service = await openBacklog({ dir, embeddings: 'none', cacheDir: false, watch: false });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer(service).connect(a);
  client = new Client({ name: 'id-roundtrip', version: '1' });
  await client.connect(b);
  http = await startHttpServer({ service, port: 0 });

  // resources/list, every page.
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    for (const r of page.resources)
      refs.push({ ref: r.uri, id: service.resolve(r.uri) ?? `unresolved ${r.uri}`, from: 'resources/list' });
    cursor = page.nextCursor;
  } while (cursor);
  for (const query of QUERIES) {
    // backlog_search, as an agent reads it: the first word of each concise line, and every id of the detailed answer.
    const concise = (await client.callTool({
      name: 'backlog_search',
      arguments: { query },
    })) as CallToolResult;
    const lines = (concise.content[0] as { text: string }).text.split('\n').slice(1);
    const detailed = (await client.callTool({
      name: 'backlog_search',
      arguments: { query, response_format: 'detailed' },
    })) as CallToolResult;
    const results = (detailed.structuredContent as { results: Array<{ id: string; path: string }> }).results;
    expect(results.length, query).toBeGreaterThan(0);
    results.forEach((r, i) => {
      expect(lines[i].startsWith(`${r.id} [`), lines[i]).toBe(true);
      refs.push({ ref: r.id, id: r.id, from: 'backlog_search' });
    });
    const { body } = await getJson(`/search?query=${encodeURIComponent(query)}&limit=50`);
    for (const r of body.results as Array<{ id: string }>)
      refs.push({ ref: r.id, id: r.id, from: 'GET /search' });
  }
  // GET /tasks, every page.
  for (let offset = 0; ; offset += 1000) {
    const { body } = await getJson(`/tasks?limit=1000&offset=${offset}&state=all`);
    for (const it of body.results as Array<{ id: string; path: string }>) {
      refs.push({ ref: it.id, id: it.id, from: 'GET /tasks' });
      refs.push({ ref: it.path, id: it.id, from: 'GET /tasks (path)' });
    }
    if (body.next_offset === undefined) break;
  }
}, 60_000);

afterAll(async () => {
  await client?.close();
  await http?.close();
  if (service) await closeBacklog(service);
  await cleanup?.();
});

/** The spellings of a reference a client may send: as returned, %-decoded, %-encoded per segment. */
function spellings(ref: string): string[] {
  const isUri = ref.startsWith(RESOURCE_URI_PREFIX);
  const rest = isUri ? ref.slice(RESOURCE_URI_PREFIX.length) : ref;
  let decoded = rest;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    /* kept as written */
  }
  const encoded = decoded.split('/').map(encodeURIComponent).join('/');
  const prefix = isUri ? RESOURCE_URI_PREFIX : '';
  // A task id as people type it too: lower case, and its bare number (Backlog.md's CLI takes `74`).
  const typed = /^[A-Z]+-\d/i.test(ref)
    ? [ref.toLowerCase(), ...(/^BACK-(\d+(?:\.\d+)*)$/i.exec(ref)?.slice(1) ?? [])]
    : [];
  return [...new Set([ref, prefix + decoded, prefix + encoded, ...typed])];
}

/** resources/read takes a URI: an id is read as mcp://backlog/<id>. */
const asUri = (ref: string) => (ref.startsWith(RESOURCE_URI_PREFIX) ? ref : RESOURCE_URI_PREFIX + ref);

describe('every id any surface returns is accepted by every surface that takes one', () => {
  it('the references cover what makes ids hard', () => {
    const all = refs.map((r) => r.ref);
    expect(refs.filter((r) => r.id.startsWith('unresolved'))).toEqual([]);
    expect(all.some((r) => /%20/.test(r))).toBe(true); // file names with spaces, as URIs
    expect(all).toContain('BACK-222.1'); // a sub-task id
    expect(all).toContain('BACK-569@archived'); // a duplicate id's qualified form
    expect(refs.some((r) => spellings(r.ref).some((s) => /^\d+$/.test(s)))).toBe(true); // bare numbers
    expect(all.some((r) => /^doc-/i.test(r) || r.includes('/docs/'))).toBe(true);
    expect(all.some((r) => /^decision-/i.test(r) || r.includes('/decisions/'))).toBe(true);
    for (const from of ['resources/list', 'backlog_search', 'GET /search', 'GET /tasks'])
      expect(
        refs.some((r) => r.from === from),
        from,
      ).toBe(true);
  });

  it('backlog_get, resources/read and GET /tasks/:id accept each, encoded or not', async () => {
    const sample = fc
      .constantFrom(...refs)
      .chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...spellings(r.ref))));
    await fc.assert(
      fc.asyncProperty(sample, async ([r, spelled]) => {
        const got = (await client.callTool({
          name: 'backlog_get',
          arguments: { ids: spelled, response_format: 'detailed', max_chars: 1 },
        })) as CallToolResult;
        expect(got.isError, `backlog_get ${spelled} (${r.from})`).toBeFalsy();
        const items = (got.structuredContent as { items: Array<{ item: { id: string; uri: string } }> })
          .items;
        expect(items[0].item.id).toBe(r.id);

        const read = await client.readResource({ uri: asUri(spelled) });
        expect(read.contents[0].uri, `resources/read ${spelled}`).toBeTruthy();
        expect(service.resolve(read.contents[0].uri)).toBe(r.id);

        // In a URL path the reference is one segment, so it is encoded once more for the request.
        const { status, body } = await getJson(`/tasks/${encodeURIComponent(spelled)}`);
        expect(status, `GET /tasks/${spelled}`).toBe(200);
        expect((body.item as { id: string }).id).toBe(r.id);
      }),
      {
        numRuns: Number(process.env.FC_RUNS ?? 300),
        seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31),
      },
    );
  }, 30_000);
});

/**
 * A workspace (#22): the Backlog.md excerpts twice (every bare id in two projects) and the demo. Every
 * qualified id or URI search (its results, `also_in` and related items), list and get return is accepted by get, as returned, in lower case, with a
 * bare number, %-encoded, as `<project>:<uri>` and as `<project>:<path>`, and names the same item.
 */
describe('in a workspace, every qualified id returned is accepted back', () => {
  let ws: Workspace;
  const cleanups: Array<() => Promise<void>> = [];
  const wsRefs: Array<{ ref: string; path: string; project: string; also?: boolean }> = [];

  beforeAll(async () => {
    const dirs: string[] = [];
    for (const source of [BACKLOG_MD_FIXTURE, BACKLOG_MD_FIXTURE, DEMO_DIR]) {
      const t = await tempBacklog(source);
      dirs.push(t.dir);
      cleanups.push(t.cleanup);
    }
    ws = await openWorkspace({ backlogs: dirs.map((dir) => ({ dir })), embeddings: 'none', cacheDir: false });
    const add = (r: { id: string; path: string; project?: string }) =>
      wsRefs.push({ ref: r.id, path: r.path, project: r.project! });
    for (const query of [...QUERIES, 'task', 'sync']) {
      const res = await ws.searchUnified(query, { limit: 50, include_related: true });
      res.results.forEach(add);
      (res.related ?? []).forEach(add);
      // The two copies of the excerpts are one result, naming the other copy (same path there).
      for (const r of res.results)
        for (const other of r.also_in ?? []) {
          const project = other.startsWith(RESOURCE_URI_PREFIX)
            ? other.slice(RESOURCE_URI_PREFIX.length).split('/')[0]
            : other.slice(0, other.indexOf(':'));
          wsRefs.push({ ref: other, path: r.path, project, also: true });
        }
    }
    ws.list({ state: 'all', limit: 1000 }).results.forEach(add);
  }, 60_000);

  afterAll(async () => {
    if (ws) await closeWorkspace(ws);
    for (const c of cleanups) await c();
  });

  function wsSpellings(r: { ref: string; path: string; project: string }): string[] {
    const out = [r.ref, `${r.project}:${r.path}`];
    if (r.ref.startsWith(RESOURCE_URI_PREFIX)) {
      const local = r.ref.slice(RESOURCE_URI_PREFIX.length + r.project.length + 1);
      out.push(`${r.project}:${RESOURCE_URI_PREFIX}${local}`);
      out.push(RESOURCE_URI_PREFIX + r.project + '/' + local.split('/').map(encodeURIComponent).join('/'));
    } else {
      out.push(r.ref.toLowerCase(), r.ref.toUpperCase().replace(r.project.toUpperCase(), r.project));
      const n = /:BACK-(\d+(?:\.\d+)*)$/i.exec(r.ref);
      if (n) out.push(`${r.project}:${n[1]}`);
    }
    return [...new Set(out)];
  }

  it('covers every project, URIs and bare numbers', () => {
    expect(new Set(wsRefs.map((r) => r.project)).size).toBe(3);
    expect(wsRefs.some((r) => r.ref.startsWith(RESOURCE_URI_PREFIX))).toBe(true);
    expect(wsRefs.some((r) => /:BACK-\d/.test(r.ref))).toBe(true);
    expect(wsRefs.some((r) => r.also && /:BACK-\d/.test(r.ref))).toBe(true);
    // The same bare id is in two projects: only the qualified form names one.
    expect(ws.resolve('BACK-222')).toBeUndefined();
  });

  it('get accepts each spelling and names the same item', async () => {
    const sample = fc
      .constantFrom(...wsRefs)
      .chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...wsSpellings(r))));
    fc.assert(
      fc.property(sample, ([r, spelled]) => {
        const item = ws.get(spelled);
        expect(item.id, spelled).toBe(r.ref);
        expect(item.project).toBe(r.project);
        expect(item.path).toBe(r.path);
      }),
      {
        numRuns: Number(process.env.FC_RUNS ?? 300),
        seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31),
      },
    );
  });
});
