/**
 * Memory under sustained MCP traffic: `calls` backlog_search calls over HTTP on one session (10 in
 * flight) to a server process; its RSS after a full GC after the first 1,000 calls and at the end. The
 * same with the SDK's own transport (the leak left open) for `baselineCalls`, in the same run.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { DEMO, ROOT, fmt, mcpSession } from './common.js';

async function run(calls: number, baseline: boolean) {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(ROOT, 'bench', 'stress', 'leak-server.ts'), DEMO],
    {
      cwd: ROOT,
      env: { ...process.env, LEAK_BASELINE: baseline ? '1' : '0', BACKLOG_EMBEDDINGS: 'none' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const url = ((await lines.next()).value as string).slice(4);
  const rss = async () => {
    child.stdin!.write('rss\n');
    const [, mb, entries] = ((await lines.next()).value as string).split(' ');
    return { mb: Number(mb), entries: Number(entries) };
  };
  const s = await mcpSession(url);
  const words = ['login', 'sync', 'search', 'offline', 'rate limit', 'backup', 'epic', 'token'];
  let done = 0;
  const curve: { calls: number; mb: number; entries: number }[] = [];
  const started = performance.now();
  const until = async (target: number) => {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (done < target) {
          const i = done++;
          await s.call('backlog_search', { query: words[i % words.length], limit: 5 });
        }
      }),
    );
    curve.push({ calls: target, ...(await rss()) });
  };
  await until(1000);
  const step = Math.max(1000, Math.floor(calls / 10));
  for (let target = step; target <= calls; target += step) if (target > 1000) await until(target);
  const secs = (performance.now() - started) / 1000;
  child.stdin!.end();
  child.kill('SIGTERM');
  return { curve, secs };
}

export async function leak(
  calls: number,
  baselineCalls: number,
): Promise<{ lines: string[]; growthMb: number }> {
  const fixed = await run(calls, false);
  const base = await run(baselineCalls, true);
  const first = fixed.curve[0];
  const last = fixed.curve[fixed.curve.length - 1];
  const b0 = base.curve[0];
  const b1 = base.curve[base.curve.length - 1];
  const perCall = ((b1.mb - b0.mb) * 1e6) / (b1.calls - b0.calls);
  return {
    growthMb: last.mb - first.mb,
    lines: [
      `One MCP session over HTTP, \`backlog_search\` on the demo backlog, 10 calls in flight, server RSS after a full GC (\`bench/stress/leak-server.ts\`, run with --expose-gc):`,
      '',
      '| transport | calls | RSS after 1,000 | RSS at the end | growth | per call | SDK entries kept | time |',
      '|---|---|---|---|---|---|---|---|',
      `| ours (\`JsonResponseTransport\`) | ${fmt(last.calls)} | ${fmt(first.mb)} MB | ${fmt(last.mb)} MB | ${fmt(last.mb - first.mb, 1)} MB | ${fmt(((last.mb - first.mb) * 1e6) / (last.calls - first.calls), 0)} B | ${last.entries} | ${fmt(fixed.secs)} s |`,
      `| the SDK's own (1.32.2, baseline) | ${fmt(b1.calls)} | ${fmt(b0.mb)} MB | ${fmt(b1.mb)} MB | ${fmt(b1.mb - b0.mb, 1)} MB | ${fmt(perCall, 0)} B | ${fmt(b1.entries)} | ${fmt(base.secs)} s |`,
      '',
      `RSS along the run (ours): ${fixed.curve.map((p) => `${fmt(p.calls)}: ${fmt(p.mb)} MB`).join(', ')}.`,
    ],
  };
}
