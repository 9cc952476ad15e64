import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
let base: string;

beforeAll(async () => {
  // Compiled output (src/embeddings and what it imports) beside a link to the project's node_modules,
  // as in a published dist/.
  base = await mkdtemp(join(tmpdir(), 'bs-emb-dist-'));
  await symlink(join(ROOT, 'node_modules'), join(base, 'node_modules'), 'dir');
  await writeFile(join(base, 'package.json'), JSON.stringify({ type: 'module' }));
  const sources = (await readdir(join(ROOT, 'src', 'embeddings'))).filter((f) => f.endsWith('.ts'));
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      ...sources.map((f) => join(ROOT, 'src', 'embeddings', f)),
      ...['--rootDir', join(ROOT, 'src'), '--outDir', join(base, 'dist')],
      ...['--module', 'nodenext', '--moduleResolution', 'nodenext'],
      ...['--target', 'es2022', '--strict', '--skipLibCheck', '--esModuleInterop', '--types', 'node'],
    ],
    { cwd: ROOT },
  );
}, 60_000);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

test('from compiled JavaScript the pool starts worker.js (no tsx) and embeds', async () => {
  const script = join(base, 'run.mjs');
  await writeFile(
    script,
    `import { EmbeddingPool } from './dist/embeddings/pool.js';
const { embedder, provider, warnings } = await EmbeddingPool.start({ provider: 'bundled', workers: 1 });
const [v] = await embedder.embedAll(['compiled worker']);
await embedder.close();
console.log(JSON.stringify({ provider, warnings, dims: v.length }));`,
  );
  const { stdout } = await run(process.execPath, [script], { cwd: base });
  expect(JSON.parse(stdout)).toEqual({ provider: 'bundled', warnings: [], dims: 512 });
}, 60_000);
