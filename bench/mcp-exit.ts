/**
 * How long `backlog-search mcp --dir` takes to exit once its client leaves (docs/mcp.md, "When the client
 * leaves"). Each run copies `--snapshot` (with `cp -a`: the files keep their times, so the index cache
 * stays valid) to a fresh folder, spawns `mcp --dir` there, sends initialize and one backlog_search, ends
 * stdin as soon as the answer is in (or `--delay` ms later), and prints the times from spawn to each
 * answer, from stdin's end to the exit, and the server's CPU over that last stretch (/proc/<pid>/stat:
 * every thread, the embedding workers too).
 *
 *   npx tsx bench/mcp-exit.ts --bin dist/bin/backlog-search.js --snapshot <folder> [--runs 10] [--delay 0]
 *
 * The snapshot used in docs/mcp.md: a copy of ../shared/eval/backlog-md in which `backlog-search mcp`
 * ran for a while and was stopped during its initial embedding (its .cache/ holds the index and a partial
 * embedding cache). Give two builds a run each in turn with two commands in a loop.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    bin: { type: 'string' },
    snapshot: { type: 'string' },
    runs: { type: 'string', default: '10' },
    delay: { type: 'string', default: '0' },
  },
});
if (!values.bin || !values.snapshot) throw new Error('usage: --bin <backlog-search.js> --snapshot <folder>');
const bin = resolve(values.bin);
const base = mkdtempSync(join(tmpdir(), 'bench-mcp-exit-'));
const dir = join(base, 'backlog');

/** The process's CPU so far (user + system, all threads), ms; undefined once it is gone. */
function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

try {
  for (let run = 0; run < Number(values.runs); run++) {
    rmSync(dir, { recursive: true, force: true });
    execFileSync('cp', ['-a', resolve(values.snapshot), dir]);
    const child = spawn(process.execPath, [bin, 'mcp', '--dir', dir], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + '\n');
    const answered = (id: number) =>
      new Promise<void>((done) => {
        const timer = setInterval(() => {
          if (out.includes(`"id":${id}`)) {
            clearInterval(timer);
            done();
          }
        }, 2);
      });
    const t0 = performance.now();
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'backlog_search', arguments: { query: 'board view windows' } },
    });
    await answered(1);
    const init = performance.now() - t0;
    await answered(2);
    const first = performance.now() - t0;
    if (Number(values.delay) > 0) await new Promise((done) => setTimeout(done, Number(values.delay)));
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const cpu0 = cpuMs(child.pid) ?? 0;
    let cpu = cpu0;
    const poll = setInterval(() => (cpu = cpuMs(child.pid) ?? cpu), 20);
    const t1 = performance.now();
    child.stdin.end();
    await exited;
    clearInterval(poll);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    console.log(
      `run ${run}: initialize ${init.toFixed(0)} ms, first answer ${first.toFixed(0)} ms, ` +
        `exit ${(performance.now() - t1).toFixed(0)} ms after stdin ended, CPU meanwhile ${cpu - cpu0} ms, load ${load}`,
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
