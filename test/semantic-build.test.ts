import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { workersWithin, type SemanticSearch } from '../src/embeddings/semantic-search.js';

/** More chunks than the service embeds with one worker (200), each a short task. */
const COUNT = 240;
const topics = ['login', 'billing', 'search', 'backup', 'editor', 'export', 'sync', 'email'];

let base: string;
let service: BacklogService;
const semantic = () => (service as unknown as { semantic: SemanticSearch }).semantic;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'backlog-semantic-build-'));
  await mkdir(join(base, 'tasks'), { recursive: true });
  for (let i = 1; i <= COUNT; i++) {
    const id = `TASK-${String(i).padStart(4, '0')}`;
    const topic = topics[i % topics.length];
    await writeFile(
      join(base, 'tasks', `${id}.md`),
      `---\nid: ${id}\ntitle: ${topic} issue ${i}\ntype: task\nstatus: open\n---\nThe ${topic} part fails in case ${i}.\n`,
    );
  }
  service = await openBacklog({
    dir: base,
    cacheDir: join(base, '.cache'),
    embeddings: 'bundled',
    embedMissing: 'wait',
    embeddingWorkers: 2,
  });
}, 180_000);

afterAll(async () => {
  await closeBacklog(service);
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

describe('the initial embedding of a large backlog', () => {
  it('embeds every chunk, then keeps one worker and a compacted vector index', async () => {
    expect(service.semanticStatus()).toMatchObject({
      provider: 'bundled',
      state: 'ready',
      done: COUNT,
      total: COUNT,
      buildWorkers: 2,
    });
    const memory = await semantic().memory();
    expect(memory.workers).toHaveLength(1);
    // COUNT rows of 512 floats and a sixteenth to spare (in 64 KB WebAssembly pages), not the room for
    // 1024 rows a VectorIndex starts with.
    expect(memory.vectorIndexBytes).toBeLessThan(COUNT * 1.1 * 512 * 4 + 65536);
    // The cache holds int8 vectors in memory: about a quarter of Float32.
    expect(memory.cacheBytes).toBeLessThan(COUNT * 512 * 2);
  });

  it('answers hybrid queries and takes edits with the one worker left', async () => {
    const res = await service.searchUnified('payments and invoices', { mode: 'semantic', limit: 5 });
    expect(res.search_mode).toBe('semantic');
    expect(res.results.length).toBe(5);
    await writeFile(
      join(base, 'tasks', 'TASK-0001.md'),
      `---\nid: TASK-0001\ntitle: refund flow\ntype: task\nstatus: open\n---\nCustomers want their money back.\n`,
    );
    await service.applyFile('tasks/TASK-0001.md');
    await semantic().flush(); // the re-embedding runs behind applyFile
    const after = await service.searchUnified('give customers their money back', { mode: 'semantic' });
    expect(after.results.map((r) => r.id)).toContain('TASK-0001');
  });
});

describe('the memory budget of the initial embedding', () => {
  it('projects the peak: the first worker grows, each further one costs more than a loaded worker', () => {
    // 200 MB with the first worker (100 MB) loaded: 1 worker peaks at 300, 2 at 460.
    expect(workersWithin(459, 200, 100, 2)).toBe(1);
    expect(workersWithin(460, 200, 100, 2)).toBe(2);
    expect(workersWithin(10_000, 200, 100, 1)).toBe(1);
    expect(workersWithin(10_000, 200, 100, 4)).toBe(4);
    expect(workersWithin(1, 200, 100, 2)).toBe(1);
  });

  it('embeds on one worker when a second would not fit, and says why', async () => {
    const budgeted = await openBacklog({
      dir: base,
      cacheDir: join(base, '.cache-budget'),
      embeddings: 'bundled',
      embedMissing: 'wait',
      memoryBudgetMb: 1,
    });
    try {
      const status = budgeted.semanticStatus();
      expect(status).toMatchObject({ state: 'ready', done: COUNT, buildWorkers: 1 });
      // With one core there is no second to decline, and no note.
      if (availableParallelism() > 1)
        expect(status.buildNote).toMatch(
          /embedding on 1 worker: with 2 the build would peak at about \d+ MB, over the memory budget of 1 MB/,
        );
    } finally {
      await closeBacklog(budgeted);
    }
  }, 180_000);

  it('rejects a budget that is not a number of megabytes, where it would decide something', async () => {
    await expect(
      openBacklog({ dir: base, cacheDir: false, embeddings: 'bundled', memoryBudgetMb: -5 }),
    ).rejects.toMatchObject({
      code: 'INVALID_FILTER',
      details: { field: 'memoryBudgetMb' },
    });
    process.env.BACKLOG_MEMORY_MB = 'lots';
    try {
      await expect(openBacklog({ dir: base, cacheDir: false, embeddings: 'bundled' })).rejects.toMatchObject({
        code: 'INVALID_FILTER',
        details: { field: 'BACKLOG_MEMORY_MB' },
      });
      // Without embeddings (get, list) the budget decides nothing and is not read.
      const lexical = await openBacklog({ dir: base, cacheDir: false, embeddings: 'none' });
      expect(lexical.list({ limit: 1 }).total).toBe(COUNT);
      await closeBacklog(lexical);
    } finally {
      delete process.env.BACKLOG_MEMORY_MB;
    }
  });
});
