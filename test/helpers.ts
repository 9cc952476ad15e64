import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

export const ROOT = resolve(import.meta.dirname, '..');
export const DEMO_DIR = join(ROOT, 'demo', 'backlog');
export const CLI_ENTRY = join(ROOT, 'src', 'cli', 'main.ts');
/** Excerpts of the Backlog.md project's own backlog, kept in the repository. */
export const BACKLOG_MD_FIXTURE = join(ROOT, 'test', 'fixtures', 'backlog-md');
/** The Backlog.md project's whole backlog (698 files), where the evaluation data is; never written to. */
export const BACKLOG_MD_FULL = join(
  resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval')),
  'backlog-md',
);
/** The whole Backlog.md folder when it is here, else the excerpts in test/fixtures. */
export const HAS_BACKLOG_MD_FULL = existsSync(join(BACKLOG_MD_FULL, 'config.yml'));
export const BACKLOG_MD_DIR = HAS_BACKLOG_MD_FULL ? BACKLOG_MD_FULL : BACKLOG_MD_FIXTURE;

/**
 * The Backlog.md CLI and MCP server the tests and benches compare with, pinned. It is installed on
 * first use into a cache outside the project rather than as a dev dependency: its platform binaries
 * are optional dependencies that this machine's npm registry holds only for linux-x64, and a lock file
 * without the others makes `npm ci` fail everywhere.
 */
export const BACKLOG_MD_VERSION = '1.52.0';
const BACKLOG_MD_HOME = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'backlog-search',
  `backlog.md-${BACKLOG_MD_VERSION}`,
);
export const BACKLOG_MD_CLI = join(BACKLOG_MD_HOME, 'node_modules', '.bin', 'backlog');

/** Installs the Backlog.md CLI once (npm, about 15 s); false when that is impossible here (no registry). */
export async function installBacklogMdCli(): Promise<boolean> {
  if (existsSync(BACKLOG_MD_CLI)) return true;
  await mkdir(BACKLOG_MD_HOME, { recursive: true });
  try {
    await promisify(execFile)(
      'npm',
      [
        'install',
        '--prefix',
        BACKLOG_MD_HOME,
        '--no-save',
        '--no-audit',
        '--no-fund',
        `backlog.md@${BACKLOG_MD_VERSION}`,
      ],
      { timeout: 180_000 },
    );
  } catch (err) {
    process.stderr.write(
      `could not install backlog.md ${BACKLOG_MD_VERSION} (${(err as Error).message.split('\n')[0]}); skipped.\n`,
    );
  }
  return existsSync(BACKLOG_MD_CLI);
}

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

/**
 * Sends SIGTERM and waits for the child to exit: true when it did within `ms`; otherwise it is killed
 * (SIGKILL) and false, so that no test leaves a server running.
 */
export async function stopped(child: ChildProcess, ms = 20_000): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const exited = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
  child.kill('SIGTERM');
  const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref());
  const ok = await Promise.race([exited, timer]);
  if (!ok) child.kill('SIGKILL');
  return ok;
}

/**
 * The package as built, in a temp folder: dist/ (tsc, then the bundled command in dist/bin/) beside a
 * package.json (version.ts reads it) and this checkout's node_modules. Returns the folder.
 */
export async function builtPackage(prefix: string): Promise<string> {
  const run = promisify(execFile);
  const base = await mkdtemp(join(tmpdir(), prefix));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', join(base, 'dist')], { cwd: ROOT });
  await writeFile(join(base, 'package.json'), await readFile(join(ROOT, 'package.json')));
  await symlink(join(ROOT, 'node_modules'), join(base, 'node_modules'));
  await run(process.execPath, [join(ROOT, 'scripts', 'bundle-cli.mjs'), '--dist', join(base, 'dist')]);
  return base;
}
