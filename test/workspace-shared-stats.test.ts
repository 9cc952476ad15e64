/**
 * `shared` workspace fusion (src/workspace/merge.ts, docs/workspace.md): each backlog's index scores with
 * the corpus statistics of every backlog in scope (N and each word's document frequency summed), on real
 * backlogs in temp dirs. Scoped to one backlog, that backlog's own statistics: its answers as alone.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { idf } from '../src/search/bm25.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';

let root: string;
let ws: Workspace;
let small: BacklogService;
const opts = { embeddings: 'none', cacheDir: false, watch: false } as const;

async function backlog(dir: string, tasks: [string, string][]): Promise<void> {
  await mkdir(join(dir, 'tasks'), { recursive: true });
  for (const [i, [title, body]] of tasks.entries()) {
    const id = `TASK-${String(i + 1).padStart(4, '0')}`;
    await writeFile(
      join(dir, 'tasks', `${id}.md`),
      `---\nid: ${id}\ntitle: ${title}\ntype: task\nstatus: open\n---\n${body}\n`,
    );
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'backlog-search-shared-'));
  // In `big` the word `zeppelin` is rare (1 of 6); in `small` every document has it.
  await backlog(join(root, 'big', 'backlog'), [
    ['Zeppelin hangar doors', 'Open the hangar doors before the airship lands.'],
    ['Invoice rounding', 'Totals drift by a cent.'],
    ['Dark theme', 'A dark colour scheme for the editor.'],
    ['Nightly backups', 'Restore the dump every morning.'],
    ['Search speed', 'Profile the ranking query.'],
    ['Login page', 'Sign in with a password.'],
  ]);
  await backlog(join(root, 'small', 'backlog'), [
    ['Zeppelin mooring', 'Moor the zeppelin at the mast.'],
    ['Zeppelin fuel', 'Refuel the zeppelin after each flight.'],
  ]);
  ws = await openWorkspace({
    ...opts,
    fusion: 'shared',
    backlogs: [{ dir: join(root, 'big', 'backlog') }, { dir: join(root, 'small', 'backlog') }],
  });
  small = await openBacklog({ ...opts, dir: join(root, 'small', 'backlog') });
}, 60_000);

afterAll(async () => {
  if (ws) await closeWorkspace(ws);
  if (small) await closeBacklog(small);
  await rm(root, { recursive: true, force: true });
});

describe('shared corpus statistics across backlogs', () => {
  it("weighs a word by every backlog in scope: the small backlog's scores times idf(8, 3) / idf(2, 2)", async () => {
    const alone = await small.searchUnified('zeppelin', { mode: 'bm25', include_scores: true });
    const all = await ws.searchUnified('zeppelin', { mode: 'bm25', include_scores: true });
    const ratio = idf(8, 3) / idf(2, 2);
    expect(alone.results).toHaveLength(2);
    for (const r of alone.results) {
      const there = all.results.find((x) => x.id === `small:${r.id}`);
      expect(there?.score).toBeCloseTo(r.score! * ratio, 3); // scores come rounded to 4 places
    }
  });

  it('scoped to one backlog, its own statistics: the same answer as that backlog alone', async () => {
    const alone = await small.searchUnified('zeppelin fuel', { mode: 'bm25', include_scores: true });
    const scoped = await ws.searchUnified('zeppelin fuel', {
      mode: 'bm25',
      include_scores: true,
      project: 'small',
    });
    expect(scoped.results.map((r) => [r.id, r.score])).toEqual(
      alone.results.map((r) => [`small:${r.id}`, r.score]),
    );
  });

  it('the general path (groups) ranks with the same statistics as the fast path', async () => {
    const fast = await ws.searchUnified('zeppelin', { mode: 'bm25', include_scores: true });
    const grouped = await ws.searchUnified('zeppelin', {
      mode: 'bm25',
      include_scores: true,
      group_by: 'type',
    });
    expect(grouped.results.map((r) => [r.id, r.score])).toEqual(fast.results.map((r) => [r.id, r.score]));
  });
});
