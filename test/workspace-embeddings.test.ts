/**
 * One embedding pool for every backlog of a workspace (docs/workspace.md, "Embeddings"), with the real
 * bundled model: two backlogs embed through one pool (the model loaded once), each keeps its own vectors,
 * both answer hybrid, and the pool is closed with the last backlog.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SharedEmbeddingPool } from '../src/embeddings/shared-pool.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';

let root: string;
let ws: Workspace;
const pool = new SharedEmbeddingPool({ provider: 'bundled' });

/** A small native backlog: a few tasks on one subject each. */
async function backlog(dir: string, tasks: Record<string, string>): Promise<void> {
  await cp(join(import.meta.dirname, '..', 'demo', 'backlog', 'README.md'), join(dir, 'README.md'));
  for (const [id, text] of Object.entries(tasks)) {
    await writeFile(
      join(dir, `${id}.md`),
      `---\nid: ${id}\ntitle: ${text}\ntype: task\nstatus: open\n---\n${text}.\n`,
    );
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'backlog-search-ws-emb-'));
  for (const name of ['kitchen', 'garage'])
    await mkdir(join(root, name, 'backlog', 'tasks'), { recursive: true });
  await backlog(join(root, 'kitchen', 'backlog', 'tasks'), {
    'TASK-0001': 'Bake sourdough bread for the weekend',
    'TASK-0002': 'Clean the oven racks',
  });
  await backlog(join(root, 'garage', 'backlog', 'tasks'), {
    'TASK-0001': 'Change the car engine oil',
    'TASK-0002': 'Pump up the bicycle tyres',
  });
  ws = await openWorkspace({
    backlogs: [{ dir: join(root, 'kitchen') }, { dir: join(root, 'garage') }],
    embeddings: 'bundled',
    embedMissing: 'wait',
    cacheDir: false,
    sharedEmbeddingPool: pool,
  });
}, 120_000);

afterAll(async () => {
  if (ws) await closeWorkspace(ws);
  await rm(root, { recursive: true, force: true });
});

it('two backlogs embed through one pool and both answer hybrid from their own vectors', async () => {
  expect(ws.names()).toEqual(['kitchen', 'garage']);
  for (const p of ws.projects) {
    await p.service.semanticReady();
    expect(p.service.semanticStatus()).toMatchObject({ provider: 'bundled', state: 'ready' });
  }
  expect(pool.starts).toBe(1);
  const res = await ws.searchUnified('baking a loaf', { mode: 'hybrid', limit: 4 });
  expect(res.search_mode).toBe('hybrid');
  expect(res.results[0].id).toBe('kitchen:TASK-0001');
  // Over several backlogs one vector share for all (the fixed 0.15), so their hybrid scores compare.
  expect(res.vector_weight).toBe(0.15);
  const garage = await ws.searchUnified('motor lubricant', { mode: 'semantic', project: 'garage', limit: 1 });
  expect(garage.results.map((r) => r.id)).toEqual(['garage:TASK-0001']);
}, 120_000);

it('the last backlog to close closes the pool; the next use starts it again', async () => {
  await closeWorkspace(ws);
  const again = await pool.acquire();
  expect(pool.starts).toBe(2);
  expect(again.embedder).not.toBeNull();
  await pool.release({});
});
