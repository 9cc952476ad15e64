/**
 * Fuzzing: generated queries and option objects through `searchUnified` (in process, both match modes),
 * and malformed or hostile JSON-RPC requests to `/mcp` of a real server process. Counted: crashes,
 * errors without a code, queries over 100 ms.
 */
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { fuzzArbitraries, revive } from './fuzz-cases.js';
import { Agent, request } from 'node:http';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ERROR_CODES, isBacklogError } from '../../src/errors.js';
import { closeBacklog, openBacklog } from '../../src/service/open-backlog.js';
import { BACKLOG_MD, DEMO, MCP_HEADERS, STRESS_CACHE, fmt, mcpSession, startServer } from './common.js';

const CODES = new Set<string>(ERROR_CODES);

export async function fuzzLibrary(total: number): Promise<{
  lines: string[];
  crashes: number;
  uncoded: number;
  slow: number;
  slowCpu: number;
  maxMs: number;
}> {
  const service = await openBacklog({
    dir: BACKLOG_MD,
    embeddings: 'none',
    cacheDir: join(STRESS_CACHE, 'fuzz-index'),
    removeLeftovers: false,
  });
  // As a server does before its first query: its background work (snippet bodies, proximity's filters).
  await service.index.warmedUp();
  const counts = { ok: 0, coded: new Map<string, number>(), uncoded: 0, slow: 0, slowCpu: 0, crashes: 0 };
  const slowest: { k: number; ms: number; cpuMs: number; mode: string; q: string; o: string }[] = [];
  const uncodedSamples: string[] = [];
  let maxMs = 0;
  // Preallocated: a plain array grown to a million entries would itself feed the garbage collector.
  const times = new Float64Array(total);
  let timed = 0;
  const onCrash = () => counts.crashes++;
  process.on('unhandledRejection', onCrash);
  const started = performance.now();
  const batch = 5000;
  // The cases come from a worker thread, a batch at a time and never while a call is timed: the
  // generators' 80 MB stay out of this heap, whose garbage collection the timings include.
  const sampler = startSampler();
  let failed: unknown;
  sampler.on('error', (err) => (failed = err));
  const sample = (first: number, count: number) =>
    new Promise<[unknown, unknown][]>((resolve, reject) => {
      if (failed) return reject(failed);
      sampler.once('message', (cases: unknown[]) => resolve(revive(cases)));
      sampler.postMessage({ first, count });
    });
  for (let done = 0; done < total; done += batch) {
    const cases = await sample(done, Math.min(batch, total - done));
    for (let i = 0; i < cases.length; i++) {
      const [q, o] = cases[i];
      const matchMode = (done + i) % 2 ? 'raw' : 'simple';
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      try {
        await service.searchUnified(q as string, { ...(o as object), match_mode: matchMode } as never);
        counts.ok++;
      } catch (err) {
        if (isBacklogError(err) && CODES.has(err.code))
          counts.coded.set(err.code, (counts.coded.get(err.code) ?? 0) + 1);
        else {
          counts.uncoded++;
          if (uncodedSamples.length < 5)
            uncodedSamples.push(`${String(err).slice(0, 200)} <- ${JSON.stringify(q)?.slice(0, 100)}`);
        }
      }
      const ms = performance.now() - t0;
      times[timed++] = ms;
      if (ms > maxMs) maxMs = ms;
      if (ms > 100) {
        counts.slow++;
        const cpu = process.cpuUsage(c0);
        const cpuMs = (cpu.user + cpu.system) / 1000;
        if (cpuMs > 100) counts.slowCpu++;
        slowest.push({
          k: done + i,
          ms,
          cpuMs,
          mode: matchMode,
          q: JSON.stringify(q)?.slice(0, 80) ?? String(q),
          o: JSON.stringify(o)?.slice(0, 160) ?? '',
        });
      }
    }
  }
  process.off('unhandledRejection', onCrash);
  await sampler.terminate();
  await closeBacklog(service);
  times.sort();
  const secs = (performance.now() - started) / 1000;
  const coded = [...counts.coded]
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c} ${fmt(n)}`)
    .join(', ');
  return {
    crashes: counts.crashes,
    uncoded: counts.uncoded,
    slow: counts.slow,
    slowCpu: counts.slowCpu,
    maxMs,
    lines: [
      `${fmt(total)} generated (query, options) cases through \`searchUnified\` on the Backlog.md folder (lexical), half \`match_mode: "simple"\`, half \`"raw"\`, in ${fmt(secs)} s: ${fmt(counts.ok)} answered, errors by code: ${coded}.`,
      `Crashes ${counts.crashes}, errors without a code ${counts.uncoded}, calls over 100 ms ${counts.slow} (p50 ${fmt(times[Math.floor(times.length / 2)], 3)} ms, p99.99 ${fmt(times[Math.floor(times.length * 0.9999)], 1)} ms, max ${fmt(maxMs, 1)} ms).`,
      `Calls over 100 ms of wall time that also used over 100 ms of CPU (so not a pause of a process waiting for a core on the shared machine): ${counts.slowCpu}.`,
      ...uncodedSamples.map((s) => `- without a code: \`${s}\``),
      ...slowest
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map(
          (c) =>
            `- slowest: case ${c.k}, ${fmt(c.ms, 1)} ms (CPU ${fmt(c.cpuMs, 1)} ms), ${c.mode}, query \`${c.q.replace(/`/g, "'")}\`, options \`${c.o.replace(/`/g, "'")}\``,
        ),
    ],
  };
}

/** The worker that samples the cases: fuzz-worker.ts, through tsx's loader (as this bench runs). */
function startSampler(): Worker {
  const tsx = join(
    dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
    'dist/esm/api/index.mjs',
  );
  const worker = new URL('./fuzz-worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((m) => { m.register(); return import(${JSON.stringify(worker)}); })`;
  return new Worker(code, { eval: true });
}

/** One hostile request to /mcp: bodies that are not JSON, JSON that is not JSON-RPC, calls with fuzzed arguments, odd headers. */
function hostileRequests(session: { session: string; headers: Record<string, string> }) {
  const { query, options, text } = fuzzArbitraries();
  const withSession = fc.constant(session.headers);
  const headers = fc.oneof(
    { weight: 6, arbitrary: withSession },
    { weight: 1, arbitrary: fc.constant(MCP_HEADERS) },
    { weight: 1, arbitrary: fc.constant({ ...session.headers, 'mcp-session-id': 'not-a-session' }) },
    { weight: 1, arbitrary: fc.constant({ ...session.headers, Accept: 'text/html' }) },
    { weight: 1, arbitrary: fc.constant({ ...session.headers, 'Content-Type': 'text/plain' }) },
  );
  const toolName = fc.oneof(
    fc.constantFrom(
      'backlog_search',
      'backlog_get',
      'backlog_get_metadata',
      'backlog_list',
      'backlog_update',
      'backlog_write_resource',
      'backlog_delete',
    ),
    fc.string(),
  );
  const args = fc.oneof(
    options.map((o) => ({ query: 'x', ...o })),
    fc.tuple(query, options).map(([q, o]) => ({ ...o, query: q })),
    fc.record(
      { ids: fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 300 }), fc.anything()) },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        id: text,
        path: fc.oneof(
          text,
          fc.constantFrom('../x.md', '%2e%2e/x.md', '/etc/passwd', 'a\u0000b.md', '.git/config'),
        ),
        content: fc.string(),
        mode: fc.string(),
        old_string: fc.string(),
        new_string: fc.string(),
      },
      { requiredKeys: [] },
    ),
    fc.anything(),
  );
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.anything());
  const jsonRpc = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(id, toolName, args).map(([i, name, a]) => ({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name, arguments: a },
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          id,
          fc.oneof(
            text,
            fc.constantFrom(
              'mcp://backlog/../x',
              'mcp://backlog/%2e%2e/etc/passwd',
              'mcp://backlog//etc/passwd',
              'file:///etc/passwd',
              'mcp://backlog/tasks',
            ),
          ),
        )
        .map(([i, uri]) => ({ jsonrpc: '2.0', id: i, method: 'resources/read', params: { uri } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          id,
          fc.constantFrom(
            'tools/list',
            'resources/list',
            'resources/templates/list',
            'prompts/list',
            'ping',
            'initialize',
            'completion/complete',
            'logging/setLevel',
            'nope',
          ),
        )
        .map(([i, method]) => ({ jsonrpc: '2.0', id: i, method })),
    },
    { weight: 1, arbitrary: fc.object() },
    { weight: 1, arbitrary: fc.array(fc.anything(), { maxLength: 5 }) },
  );
  const body = fc.oneof(
    {
      weight: 8,
      arbitrary: jsonRpc.map((v) => {
        try {
          return JSON.stringify(v) ?? 'null';
        } catch {
          return '{';
        }
      }),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '{',
        '[]',
        'null',
        '{"jsonrpc":"2.0"}',
        '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"backlog_search","arguments":{"query":"x","__proto__":{"limit":1000}}}}',
      ),
    },
  );
  return fc.tuple(fc.constantFrom('POST', 'POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'), headers, body);
}

// A new connection per request: with keep-alive a few requests raced the server closing an idle socket
// (the client's race, not an answer of the server; STRESS_KEEPALIVE=1 shows it).
const agent = new Agent({ keepAlive: process.env.STRESS_KEEPALIVE === '1', maxSockets: 32 });

/** One request over node:http with keep-alive; an event stream (a GET) is read up to its first bytes, then closed. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; raw: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent, timeout: 10_000 }, (res) => {
      if (String(res.headers['content-type']).includes('event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, raw: '{"result":{}}' });
      }
      let raw = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (raw += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, raw }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

type Verdict = 'coded' | 'ok' | 'uncoded' | 'server_error';

/** Whether an answer names its fault: a JSON-RPC error code, or our `{error: {code}}`, or a result whose error has a code. */
function judge(status: number, raw: string): Verdict {
  if (status >= 200 && status < 300 && raw === '') return 'ok';
  if (status === 405 || status === 404 || status === 406 || status === 415) {
    // The SDK and Hono answer these with JSON-RPC or our JSON; judged below like any other body.
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return status >= 500 ? 'server_error' : 'uncoded';
  }
  if (status >= 500 && status !== 503) return 'server_error';
  const answers = Array.isArray(body) ? body : [body];
  type Answer = {
    error?: { code?: unknown };
    result?: { isError?: boolean; structuredContent?: { error?: { code?: string } } };
  };
  for (const a of answers as Answer[]) {
    if (a?.error && (typeof a.error.code === 'number' || CODES.has(String(a.error.code)))) continue;
    if (a?.result) {
      if (a.result.isError && !CODES.has(a.result.structuredContent?.error?.code ?? '')) return 'uncoded';
      continue;
    }
    return 'uncoded';
  }
  return answers.some((a) => (a as { error?: unknown }).error) || status >= 400 ? 'coded' : 'ok';
}

export async function fuzzMcp(
  total: number,
): Promise<{ lines: string[]; crashes: number; uncoded: number; serverErrors: number }> {
  const base = await mkdtemp(join(tmpdir(), 'stress-mcp-'));
  const dir = join(base, 'backlog');
  await cp(DEMO, dir, { recursive: true });
  const server = await startServer(['--dir', dir, '--no-watch']);
  const counts: Record<Verdict | 'network', number> = {
    ok: 0,
    coded: 0,
    uncoded: 0,
    server_error: 0,
    network: 0,
  };
  const samples: string[] = [];
  const failed: unknown[] = [];
  const statuses = new Map<number, number>();
  const started = performance.now();
  const batch = 2000;
  const concurrency = Number(process.env.STRESS_FUZZ_CONCURRENCY ?? 16);
  for (let done = 0; done < total && server.child.exitCode === null; done += batch) {
    // A fresh session per batch: a fuzzed DELETE may end one.
    const session = await mcpSession(server.url);
    const cases = fc.sample(hostileRequests(session), {
      numRuns: Math.min(batch, total - done),
      seed: 1400 + done,
    });
    let next = 0;
    let lastSent = '';
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < cases.length) {
          const [method, given, body] = cases[next++];
          // A DELETE or GET with the live session would end it or hold a stream open; they get a bogus one
          // (ending and streaming sessions are tested in test/reliability-http.test.ts and test/mcp-http.test.ts).
          const headers =
            process.env.STRESS_REAL_SESSION_ENDS || (method !== 'DELETE' && method !== 'GET')
              ? given
              : { ...given, 'mcp-session-id': 'not-a-session' };
          const previous = lastSent;
          lastSent = `${method} ${JSON.stringify(headers).slice(90, 130)} ${body.slice(0, 80)}`;
          try {
            const res = await send(
              `${server.url}/mcp`,
              method,
              headers,
              method === 'GET' || method === 'DELETE' ? undefined : body,
            );
            const raw = res.raw;
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            const verdict = judge(res.status, raw);
            counts[verdict]++;
            if ((verdict === 'uncoded' || verdict === 'server_error') && samples.length < 5)
              samples.push(`${method} ${res.status} ${raw.slice(0, 160)} <- ${body.slice(0, 120)}`);
          } catch (err) {
            counts.network++;
            if (process.env.STRESS_DEBUG) failed.push({ method, headers, body });
            if (samples.length < 5)
              samples.push(
                `network: ${String(err).slice(0, 80)} <- ${method} ${body.slice(0, 60)} (after: ${previous})`,
              );
          }
        }
      }),
    );
  }
  const secs = (performance.now() - started) / 1000;
  const crashed = server.child.exitCode !== null || server.child.signalCode !== null;
  const health = crashed ? 0 : (await fetch(`${server.url}/health`)).status;
  if (process.env.STRESS_DEBUG) await writeFile('/tmp/fuzz-failed.json', JSON.stringify(failed));
  await server.stop();
  await rm(base, { recursive: true, force: true });
  return {
    crashes: crashed || health !== 200 ? 1 : 0,
    uncoded: counts.uncoded + counts.network,
    serverErrors: counts.server_error,
    lines: [
      `${fmt(total)} generated requests to \`/mcp\` of a \`serve\` process (the demo backlog, writes allowed), 16 at a time, in ${fmt(secs)} s: malformed bodies (not JSON, JSON that is not JSON-RPC, batches), odd methods, headers and session ids, \`tools/call\` with fuzzed tool names and arguments (the query and option generators above, ids, paths such as \`../x.md\`, \`%2e%2e\`, \`/etc/passwd\`, NUL), \`resources/read\` of hostile URIs.`,
      `Answered with a result ${fmt(counts.ok)}, with a coded error ${fmt(counts.coded)} (a JSON-RPC error code, or \`{error: {code}}\` from our list); without a code ${counts.uncoded}; HTTP 500s ${counts.server_error}; connection failures ${counts.network}; server still answering /health afterwards: ${health === 200 ? 'yes' : 'NO'}. HTTP statuses: ${[
        ...statuses,
      ]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${k} ${fmt(v)}`)
        .join(', ')}.`,
      ...samples.map((s) => `- \`${s.replace(/`/g, "'")}\``),
    ],
  };
}
