/**
 * The judged dev set in a workspace (docs/workspace.md, issue #22): the Backlog.md folder alone, against
 * the same folder opened together with the demo backlog and the Backlog.md fixture of test/fixtures, with
 * `project` set to the Backlog.md folder and without it, for each way of comparing scores across
 * backlogs (merge.ts: `bound`, `shared`, `rrf`), each with every copy a result (`versions: 'apart'`), and
 * `bound` and `shared` with versions of one document shown once (`versions: 'once'`, the default). A result of another project never counts as relevant, even where it is a copy of
 * a judged file (the fixture holds excerpts of the same folder).
 *
 *   nice npx tsx bench/workspace-devset.ts [--per-query]
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/index.js';
import { closeWorkspace, openWorkspace } from '../src/workspace/open-workspace.js';
import type { Workspace } from '../src/workspace/workspace.js';
import { WORKSPACE_FUSIONS, type WorkspaceVersions } from '../src/workspace/merge.js';
import { backlogCopy, loadDevset } from './devset/corpus.js';
import { runSystem, type SystemResult } from './devset/eval.js';
import { ourSystem, type DevsetSystem } from './devset/systems.js';
import { ROOT } from './common.js';

/**
 * `copies: 'original'`: a result of another project at a judged path counts as that file, once (the
 * fixture's verbatim copies); otherwise another project's result is never relevant.
 */
function workspaceSystem(
  name: string,
  ws: Workspace,
  home: string,
  project?: string,
  copies: 'other' | 'original' = 'other',
): DevsetSystem {
  return {
    name,
    async search(q, k) {
      const res = await ws.searchUnified(q.text, { ...(q.options ?? {}), mode: 'bm25', limit: k, project });
      const paths = res.results.map((r) => {
        const p = (r as { project?: string }).project;
        return p === home || copies === 'original' ? r.path : `${p}/${r.path}`;
      });
      return paths.map((path, i) => (paths.indexOf(path) < i ? `duplicate/${i}` : path));
    },
  };
}

async function main(): Promise<void> {
  const perQuery = process.argv.includes('--per-query');
  const devset = await loadDevset();
  const copy = await backlogCopy();
  const others = await mkdtemp(join(tmpdir(), 'backlog-search-ws-devset-'));
  await cp(join(ROOT, 'demo', 'backlog'), join(others, 'demo', 'backlog'), { recursive: true });
  await cp(join(ROOT, 'test', 'fixtures', 'backlog-md'), join(others, 'fixture', 'backlog'), {
    recursive: true,
  });
  const results: SystemResult[] = [];
  try {
    const alone = await openBacklog({ dir: copy.dir, embeddings: 'none', cacheDir: false });
    await alone.index.warmedUp();
    results.push(await runSystem(devset, ourSystem('alone', alone, 'bm25')));
    await closeBacklog(alone);
    const runs: Array<[(typeof WORKSPACE_FUSIONS)[number], WorkspaceVersions]> = [
      ...WORKSPACE_FUSIONS.map(
        (f) => [f, 'apart'] as [(typeof WORKSPACE_FUSIONS)[number], WorkspaceVersions],
      ),
      ['bound', 'once'],
      ['shared', 'once'],
    ];
    for (const [fusion, versions] of runs) {
      const label = `${fusion}, versions ${versions}`;
      const ws = await openWorkspace({
        backlogs: [
          { dir: copy.dir },
          { dir: join(others, 'demo', 'backlog') },
          { dir: join(others, 'fixture', 'backlog') },
        ],
        embeddings: 'none',
        cacheDir: false,
        fusion,
        versions,
      });
      for (const p of ws.projects) await p.service.index.warmedUp();
      const home = ws.projects[0].name;
      if (fusion === WORKSPACE_FUSIONS[0] && versions === 'apart')
        process.stderr.write(
          `projects: ${ws.projects.map((p) => `${p.name} (${p.service.size} items)`).join(', ')}\n`,
        );
      results.push(await runSystem(devset, workspaceSystem(`${label}, project=${home}`, ws, home, home)));
      results.push(await runSystem(devset, workspaceSystem(`${label}, all projects`, ws, home)));
      results.push(
        await runSystem(
          devset,
          workspaceSystem(
            `${label}, all projects, a copy counts as its original`,
            ws,
            home,
            undefined,
            'original',
          ),
        ),
      );
      await closeWorkspace(ws);
    }
  } finally {
    await copy.cleanup();
    await rm(others, { recursive: true, force: true });
  }
  const base = results[0].overall.ndcg_at_10;
  process.stdout.write(
    '| system | nDCG@10 | Δ vs alone | Recall@10 | MRR@10 | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.system} | ${r.overall.ndcg_at_10.toFixed(4)} | ${(r.overall.ndcg_at_10 - base).toFixed(4)} | ${r.overall.recall_at_10.toFixed(4)} | ${r.overall.mrr_at_10.toFixed(4)} | ${r.p50_ms.toFixed(2)} | ${r.p95_ms.toFixed(2)} |\n`,
    );
  if (perQuery)
    for (const q of devset.queries) {
      const scores = results.map((r) => (r.per_query[q.id] ?? 0).toFixed(3));
      if (new Set(scores).size > 1) process.stdout.write(`${q.id}\t${scores.join('\t')}\t${q.text}\n`);
    }
}

await main();
