import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

export const ROOT = resolve(import.meta.dirname, '..');
export const DEMO_DIR = join(ROOT, 'demo', 'backlog');
export const CLI_ENTRY = join(ROOT, 'src', 'cli', 'main.ts');

/** A fresh copy of `source` (default: the demo backlog) in a temp folder; `cleanup` removes it. */
export async function tempBacklog(source = DEMO_DIR): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const base = await mkdtemp(join(tmpdir(), 'backlog-search-'));
  const dir = join(base, 'backlog');
  await cp(source, dir, { recursive: true });
  // Retries: a service that is still open may be writing its persisted index into .cache/ meanwhile.
  return { dir, cleanup: () => rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) };
}

/** argv to run the real CLI from source (TypeScript through tsx), as a child process. */
export function cliArgs(args: string[]): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args]];
}

/** Runs the CLI to completion; never throws on a non-zero exit. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, argv] = cliArgs(args);
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, argv, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Starts the CLI as a long-running child (e.g. `serve`); the caller kills it. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const [cmd, argv] = cliArgs(args);
  return spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}
