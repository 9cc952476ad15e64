/**
 * A long-lived process (`embedMissing: 'background'`, a server's) loads the model gate's language
 * detector in its worker once hybrid search is ready, so that its first query the vocabulary cannot settle
 * does not wait for eld's load; `wait` (the `index` command) and `never` (a one-shot search) never do. Each
 * case is a process of its own (the detector's state is per process), with the real bundled model on a
 * small backlog, and must end by itself: the detector's worker never holds it open.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

let base: string;
let scripts: string;
let scriptCount = 0;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'backlog-gate-'));
  scripts = await mkdtemp(join(tmpdir(), 'backlog-gate-scripts-'));
  await mkdir(join(base, 'tasks'), { recursive: true });
  const tasks = ['Fix login timeout', 'Board view on Windows', 'Offline sync of tasks'];
  for (const [i, title] of tasks.entries())
    await writeFile(
      join(base, 'tasks', `task-${i + 1}.md`),
      `---\nid: TASK-${i + 1}\ntitle: ${title}\nstatus: open\n---\n${title}: the details.\n`,
    );
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  await rm(scripts, { recursive: true, force: true });
});

const src = (file: string) => JSON.stringify(new URL(`../src/${file}`, import.meta.url).href);

/** Runs `body` (an async script with `openBacklog`, `closeBacklog`, `state`, `dir` in scope) and parses its last line. */
async function script(body: string): Promise<Record<string, unknown>> {
  const code = [
    `const { openBacklog, closeBacklog } = await import(${src('service/open-backlog.ts')});`,
    `const detect = await import(${src('search/language-detect.ts')});`,
    'const state = () => detect.languageScoresAsideState();',
    `const dir = ${JSON.stringify(base)};`,
    body,
  ].join('\n');
  // A file, not `--input-type=module -e`: workers inherit node's flags, and that one fails their start.
  const file = join(scripts, `script-${++scriptCount}.mts`);
  await writeFile(file, code);
  // Held open by a worker, it would be killed at the timeout and this would throw.
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe("the model gate's detector in a long-lived process", () => {
  test('`index` (wait) and a one-shot (never) do not load it', async () => {
    const out = await script(`
      const built = await openBacklog({ dir, embeddings: 'bundled', embedMissing: 'wait' });
      const afterIndex = state();
      await closeBacklog(built);
      const once = await openBacklog({ dir, embeddings: 'bundled', embedMissing: 'never', expectQuery: 'board view windows' });
      await once.semanticReady();
      const r = await once.searchUnified('board view windows', { limit: 3 });
      console.log(JSON.stringify({ afterIndex, mode: r.search_mode, afterOneShot: state() }));
      await closeBacklog(once);
    `);
    expect(out).toEqual({ afterIndex: 'off', mode: 'hybrid', afterOneShot: 'off' });
  }, 120_000);

  test('a server loads it once its model is up, off its thread; the first gated query finds it loaded', async () => {
    const out = await script(`
      const service = await openBacklog({ dir, embeddings: 'bundled' });
      await service.semanticReady();
      const atReady = state() === 'off' ? 'off' : 'started';
      while (state() === 'loading') await new Promise((r) => setTimeout(r, 20));
      const warm = state();
      const r = await service.searchUnified('Passwort vergessen', { limit: 3 });
      const s = await service.searchUnified('board view windows', { limit: 3 });
      console.log(JSON.stringify({ atReady, warm, gated: r.search_mode, english: s.search_mode, here: detect.detectorReady() }));
      await closeBacklog(service);
    `);
    // The German query is still answered by its words (the gate's answer is unchanged), eld never loaded
    // in the main thread, and the script ended by itself with the detector's worker alive.
    expect(out).toEqual({ atReady: 'started', warm: 'ready', gated: 'bm25', english: 'hybrid', here: false });
  }, 120_000);
});
