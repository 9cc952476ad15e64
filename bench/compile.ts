/**
 * A bench script compiled with tsc into a temp folder, beside the embedding worker it starts, so it runs
 * as the built package does (no tsx in the worker threads): bench/rss.ts and bench/hybrid-ready.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Compiles `tree`'s `bench/<name>.ts` and `src/embeddings/worker.ts` (`tree`: this checkout or another
 * one) into a new temp folder whose node_modules are this checkout's; returns that folder.
 */
export async function compileBench(tree: string, name: string): Promise<string> {
  const out = await mkdtemp(join(tmpdir(), `bs-${name}-`));
  try {
    await symlink(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'dir');
    await writeFile(join(out, 'package.json'), JSON.stringify({ type: 'module' }));
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        join(tree, 'bench', `${name}.ts`),
        join(tree, 'src', 'embeddings', 'worker.ts'),
        ...['--outDir', out, '--rootDir', tree, '--module', 'nodenext', '--moduleResolution', 'nodenext'],
        ...['--target', 'es2022', '--strict', '--skipLibCheck', '--esModuleInterop'],
        ...['--resolveJsonModule', '--types', 'node'],
      ],
      { cwd: ROOT, stdio: ['ignore', 2, 2] }, // tsc reports on stdout: stderr keeps a bench's JSON clean
    );
  } catch (err) {
    await rm(out, { recursive: true, force: true });
    throw err;
  }
  return out;
}
