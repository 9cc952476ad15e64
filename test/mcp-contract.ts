/**
 * The MCP contract, run against a real server over a real transport (stdio and Streamable HTTP use
 * the same suite): every tool, every error code we can produce, unknown arguments and aliases,
 * search -> get -> metadata speed, parity with in-process searchUnified, resources.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ResourceListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { BacklogService } from '../src/service/backlog-service.js';

export interface ContractContext {
  client: () => Client;
  /** The backlog folder the server serves (a temp copy of the demo backlog). */
  dir: () => string;
  /** An in-process service over the same folder, opened before any write. */
  reference: () => BacklogService;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool results are checked field by field
type Structured = Record<string, any>;

const READ_TOOLS = new Set(['backlog_search', 'backlog_get', 'backlog_get_metadata', 'backlog_list']);

/**
 * Calls a tool and checks the shape of every answer: one text block; `structuredContent` on errors,
 * writes and `detailed` reads (with its JSON as the text), none on `concise` reads. Read tools are
 * called `detailed` unless `args` says otherwise, so tests can look at every field.
 */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ok: boolean; data: Structured; text: string; raw: CallToolResult }> {
  const detailed = READ_TOOLS.has(name) && !('response_format' in args);
  const sent = detailed ? { ...args, response_format: 'detailed' } : args;
  const raw = (await client.callTool({ name, arguments: sent })) as CallToolResult;
  const text = raw.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  expect(raw.content).toHaveLength(1);
  const concise = READ_TOOLS.has(name) && sent.response_format === 'concise';
  if (concise && !raw.isError) {
    expect(raw.structuredContent).toBeUndefined();
    return { ok: true, data: { status: 'ok' }, text, raw };
  }
  expect(raw.structuredContent).toBeDefined();
  const data = raw.structuredContent as Structured;
  expect(data.status).toBe(raw.isError ? 'error' : 'ok');
  if (detailed && !raw.isError) expect(JSON.parse(text)).toEqual(data);
  return { ok: !raw.isError, data, text, raw };
}

/** The concise text answer of a read tool. */
export async function concise(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const r = await call(client, name, { ...args, response_format: 'concise' });
  expect(r.ok, r.text).toBe(true);
  return r.text;
}

export async function expectError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  code: string,
): Promise<Structured> {
  const r = await call(client, name, args);
  expect(
    r.ok,
    `${name} ${JSON.stringify(args)} should fail with ${code}, got ${JSON.stringify(r.data).slice(0, 300)}`,
  ).toBe(false);
  expect(r.raw.isError).toBe(true);
  expect(r.data.error.code).toBe(code);
  expect(r.data.error.message).toEqual(expect.any(String));
  expect(r.data.error.hint).toEqual(expect.any(String));
  expect(r.data.error.hint.length).toBeGreaterThan(5);
  expect(r.text).toContain(code);
  return r.data.error;
}

/** >= 20 searches with varied options, compared with searchUnified in process. */
export const PARITY_QUERIES: Array<Record<string, unknown>> = [
  { query: 'login' },
  { query: 'rate limit', limit: 5 },
  { query: 'sync', sort: 'recent' },
  { query: 'sync', status: 'open' },
  { query: 'sync offline', conjunctive: true },
  { query: 'billing invoice', types: ['task'] },
  { query: 'search', parent_id: 'EPIC-0003' },
  { query: 'auth', tags: ['security'] },
  { query: 'database', types: 'resource' },
  { query: 'failover', folder: 'resources/runbooks' },
  { query: 'decision', path: 'resources/adr/*.md' },
  { query: 'flags', file_type: 'json' },
  { query: 'mobile', offset: 2, limit: 3 },
  { query: 'TASK-0001' },
  { query: 'webhook signature' },
  { query: 'push notifications android' },
  { query: 'crdt', include_scores: true },
  { query: 'token', include_content: true, limit: 3 },
  { query: 'api', status: ['open', 'in_progress'] },
  { query: 'sync', author: 'Boris Ivanov' },
  { query: 'passkeys second factor' },
  { query: 'the', limit: 100 },
  { query: 'sync', mode: 'hybrid' },
  { query: 'stripe', types: 'task,resource', sort: 'recent', limit: 4 },
];

export function defineContract(ctx: ContractContext): void {
  it('parity: backlog_search and in-process searchUnified return the same ids in the same order', async () => {
    for (const q of PARITY_QUERIES) {
      const { query, ...options } = q;
      const local = await ctx.reference().searchUnified(query as string, options);
      const remote = await call(ctx.client(), 'backlog_search', q);
      expect(remote.ok, JSON.stringify(q)).toBe(true);
      expect(
        remote.data.results.map((r: { id: string }) => r.id),
        JSON.stringify(q),
      ).toEqual(local.results.map((r) => r.id));
      expect(remote.data.total).toBe(local.total);
      expect(remote.data.next_offset).toBe(local.next_offset);
      expect(remote.data.search_mode).toBe(local.search_mode);
    }
    expect(PARITY_QUERIES.length).toBeGreaterThanOrEqual(20);
  });

  it('lists the eight tools with schemas and annotations', async () => {
    const { tools } = await ctx.client().listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'backlog_create',
      'backlog_delete',
      'backlog_get',
      'backlog_get_metadata',
      'backlog_list',
      'backlog_search',
      'backlog_update',
      'backlog_write_resource',
    ]);
    for (const t of tools) {
      expect(t.title).toEqual(expect.any(String));
      expect(t.description!.length).toBeGreaterThan(40);
      expect(t.outputSchema).toBeUndefined(); // with one, every answer would have to carry structuredContent
      expect(t.inputSchema.additionalProperties).toBe(false);
      expect(t.inputSchema).not.toHaveProperty('$schema');
      if (READ_TOOLS.has(t.name))
        expect(t.inputSchema.properties!.response_format).toMatchObject({ enum: ['concise', 'detailed'] });
      expect(t.annotations?.openWorldHint).toBe(false);
    }
    const search = byName.backlog_search;
    expect(Object.keys(search.inputSchema.properties!)).toEqual(
      expect.arrayContaining([
        'query',
        'types',
        'status',
        'parent_id',
        'tags',
        'author',
        'path',
        'folder',
        'file_type',
        'sort',
        'limit',
        'offset',
        'mode',
        'conjunctive',
        'include_content',
        'include_scores',
      ]),
    );
    expect(search.inputSchema.required).toEqual(['query']);
    expect(search.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(byName.backlog_delete.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.backlog_update.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.backlog_create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });

  it('search -> get -> metadata on the demo backlog in under 1 s', async () => {
    const client = ctx.client();
    const started = performance.now();
    const search = await call(client, 'backlog_search', { query: 'login rate limit', limit: 5 });
    const first = search.data.results[0];
    const get = await call(client, 'backlog_get', { ids: first.id });
    const meta = await call(client, 'backlog_get_metadata', { id: first.id });
    const elapsed = performance.now() - started;
    expect(first.id).toBe('TASK-0001');
    expect(get.data.items[0].item.content).toContain('rate-limit');
    expect(meta.data.metadata.path).toBe(first.path);
    expect(elapsed).toBeLessThan(1000);
  });

  it('backlog_search: results with snippets, text one line per hit, paging, content capped only on request', async () => {
    const r = await call(ctx.client(), 'backlog_search', { query: 'sync', limit: 3 });
    expect(r.data).toMatchObject({ status: 'ok', query: 'sync', search_mode: 'bm25', next_offset: 3 });
    expect(r.data.results).toHaveLength(3);
    for (const hit of r.data.results) {
      expect(hit).toMatchObject({
        id: expect.any(String),
        title: expect.any(String),
        path: expect.any(String),
        snippet: { text: expect.any(String) },
      });
      expect(hit.content).toBeUndefined();
    }
    const lines = (await concise(ctx.client(), 'backlog_search', { query: 'sync', limit: 3 })).split('\n');
    expect(lines).toHaveLength(1 + 3);
    expect(lines[0]).toMatch(/^\d+ results for "sync" \(1-3\), bm25, next_offset 3$/);
    for (const [i, hit] of r.data.results.entries()) {
      const label = !hit.status ? hit.type : hit.type === 'task' ? hit.status : `${hit.type}/${hit.status}`;
      expect(lines[i + 1].startsWith(`${hit.id} [${label}] ${hit.title}`), lines[i + 1]).toBe(true);
    }
    expect(await concise(ctx.client(), 'backlog_search', { query: 'qwxzzynothing' })).toBe(
      'No results for "qwxzzynothing" (bm25).',
    );
    expect(await concise(ctx.client(), 'backlog_search', { query: 'dtaabsae' })).toBe(
      'No results for "dtaabsae" (bm25). Did you mean "database"?',
    );

    const withContent = await call(ctx.client(), 'backlog_search', {
      query: 'sync engine design',
      include_content: true,
      limit: 5,
    });
    for (const hit of withContent.data.results) {
      expect(hit.content.length).toBeLessThanOrEqual(4000);
      expect(hit.content_length).toBeGreaterThanOrEqual(hit.content.length);
      expect(hit.truncated).toBe(hit.content_length > 4000);
    }
    const big = 'lorem ipsum dolor '.repeat(600); // ~10,800 characters
    await call(ctx.client(), 'backlog_write_resource', {
      path: 'resources/big-notes.md',
      content: `# Big notes\n\nzyzzyvaword ${big}`,
    });
    const cut = await call(ctx.client(), 'backlog_search', { query: 'zyzzyvaword', include_content: true });
    expect(cut.data.results[0]).toMatchObject({ truncated: true });
    expect(cut.data.results[0].content).toHaveLength(4000);
    expect(cut.data.results[0].content_length).toBeGreaterThan(10_000);

    const warned = await call(ctx.client(), 'backlog_search', { query: 'sync', mode: 'semantic' });
    expect(warned.data.warnings?.[0]).toMatch(/embeddings/);
    expect(await concise(ctx.client(), 'backlog_search', { query: 'sync', mode: 'semantic' })).toContain(
      'warning:',
    );
  });

  it('aliases: q, top_k, max_results, type and comma-separated lists are accepted', async () => {
    const canonical = await call(ctx.client(), 'backlog_search', {
      query: 'sync',
      limit: 4,
      status: ['open', 'in_progress'],
      types: ['task'],
    });
    const aliased = await call(ctx.client(), 'backlog_search', {
      q: 'sync',
      top_k: 4,
      status: 'open, in_progress',
      type: 'task',
    });
    const maxResults = await call(ctx.client(), 'backlog_search', {
      query: 'sync',
      max_results: 4,
      status: 'open,in_progress',
      types: 'task',
    });
    const ids = (r: Structured) => r.results.map((x: { id: string }) => x.id);
    expect(ids(aliased.data)).toEqual(ids(canonical.data));
    expect(ids(maxResults.data)).toEqual(ids(canonical.data));
    expect(canonical.data.results).toHaveLength(4);
    const nulls = await call(ctx.client(), 'backlog_search', { query: 'sync', status: null, limit: 4 });
    expect(nulls.ok).toBe(true);
    const get = await call(ctx.client(), 'backlog_get', { id: 'TASK-0002' });
    expect(get.data.items[0].item.id).toBe('TASK-0002');
  });

  it('unknown arguments are rejected with a hint naming the right one', async () => {
    const typo = await expectError(
      ctx.client(),
      'backlog_search',
      { query: 'sync', limt: 5 },
      'INVALID_FILTER',
    );
    expect(typo.message).toContain('limt');
    expect(typo.hint).toBe('Did you mean "limit"?');
    const unknown = await expectError(
      ctx.client(),
      'backlog_search',
      { query: 'sync', fuzzy: true },
      'INVALID_FILTER',
    );
    expect(unknown.hint).toContain('Known options');
    const both = await expectError(
      ctx.client(),
      'backlog_search',
      { query: 'sync', q: 'login' },
      'INVALID_FILTER',
    );
    expect(both.hint).toContain('query');
    const onGet = await expectError(
      ctx.client(),
      'backlog_get',
      { ids: 'TASK-0001', format: 'json' },
      'INVALID_FILTER',
    );
    expect(onGet.message).toContain('format');
    const onCreate = await expectError(
      ctx.client(),
      'backlog_create',
      { title: 'x', labls: ['a'] },
      'INVALID_FILTER',
    );
    expect(onCreate.message).toContain('labls');
    const onList = await expectError(ctx.client(), 'backlog_list', { statuss: 'open' }, 'INVALID_FILTER');
    expect(onList.hint).toContain('status');
  });

  it('every error code we can produce', async () => {
    const c = ctx.client();
    const syntax = await expectError(
      c,
      'backlog_search',
      { query: '(sync', match_mode: 'raw' },
      'QUERY_SYNTAX',
    );
    expect(syntax.message).toEqual(expect.any(String));
    const format = await expectError(
      c,
      'backlog_search',
      { query: 'sync', response_format: 'json' },
      'INVALID_FILTER',
    );
    expect(format.hint).toContain('detailed');
    await expectError(c, 'backlog_search', { query: '   ' }, 'INVALID_QUERY');
    await expectError(c, 'backlog_search', {}, 'INVALID_QUERY');
    await expectError(c, 'backlog_search', { query: 'x'.repeat(2001) }, 'INVALID_QUERY');
    const status = await expectError(c, 'backlog_search', { query: 'sync', status: 'wip' }, 'INVALID_FILTER');
    expect(status.field).toBe('status');
    await expectError(c, 'backlog_search', { query: 'sync', limit: 1000 }, 'INVALID_FILTER');
    await expectError(c, 'backlog_list', { parent_id: 'EPIC-9999' }, 'INVALID_FILTER');
    await expectError(c, 'backlog_get', { ids: 'TASK-9999' }, 'NOT_FOUND');
    await expectError(c, 'backlog_get_metadata', { id: 'nope/missing.md' }, 'NOT_FOUND');
    await expectError(c, 'backlog_update', { id: 'TASK-9999', status: 'done' }, 'NOT_FOUND');
    await expectError(c, 'backlog_delete', { id: 'TASK-9999' }, 'NOT_FOUND');
    await expectError(
      c,
      'backlog_write_resource',
      { path: 'resources/missing.md', content: 'x', mode: 'append' },
      'NOT_FOUND',
    );
    await expectError(c, 'backlog_delete', { id: 'EPIC-0002' }, 'CONFLICT');
    await expectError(c, 'backlog_write_resource', { path: 'README.md', content: 'x' }, 'CONFLICT');
    // INTERNAL: a failure we did not plan for; here the task's file was replaced by a folder behind our back.
    const victim = ctx.reference().get('TASK-0036');
    await rm(join(ctx.dir(), victim.path));
    await mkdir(join(ctx.dir(), victim.path));
    const internal = await expectError(c, 'backlog_update', { id: 'TASK-0036', status: 'done' }, 'INTERNAL');
    expect(internal.message).toContain('EISDIR');
  });

  it('backlog_get: one id, a batch with a NOT_FOUND entry, content windows', async () => {
    const batch = await call(ctx.client(), 'backlog_get', {
      ids: [
        'TASK-0005',
        'TASK-9999',
        'mcp://backlog/resources/glossary.txt',
        'resources/adr/0001-crdt-for-note-sync.md',
      ],
    });
    expect(batch.ok).toBe(true);
    expect(batch.data).toMatchObject({ found: 3, missing: 1 });
    expect(batch.data.items.map((e: { status: string }) => e.status)).toEqual(['ok', 'error', 'ok', 'ok']);
    expect(batch.data.items[1].error.code).toBe('NOT_FOUND');
    expect(batch.data.items[0].item).toMatchObject({
      id: 'TASK-0005',
      type: 'task',
      uri: expect.stringMatching(/^mcp:\/\/backlog\/tasks\//),
      truncated: false,
    });
    const batchText = await concise(ctx.client(), 'backlog_get', { ids: ['TASK-0005', 'TASK-9999'] });
    expect(batchText).toContain('TASK-9999: error NOT_FOUND');
    // The content once, whole, under a head line and a line of facts.
    const body = batch.data.items[0].item.content.trim();
    expect(batchText.split(body)).toHaveLength(2);
    expect(batchText).toMatch(/^TASK-0005 \[\w+\] .+\npath: tasks\/TASK-0005-/);
    const part = await call(ctx.client(), 'backlog_get', { ids: 'TASK-0001', max_chars: 100 });
    const item = part.data.items[0].item;
    expect(item).toMatchObject({ truncated: true, next_content_offset: 100 });
    expect(item.content).toHaveLength(100);
    const rest = await call(ctx.client(), 'backlog_get', { ids: 'TASK-0001', content_offset: 100 });
    expect(item.content + rest.data.items[0].item.content).toHaveLength(item.content_length);
  });

  it('backlog_get_metadata: every field present, missing ones null', async () => {
    const task = await call(ctx.client(), 'backlog_get_metadata', { id: 'TASK-0001' });
    expect(task.data.metadata).toMatchObject({
      id: 'TASK-0001',
      type: 'task',
      file_name: 'TASK-0001-login-rate-limit.md',
      file_type: 'md',
      links: { parent: 'EPIC-0001' },
    });
    expect(task.data.metadata.links.children).toContain('TASK-0003');
    expect(task.data.metadata.size).toBeGreaterThan(0);
    const res = await call(ctx.client(), 'backlog_get_metadata', { id: 'resources/glossary.txt' });
    const md = res.data.metadata;
    for (const key of ['status', 'parent_id', 'author', 'assignee', 'priority', 'created_at', 'updated_at'])
      expect(md[key], key).toBeNull();
    expect(md.links).toEqual({ parent: null, children: [], references: [] });
    expect(md.modified_at).toEqual(expect.any(String));
    expect(md.indexed_at).toEqual(expect.any(String));
  });

  it('backlog_list: filters and counts by status', async () => {
    const r = await call(ctx.client(), 'backlog_list', { types: 'task', parent_id: 'EPIC-0002', sort: 'id' });
    expect(r.data.total).toBeGreaterThan(2);
    expect(Object.values(r.data.counts_by_status as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(
      r.data.total,
    );
    expect(r.data.results.every((x: { type: string }) => x.type === 'task')).toBe(true);
    const text = await concise(ctx.client(), 'backlog_list', { types: 'task', parent_id: 'EPIC-0002' });
    expect(text.split('\n')).toHaveLength(1 + r.data.results.length);
    expect(await concise(ctx.client(), 'backlog_list', { tags: 'auth', status: 'cancelled' })).toBe(
      'No items match these filters.',
    );
  });

  it('backlog_create / backlog_update / backlog_delete: written, indexed before returning, strict', async () => {
    const c = ctx.client();
    const created = await call(c, 'backlog_create', {
      title: 'Throttle password reset emails',
      parent_id: 'EPIC-0001',
      tags: 'auth, email',
      priority: 'high',
      body: '## Context\n\nReset mails can be sent without limit: aardvarkword.',
    });
    expect(created.ok).toBe(true);
    const id = created.data.id as string;
    expect(id).toMatch(/^TASK-\d{4}$/);
    expect(created.data.path).toBe(`tasks/${id}-throttle-password-reset-emails.md`);
    const file = await readFile(join(ctx.dir(), created.data.path), 'utf8');
    expect(file).toMatch(
      new RegExp(
        `^---\\nid: ${id}\\ntitle: Throttle password reset emails\\ntype: task\\nstatus: open\\nparent_id: EPIC-0001\\n`,
      ),
    );
    expect(file).toContain('updated_at:');
    const found = await call(c, 'backlog_search', { query: 'aardvarkword' });
    expect(found.data.results.map((r: { id: string }) => r.id)).toEqual([id]);

    const epic = await call(c, 'backlog_create', { type: 'epic', title: 'Email deliverability' });
    expect(epic.data.id).toMatch(/^EPIC-\d{4}$/);

    const before = created.data.item.updated_at as string;
    const updated = await call(c, 'backlog_update', {
      id,
      status: 'in_progress',
      parent_id: epic.data.id,
      append: 'Decided: 3 mails per hour.',
      fields: { milestone: 'v2' },
      expected_updated_at: before,
    });
    expect(updated.ok).toBe(true);
    expect(updated.data.item).toMatchObject({ status: 'in_progress', parent_id: epic.data.id });
    expect(updated.data.item.updated_at).not.toBe(before);
    const stale = await expectError(
      c,
      'backlog_update',
      { id, status: 'done', expected_updated_at: before },
      'CONFLICT',
    );
    expect(stale.field).toBe('expected_updated_at');
    const edited = await call(c, 'backlog_update', {
      id,
      old_string: '3 mails per hour',
      new_string: '5 mails per hour',
    });
    expect(edited.data.replacements).toBe(1);
    await expectError(
      c,
      'backlog_update',
      { id, old_string: 'not in the body', new_string: 'x' },
      'CONFLICT',
    );
    const bad = await expectError(c, 'backlog_update', { id, status: 'wip' }, 'INVALID_FILTER');
    expect(bad.field).toBe('status');
    expect(bad.hint).toContain('in_progress');
    const cycle = await expectError(
      c,
      'backlog_update',
      { id: epic.data.id, parent_id: id },
      'INVALID_FILTER',
    );
    expect(cycle.message).toContain('cycle');
    await expectError(c, 'backlog_update', { id, body: 'x', append: 'y' }, 'INVALID_FILTER');
    await expectError(
      c,
      'backlog_update',
      { id: 'resources/glossary.txt', status: 'done' },
      'INVALID_FILTER',
    );
    const text = await readFile(join(ctx.dir(), updated.data.path), 'utf8');
    expect(text).toContain('5 mails per hour');
    expect(text).toContain('milestone: v2');
    expect(
      (await call(c, 'backlog_search', { query: 'mails per hour', status: 'in_progress' })).data.results[0]
        .id,
    ).toBe(id);

    await expectError(c, 'backlog_delete', { id: epic.data.id }, 'CONFLICT');
    const forced = await call(c, 'backlog_delete', { id: epic.data.id, force: true });
    expect(forced.data).toMatchObject({ action: 'deleted', orphaned: [id], item: null });
    const deleted = await call(c, 'backlog_delete', { id });
    expect(deleted.data.action).toBe('deleted');
    await expect(stat(join(ctx.dir(), created.data.path))).rejects.toThrow();
    expect((await call(c, 'backlog_search', { query: 'aardvarkword' })).data.total).toBe(0);
    await expectError(c, 'backlog_get', { ids: id }, 'NOT_FOUND');
  });

  it('backlog_update never writes a file whose frontmatter does not fit, and says which field to pass', async () => {
    const c = ctx.client();
    const path = join(ctx.dir(), ctx.reference().get('TASK-0035').path);
    const original = await readFile(path, 'utf8');
    const handEdited = original.replace(/^status: .*$/m, 'status: wip');
    await writeFile(path, handEdited);
    const e = await expectError(c, 'backlog_update', { id: 'TASK-0035', priority: 'low' }, 'INVALID_FILTER');
    expect(e).toMatchObject({ field: 'status' });
    expect(e.message).toContain("the file's status");
    expect(e.hint).toContain('Pass status');
    expect(await readFile(path, 'utf8')).toBe(handEdited);
    const fixed = await call(c, 'backlog_update', { id: 'TASK-0035', priority: 'low', status: 'open' });
    expect(fixed.data.item).toMatchObject({ status: 'open' });
    const text = await readFile(path, 'utf8');
    expect(text).toMatch(/^status: open$/m);
    expect(text).toMatch(/^priority: low$/m);
    // The body is kept byte for byte.
    expect(text.slice(text.indexOf('\n---\n') + 5)).toBe(original.slice(original.indexOf('\n---\n') + 5));
  });

  it('backlog_write_resource: create, append, replace, overwrite; paths stay inside the root', async () => {
    const c = ctx.client();
    const path = 'resources/notes/retro.md';
    const created = await call(c, 'backlog_write_resource', {
      path,
      content: '# Retro\n\nWent well: pangolinword.',
    });
    expect(created.data).toMatchObject({ action: 'created', id: `mcp://backlog/${path}`, path });
    expect((await call(c, 'backlog_search', { query: 'pangolinword' })).data.results[0].id).toBe(
      `mcp://backlog/${path}`,
    );
    await call(c, 'backlog_write_resource', { path, mode: 'append', content: 'To improve: narwhalword.' });
    const replaced = await call(c, 'backlog_write_resource', {
      path,
      old_string: 'narwhalword',
      new_string: 'okapiword',
    });
    expect(replaced.data).toMatchObject({ action: 'replaced', replacements: 1 });
    expect(await readFile(join(ctx.dir(), path), 'utf8')).toBe(
      '# Retro\n\nWent well: pangolinword.\nTo improve: okapiword.',
    );
    expect((await call(c, 'backlog_search', { query: 'okapiword' })).data.total).toBe(1);
    expect((await call(c, 'backlog_search', { query: 'narwhalword' })).data.total).toBe(0);
    await expectError(
      c,
      'backlog_write_resource',
      { path, old_string: 'absentword', new_string: 'x' },
      'CONFLICT',
    );
    await call(c, 'backlog_write_resource', { path, mode: 'append', content: 'okapiword again' });
    const ambiguous = await expectError(
      c,
      'backlog_write_resource',
      { path, old_string: 'okapiword', new_string: 'x' },
      'CONFLICT',
    );
    expect(ambiguous.hint).toContain('replace_all');
    const over = await call(c, 'backlog_write_resource', { path, mode: 'overwrite', content: 'short' });
    expect(over.data.action).toBe('overwritten');
    // Outside the root, or in a folder that is not part of the backlog: FORBIDDEN_PATH (#14, #16).
    for (const bad of [
      '../outside.md',
      '/etc/passwd.md',
      'resources/../../x.md',
      '.git/config.md',
      'resources/.hidden/x.md',
    ]) {
      const e = await expectError(c, 'backlog_write_resource', { path: bad, content: 'x' }, 'FORBIDDEN_PATH');
      expect(e.field, bad).toBe('path');
    }
    // Inside the root but not a resource this tool writes: INVALID_FILTER naming the path.
    for (const bad of ['tasks/TASK-0999-x.md', 'resources/image.png']) {
      const e = await expectError(c, 'backlog_write_resource', { path: bad, content: 'x' }, 'INVALID_FILTER');
      expect(e.field, bad).toBe('path');
    }
    await expect(stat(join(ctx.dir(), '..', 'outside.md'))).rejects.toThrow();
    const del = await call(c, 'backlog_delete', { id: path });
    expect(del.data.action).toBe('deleted');
  });

  it('resources: list and read tasks and documents; list_changed after a write', async () => {
    const c = ctx.client();
    const { resources } = await c.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain('mcp://backlog/tasks/TASK-0001-login-rate-limit.md');
    expect(uris).toContain('mcp://backlog/resources/glossary.txt');
    const task = resources.find((r) => r.uri.endsWith('TASK-0001-login-rate-limit.md'))!;
    expect(task).toMatchObject({ name: 'TASK-0001', mimeType: 'text/markdown' });
    const read = await c.readResource({ uri: task.uri });
    expect((read.contents[0] as { text: string }).text).toMatch(/^---\nid: TASK-0001/);
    const byId = await c.readResource({ uri: 'mcp://backlog/TASK-0001' });
    expect((byId.contents[0] as { text: string }).text).toBe((read.contents[0] as { text: string }).text);
    const json = await c.readResource({ uri: 'mcp://backlog/resources/config/feature-flags.json' });
    expect(json.contents[0].mimeType).toBe('application/json');
    await expect(c.readResource({ uri: 'mcp://backlog/resources/nope.md' })).rejects.toThrow(/not found/i);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('mcp://backlog/{+path}');

    let notified = 0;
    c.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      notified++;
    });
    const created = await call(c, 'backlog_create', { title: 'Notify me' });
    const deadline = Date.now() + 2000;
    while (!notified && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(notified).toBeGreaterThan(0);
    expect((await c.listResources()).resources.map((r) => r.uri)).toContain(
      `mcp://backlog/${created.data.path}`,
    );
  });
}
