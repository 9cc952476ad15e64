/** What the stress probes share: real server processes (the built CLI), raw MCP calls, RSS, hashes, timing. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../common.js';

export { BACKLOG_MD, ROOT } from '../common.js';
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');
export const DEMO = join(ROOT, 'demo', 'backlog');
export const STRESS_CACHE = join(ROOT, '.cache', 'stress');

export interface ProbeResult {
  probe: string;
  /** The command that made these figures. */
  command: string;
  /** ISO date of the run. */
  at: string;
  quick: boolean;
  /** Markdown: what was done and the figures. */
  body: string;
  /** Each Must reach checked by this probe, and whether it held. */
  checks: { what: string; held: boolean; figure: string }[];
}

export interface Server {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** SIGKILL, then wait for the exit. */
  kill: () => Promise<void>;
  /** SIGTERM, then wait for the exit. */
  stop: () => Promise<void>;
}

/** Starts `backlog-search serve --port 0 ...` (the built CLI) and resolves once it prints its URL. */
export async function startServer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<Server> {
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, BACKLOG_EMBEDDINGS: 'none', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${err}`)), 600_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = / at (http:\/\/[\d.]+:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${err}`));
    });
  });
  return {
    url,
    child,
    stderr: () => err,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export const MCP_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

/** One MCP session over raw HTTP: `call` sends tools/call with a fresh id and returns the parsed answer. */
export async function mcpSession(url: string, headers: Record<string, string> = {}) {
  const init = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'stress', version: '1' },
      },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  if (!session) throw new Error(`no session: ${init.status} ${await init.text()}`);
  const h = { ...MCP_HEADERS, ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  let id = 1;
  return {
    session,
    headers: h,
    async call(
      name: string,
      args: Record<string, unknown>,
    ): Promise<{
      isError?: boolean;
      structuredContent?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    }> {
      const res = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: h,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: id++,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
      const body = (await res.json()) as { result?: object; error?: { message: string } };
      if (!body.result) throw new Error(`MCP error ${res.status}: ${JSON.stringify(body.error)}`);
      return body.result;
    },
  };
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
export async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** sha256 of every file under `dir` (`.cache` left out: derived data the service writes), by relative path. */
export async function hashTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.name === '.cache') continue;
      const abs = join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(abs, r);
      else if (e.isFile())
        out.set(
          r,
          createHash('sha256')
            .update(await readFile(abs))
            .digest('hex'),
        );
      else out.set(r, `(${e.isSymbolicLink() ? 'link' : 'special'})`);
    }
  };
  await walk(dir, '');
  return out;
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '-';

/** A small seeded random generator (mulberry32), so runs draw the same data. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
