/**
 * Concurrent agents: parallel appends to one task and parallel creates, from several MCP clients of one
 * server and from two server processes on the same folder; then rounds of racing version-checked updates
 * from the two servers. Counted: acknowledged writes lost, duplicate ids, winners per round.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFrontmatter } from '../../src/storage/frontmatter.js';
import { DEMO, fmt, mcpSession, startServer } from './common.js';

type Session = Awaited<ReturnType<typeof mcpSession>>;

async function taskTexts(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of await readdir(join(dir, 'tasks')))
    if (f.endsWith('.md')) out.set(f, await readFile(join(dir, 'tasks', f), 'utf8'));
  return out;
}

/** `n` appends to TASK-0002 and `n` creates spread over `sessions`, all at once; returns what was acknowledged and lost. */
async function burst(dir: string, sessions: Session[], n: number) {
  const appends: string[] = [];
  const creates: { id: string; marker: string }[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: 2 * n }, async (_, i) => {
      const s = sessions[i % sessions.length];
      const marker = randomBytes(8).toString('hex');
      const r =
        i < n
          ? await s.call('backlog_update', { id: 'TASK-0002', append: `[[a:${marker}]]` })
          : await s.call('backlog_create', { title: `Agent ${marker}`, body: marker });
      if (r.isError) errors++;
      else if (i < n) appends.push(marker);
      else creates.push({ id: r.structuredContent!.id as string, marker });
    }),
  );
  const texts = await taskTexts(dir);
  const task2 = [...texts].find(([f]) => f.startsWith('TASK-0002-'))![1];
  const missingAppends = appends.filter((m) => !task2.includes(`[[a:${m}]]`));
  const lostAppends = missingAppends.length;
  const files = [...texts.keys()];
  const missingCreates = creates.filter(
    (c) => !files.some((f) => f.startsWith(`${c.id}-`) && texts.get(f)!.includes(c.marker)),
  );
  const lostCreates = missingCreates.length;
  if (lostAppends + lostCreates)
    process.stderr.write(
      `agents: missing appends ${JSON.stringify(missingAppends)}, creates ${JSON.stringify(missingCreates)}; files ${files.filter((f) => missingCreates.some((c) => c.id.includes(f.slice(0, 9)))).join(', ')}\n`,
    );
  const ids = new Set(creates.map((c) => c.id));
  return {
    acked: appends.length + creates.length,
    errors,
    lost: lostAppends + lostCreates,
    duplicateIds: creates.length - ids.size,
  };
}

export async function agents(
  n: number,
  rounds: number,
): Promise<{ lines: string[]; lost: number; duplicateIds: number; badRounds: number }> {
  const base = await mkdtemp(join(tmpdir(), 'stress-agents-'));
  const lines: string[] = [];
  let lost = 0;
  let duplicateIds = 0;

  // One server, four clients.
  const dirA = join(base, 'one');
  await cp(DEMO, dirA, { recursive: true });
  const one = await startServer(['--dir', dirA]);
  const clients = await Promise.all(Array.from({ length: 4 }, () => mcpSession(one.url)));
  let t0 = performance.now();
  const a = await burst(dirA, clients, n);
  lines.push(
    `- one \`serve\` process, 4 MCP clients: ${n} appends to TASK-0002 and ${n} creates at once, in ${fmt(performance.now() - t0)} ms: ${a.acked} acknowledged, ${a.errors} refused, **${a.lost}** acknowledged writes missing on disk, **${a.duplicateIds}** duplicate ids.`,
  );
  lost += a.lost;
  duplicateIds += a.duplicateIds;
  await one.stop();

  // Two servers on one folder.
  const dirB = join(base, 'two');
  await cp(DEMO, dirB, { recursive: true });
  const [s1, s2] = await Promise.all([startServer(['--dir', dirB]), startServer(['--dir', dirB])]);
  const [c1, c2] = await Promise.all([mcpSession(s1.url), mcpSession(s2.url)]);
  t0 = performance.now();
  const b = await burst(dirB, [c1, c2], n);
  lines.push(
    `- two \`serve\` processes on one folder, one client each: ${n} appends to TASK-0002 and ${n} creates at once (half through each), in ${fmt(performance.now() - t0)} ms: ${b.acked} acknowledged, ${b.errors} refused, **${b.lost}** acknowledged writes missing on disk, **${b.duplicateIds}** duplicate ids.`,
  );
  lost += b.lost;
  duplicateIds += b.duplicateIds;

  // Racing version-checked updates: both servers update TASK-0003 with the same expected_updated_at.
  let badRounds = 0;
  let lostWinners = 0;
  const winners: number[] = [];
  const path = join(
    dirB,
    'tasks',
    (await readdir(join(dirB, 'tasks'))).find((f) => f.startsWith('TASK-0003-'))!,
  );
  for (let round = 0; round < rounds; round++) {
    const fm = parseFrontmatter(await readFile(path, 'utf8')).data;
    const current = fm.updated_at instanceof Date ? fm.updated_at.toISOString() : String(fm.updated_at);
    const markers = [randomBytes(6).toString('hex'), randomBytes(6).toString('hex')];
    const results = await Promise.all(
      [c1, c2].map((c, i) =>
        c.call('backlog_update', {
          id: 'TASK-0003',
          append: `[[r:${markers[i]}]]`,
          expected_updated_at: current,
        }),
      ),
    );
    const ok = results.map((r) => !r.isError);
    const conflicts = results.filter(
      (r) => r.isError && r.structuredContent?.error?.code === 'CONFLICT',
    ).length;
    winners.push(ok.filter(Boolean).length);
    if (ok.filter(Boolean).length !== 1 || conflicts !== 1) badRounds++;
    const text = await readFile(path, 'utf8');
    ok.forEach((won, i) => {
      if (won && !text.includes(`[[r:${markers[i]}]]`)) lostWinners++;
      if (!won && text.includes(`[[r:${markers[i]}]]`)) lostWinners++;
    });
  }
  lines.push(
    `- ${rounds} rounds of racing version-checked updates (both servers send \`backlog_update\` of TASK-0003 with the same \`expected_updated_at\`, read from the file): winners per round ${[...new Set(winners)].join(', ')} (exactly one in ${rounds - badRounds} of ${rounds} rounds, the other got CONFLICT); a winner's change missing or a loser's change written: **${lostWinners}**.`,
  );
  await Promise.all([s1.stop(), s2.stop()]);
  await rm(base, { recursive: true, force: true });
  return { lines, lost: lost + lostWinners, duplicateIds, badRounds };
}
