import { spawn } from 'node:child_process';
import { CLI_ENTRY, ROOT } from './helpers.js';

/** Runs the CLI with stdout on a pseudo-terminal (util-linux `script`), as a person at a terminal sees it
 * (stdout and stderr both). */
export function runOnTerminal(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const line = [process.execPath, '--import', 'tsx', CLI_ENTRY, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', line, '/dev/null'], {
    cwd: ROOT,
    env: {
      ...process.env,
      FORCE_COLOR: undefined,
      NO_COLOR: undefined,
      CI: 'true',
      BACKLOG_EMBEDDINGS: 'none',
      TERM: 'xterm',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve) => child.on('close', () => resolve(out)));
}
