/**
 * Load on loopback: `GET /search` and MCP `backlog_search` on the Backlog.md folder, hybrid on, at
 * concurrency 10 and 50 (autocannon), with 200 idle connections held open and `/health` polled
 * meanwhile; bm25 runs (each right after a hybrid run at concurrency 10, in pairs) and an
 * uncached-embedding run in the same session as baselines. Issue #23's target is the pairs' ratio:
 * settled hybrid >= 0.4x bm25's requests/s, p99 <= 50 ms. Every answer's search mode is checked: a run
 * whose answers are not all in the mode it measures fails the probe.
 */
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BACKLOG_MD, STRESS_CACHE, fmt, mcpSession, memoryOf, seeded, sleep, startServer } from './common.js';

interface Phase {
  name: string;
  connections: number;
  seconds: number;
  /** `GET /search` (with extra query parameters) or MCP. */
  kind: 'http' | 'mcp';
  extra?: string;
  /** Every request a query of its own (the query-embedding cache never hits). */
  unique?: boolean;
}

/** The queries: the first four words of 200 task titles of the folder, drawn with a fixed seed. */
async function drawQueries(url: string): Promise<string[]> {
  const res = (await (await fetch(`${url}/tasks?types=task&limit=1000`)).json()) as {
    results: { title: string }[];
  };
  const rand = seeded(2026);
  const titles = res.results.map((r) => r.title);
  for (let i = titles.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [titles[i], titles[j]] = [titles[j], titles[i]];
  }
  return titles
    .map((t) =>
      t
        .toLowerCase()
        .split(/\s+/)
        .slice(0, 4)
        .join(' ')
        .replace(/[^\p{L}\p{N} -]/gu, ''),
    )
    .filter((q) => q.trim())
    .slice(0, 200);
}

/** 200 sockets connected to the server and sending nothing; any the server closes is reopened. */
function idleConnections(port: number, n: number) {
  const open = new Set<Socket>();
  let closedByServer = 0;
  let stopped = false;
  const add = () => {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    s.on('close', () => {
      open.delete(s);
      if (stopped) return;
      closedByServer++;
      add();
    });
    open.add(s);
  };
  for (let i = 0; i < n; i++) add();
  return {
    count: () => open.size,
    closedByServer: () => closedByServer,
    stop: () => {
      stopped = true;
      for (const s of open) s.destroy();
    },
  };
}

/** Polls /health every 250 ms; the slowest answer and the failures. */
function healthWatch(url: string) {
  let worst = 0;
  let failures = 0;
  let answered = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
        if (res.status === 200) answered++;
        else failures++;
        await res.arrayBuffer();
      } catch {
        failures++;
      }
      worst = Math.max(worst, performance.now() - t0);
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return { worst, failures, answered };
    },
  };
}

/** Clock ticks a second, the unit of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A process's CPU time (user + system, every thread of it) in ms, from /proc/<pid>/stat. */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // After the command's closing parenthesis: field 3 (state) onwards; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * The search mode an answer says it ran in, if any: a `GET /search` body's field, or an MCP call's head
 * line (`12 results for "q" (1-10), hybrid, next_offset 10`: src/mcp/format.ts).
 */
function modeOf(body: string): string | undefined {
  return (/"search_mode":"(\w+)"/.exec(body) ??
    /"text":"\d+ results? for .*?\(\d+-\d+\), (\w+)/.exec(body))?.[1];
}

/** One run of autocannon and what the server spent on it. */
interface Measured {
  p: Phase;
  rps: number;
  p50: number;
  p99: number;
  total: number;
  errors: number;
  /** The server's CPU (all threads) per answered request, ms. */
  cpuPerRequest: number;
  /** 1-minute load average at the run's end. */
  load: number;
  health: { worst: number; failures: number; answered: number };
}

export interface LoadResult {
  lines: string[];
  rps10: number;
  p99_10: number;
  /** Median over the pairs of hybrid's requests/s over bm25's (each pair run back to back). */
  ratio: number;
  /** Median over the pairs of bm25's CPU per request over hybrid's. */
  cpuRatio: number;
  /** Median of the pairs' hybrid p99, ms. */
  pairP99: number;
  loads: number[];
  healthFailures: number;
}

/** The median of a non-empty list. */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function load(quick: boolean): Promise<LoadResult> {
  const seconds = quick ? 3 : 20;
  const pairSeconds = quick ? 3 : 10;
  const pairs = 3;
  const server = await startServer(['--dir', BACKLOG_MD, '--no-watch'], {
    BACKLOG_EMBEDDINGS: 'bundled',
    BACKLOG_CACHE_DIR: join(STRESS_CACHE, 'backlog-md'),
  });
  const pid = server.child.pid!;
  const port = Number(new URL(server.url).port);
  // Settled hybrid: every chunk embedded (cached by an earlier run or `backlog-search index`, else the
  // server's background build). Hybrid answers start after the build's first pass, and a hybrid answer says
  // so while the rest is embedded: measured then, the build's worker takes a core from the runs (the
  // 293 requests/s of issue #23 against 561 before the build in passes).
  const openedAt = performance.now();
  const readyBy = Date.now() + 30 * 60_000;
  let mode = '';
  let lastWarnings: string[] = [];
  const settled = async () => {
    const res = (await (await fetch(`${server.url}/search?q=task&limit=1`)).json()) as {
      search_mode: string;
      warnings?: string[];
    };
    mode = res.search_mode;
    lastWarnings = res.warnings ?? [];
    return mode === 'hybrid' && !lastWarnings.some((w) => w.includes('semantic index is'));
  };
  let waits = 0;
  while (!(await settled())) {
    if (Date.now() > readyBy) {
      await server.stop();
      throw new Error(
        `load: the server was not settled hybrid after 30 minutes (mode ${mode}; ${lastWarnings.join('; ')})`,
      );
    }
    if (waits++ % 30 === 0)
      process.stderr.write(
        `load: waiting for every chunk to be embedded (${lastWarnings.join('; ') || mode})\n`,
      );
    await sleep(2000);
  }
  const settledAfter = (performance.now() - openedAt) / 1000;
  const queries = await drawQueries(server.url);
  // Every query once before the runs, so the query-embedding cache holds all 200; each must answer in
  // hybrid (a query the model gate sends to bm25 would make the hybrid runs partly bm25).
  for (const q of queries) {
    const body = await (await fetch(`${server.url}/search?q=${encodeURIComponent(q)}&limit=10`)).text();
    if (modeOf(body) !== 'hybrid') {
      await server.stop();
      throw new Error(`load: "${q}" was answered in ${modeOf(body)}, not hybrid: ${body.slice(0, 300)}`);
    }
  }
  // An MCP session that made no call after `initialize` is closed after 60 s idle (src/http/mcp.ts): one
  // call now, so that it lasts through the HTTP runs.
  const mcp = await mcpSession(server.url);
  await mcp.call('backlog_search', { query: queries[0], limit: 10 });
  // Nothing left in the background (a build, a save): the server idle, at most 5% of a core over 2 s.
  let idleCpu = Infinity;
  for (let tries = 0; tries < 30 && idleCpu > 100; tries++) {
    const c = await cpuMsOf(pid);
    await sleep(2000);
    idleCpu = (await cpuMsOf(pid)) - c;
  }
  if (idleCpu > 100) {
    await server.stop();
    throw new Error(`load: the server kept busy without requests (${fmt(idleCpu)} ms of CPU in 2 s)`);
  }
  const before = await memoryOf(pid);
  const idle = idleConnections(port, 200);
  await sleep(500);

  const run = async (p: Phase): Promise<Measured> => {
    let n = 0;
    const expected = p.extra?.includes('mode=bm25') ? 'bm25' : 'hybrid';
    // Answers that are not a 200 in the mode the run measures, and the first of them.
    let wrong = 0;
    let wrongExample = '';
    const onResponse = (status: number, body: string) => {
      if (status === 200 && modeOf(body) === expected) return;
      wrong++;
      wrongExample ||= `HTTP ${status}: ${body.slice(0, 300)}`;
    };
    const health = healthWatch(server.url);
    const cpuBefore = await cpuMsOf(pid);
    const result = await autocannon({
      url: server.url,
      connections: p.connections,
      duration: p.seconds,
      requests: [
        p.kind === 'http'
          ? {
              method: 'GET',
              setupRequest: (req) => {
                const i = n++;
                const q = p.unique ? `${queries[i % queries.length]} n${i}` : queries[i % queries.length];
                return { ...req, path: `/search?q=${encodeURIComponent(q)}&limit=10${p.extra ?? ''}` };
              },
              onResponse,
            }
          : {
              method: 'POST',
              path: '/mcp',
              headers: mcp.headers,
              setupRequest: (req) => {
                const i = n++;
                return {
                  ...req,
                  body: JSON.stringify({
                    jsonrpc: '2.0',
                    id: i + 1000,
                    method: 'tools/call',
                    params: {
                      name: 'backlog_search',
                      arguments: { query: queries[i % queries.length], limit: 10 },
                    },
                  }),
                };
              },
              onResponse,
            },
      ],
    });
    const cpu = (await cpuMsOf(pid)) - cpuBefore;
    const h = await health.stop();
    if (wrong > 0) {
      idle.stop();
      await server.stop();
      throw new Error(
        `load: ${wrong} of ${result.requests.total} answers of "${p.name}" were not a 200 in ${expected}: ${wrongExample}`,
      );
    }
    return {
      p,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      total: result.requests.total,
      errors: result.errors + result.timeouts + result.non2xx,
      cpuPerRequest: result.requests.total ? cpu / result.requests.total : NaN,
      load: loadavg()[0],
      health: h,
    };
  };

  const hybrid10: Phase = {
    name: '`GET /search`, hybrid',
    connections: 10,
    seconds: pairSeconds,
    kind: 'http',
  };
  const bm25_10: Phase = {
    name: '`GET /search`, `mode=bm25` (baseline)',
    connections: 10,
    seconds: pairSeconds,
    kind: 'http',
    extra: '&mode=bm25',
  };
  const others: Phase[] = [
    { name: '`GET /search`, hybrid', connections: 50, seconds, kind: 'http' },
    { name: 'MCP `backlog_search`, hybrid', connections: 10, seconds, kind: 'mcp' },
    { name: 'MCP `backlog_search`, hybrid', connections: 50, seconds, kind: 'mcp' },
    {
      name: '`GET /search`, hybrid, every query new (embedding cache never hits)',
      connections: 10,
      seconds,
      kind: 'http',
      unique: true,
    },
  ];
  let minIdle = Infinity;
  const measure = async (p: Phase) => {
    const m = await run(p);
    minIdle = Math.min(minIdle, idle.count());
    return m;
  };
  // The first seconds of load run colder code (hybrid's first 10 s run cost 1.3 ms of CPU a request, the next 0.9).
  await measure({ name: 'warm-up (not counted)', connections: 10, seconds: quick ? 3 : 5, kind: 'http' });
  // Hybrid and bm25 back to back, so that each pair's ratio is measured at one load of the machine.
  const pairRuns: [Measured, Measured][] = [];
  for (let i = 0; i < pairs; i++) pairRuns.push([await measure(hybrid10), await measure(bm25_10)]);
  const otherRuns: Measured[] = [];
  for (const p of others) otherRuns.push(await measure(p));
  const after = await memoryOf(pid);
  idle.stop();
  await server.stop();

  const all = [...pairRuns.flat(), ...otherRuns];
  const healthFailures = all.reduce((s, m) => s + m.health.failures, 0);
  const worstHealth = Math.max(...all.map((m) => m.health.worst));
  const ratios = pairRuns.map(([h, b]) => h.rps / b.rps);
  const cpuRatios = pairRuns.map(([h, b]) => b.cpuPerRequest / h.cpuPerRequest);
  const row = (m: Measured) =>
    `| ${m.p.name} | ${m.p.connections} | ${m.p.seconds} s | ${fmt(m.rps)} | ${fmt(m.p50, 1)} ms | ${fmt(m.p99, 1)} ms | ${fmt(m.cpuPerRequest, 2)} ms | ${fmt(m.total)} | ${m.errors} | ${fmt(m.load, 1)} | ${m.health.answered} answered, ${m.health.failures} failed, slowest ${fmt(m.health.worst)} ms |`;
  const ratio = median(ratios);
  const cpuRatio = median(cpuRatios);
  const pairP99 = median(pairRuns.map(([h]) => h.p99));
  return {
    rps10: median(pairRuns.map(([h]) => h.rps)),
    p99_10: pairP99,
    ratio,
    cpuRatio,
    pairP99,
    loads: all.map((m) => m.load),
    healthFailures,
    lines: [
      `\`serve\` (the built CLI) on the Backlog.md folder (${'`'}${BACKLOG_MD.split('/').slice(-3).join('/')}${'`'}, 696 files), embeddings bundled and loaded from the cache in \`.cache/stress/backlog-md/\` (made by an earlier run's server or by \`backlog-search index\`), no watcher; settled (hybrid, every chunk embedded) ${fmt(settledAfter)} s after the server printed its address, then idle (${fmt(idleCpu)} ms of CPU in 2 s without requests), then a ${quick ? 3 : 5} s warm-up (not counted). Load from autocannon in the bench process on the same 2-core machine (it takes part of the CPU). Queries: the first four words of 200 task titles of the folder, drawn with a fixed seed, each sent once before the runs (so every one is cached; each answered in hybrid), then in turn; \`limit=10\`. The query-embedding cache (512 entries, least recently used, in the embedding pool: src/embeddings/pool.ts) therefore answers every query after its first embedding; the last row sends a new query every time (the title words plus \`n<counter>\`), so each request embeds its query (about 20 ms of one core with the bundled model). Every answer is checked: HTTP 200 and its \`search_mode\` the run's (none differed: the probe fails otherwise). The first ${pairs * 2} rows are ${pairs} pairs, hybrid then bm25 back to back at concurrency 10. CPU a request: the server's user + system time (all its threads, /proc) over the run, divided by the requests answered; load: the 1-minute load average at the run's end. During every run, 200 idle TCP connections are held open (closed by the server and reopened: ${idle.closedByServer()}; open at the end of each run: at least ${minIdle}) and \`/health\` is polled every 250 ms.`,
      '',
      '| run | connections | length | requests/s | p50 | p99 | CPU a request | requests | errors | load | `/health` meanwhile |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...all.map(row),
      '',
      `Settled hybrid against bm25 at concurrency 10, pair by pair: requests/s ${ratios.map((r) => `${fmt(r, 2)}x`).join(', ')} (median **${fmt(ratio, 2)}x**, target >= 0.4x); CPU a request, bm25 over hybrid, ${cpuRatios.map((r) => `${fmt(r, 2)}x`).join(', ')} (median ${fmt(cpuRatio, 2)}x); hybrid p99 ${pairRuns.map(([h]) => `${fmt(h.p99)} ms`).join(', ')} (median **${fmt(pairP99)} ms**, target <= 50 ms).`,
      '',
      `Server RSS before ${fmt(before.rss)} MB, after ${fmt(after.rss)} MB (peak ${fmt(after.peak)} MB). \`/health\`: ${healthFailures} failures, slowest ${fmt(worstHealth)} ms.`,
    ],
  };
}
