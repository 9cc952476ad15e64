/**
 * `npm run bench:viewer` (`tsx bench/viewer.ts [--dir <backlog>] [--requests 500] [--json]`): the
 * viewer's numbers.
 *
 * 1. `GET /search` latency measured from a second process: this script spawns
 *    `backlog-search serve` on the Backlog.md folder (../shared/eval/backlog-md) and times
 *    sequential requests with fetch (keep-alive) after a warm-up; the queries are 2-4 words taken
 *    from the tasks, sent with the spotlight's options (limit 20) and `mode=bm25` (lexical).
 * 2. The viewer's JavaScript, gzipped (as the server sends it) and minified, from a fresh Vite build.
 * 3. First paint of the list on localhost in headless Chromium: first-contentful-paint and the
 *    viewer's own `backlog:list-rendered` mark (the frame after the list is in the DOM), median of
 *    fresh page loads, on the Backlog.md folder and the demo backlog.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { percentile } from '../src/eval/metrics.js';
import { CLI_ENTRY, DEMO_DIR, ROOT } from '../test/helpers.js';
import { HAS_CHROMIUM, buildViewer, launchChromium } from '../test/viewer-browser.js';
import { BACKLOG_MD, argValue, rng } from './common.js';

const BACKLOG = resolve(argValue('--dir') ?? BACKLOG_MD);
const REQUESTS = Number(argValue('--requests') ?? 500);
const WARMUP = 50;
const PAINT_RUNS = 7;
const log = (s: string) => process.stderr.write(`${s}\n`);
const round = (n: number, d = 2) => Number(n.toFixed(d));

/** Starts `backlog-search serve --port 0` on `dir` as a child process; resolves to its URL. */
async function startServer(dir: string, viewerDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI_ENTRY, 'serve', '--port', '0', '--dir', dir, '--viewer-dir', viewerDir],
    // Lexical, and its derived data in this project's .cache: never written into the eval folder.
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        BACKLOG_EMBEDDINGS: 'none',
        BACKLOG_CACHE_DIR: join(ROOT, '.cache', 'bench', 'viewer'),
      },
    },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 60_000);
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  return { url, child };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Queries of 2-4 words taken from the backlog's own items. */
async function queriesFrom(url: string, n: number): Promise<string[]> {
  const list = (await (await fetch(`${url}/tasks?types=task&limit=1000`)).json()) as {
    results: { id: string }[];
  };
  const texts: string[] = [];
  for (const { id } of list.results) {
    const res = (await (await fetch(`${url}/tasks/${encodeURIComponent(id)}`)).json()) as {
      item: { title: string; body: string };
    };
    texts.push(`${res.item.title} ${res.item.body}`);
  }
  const rand = rng(11);
  const out: string[] = [];
  while (out.length < n) {
    const words = texts[Math.floor(rand() * texts.length)]
      .split(/\s+/)
      .map((w) => w.replace(/[^\p{L}\p{N}-]/gu, ''))
      .filter((w) => w.length > 3);
    if (words.length < 4) continue;
    const len = 2 + Math.floor(rand() * 3);
    const at = Math.floor(rand() * (words.length - len));
    out.push(words.slice(at, at + len).join(' '));
  }
  return out;
}

async function measureSearch(url: string) {
  const queries = await queriesFrom(url, WARMUP + REQUESTS);
  const get = async (q: string) => {
    const qs = new URLSearchParams({ query: q, limit: '20', mode: 'bm25' });
    const started = performance.now();
    const res = await fetch(`${url}/search?${qs}`);
    const body = (await res.json()) as { status: string; took_ms: number; search_mode: string };
    const ms = performance.now() - started;
    if (body.status !== 'ok') throw new Error(`search failed for ${q}: ${JSON.stringify(body)}`);
    return { ms, took: body.took_ms, mode: body.search_mode };
  };
  for (const q of queries.slice(0, WARMUP)) await get(q);
  const times: number[] = [];
  const took: number[] = [];
  const modes = new Set<string>();
  for (const q of queries.slice(WARMUP)) {
    const r = await get(q);
    times.push(r.ms);
    took.push(r.took);
    modes.add(r.mode);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const tookSorted = [...took].sort((a, b) => a - b);
  return {
    requests: times.length,
    search_mode: [...modes].join(','),
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted[sorted.length - 1]),
    server_took_p50_ms: round(percentile(tookSorted, 50)),
    server_took_p95_ms: round(percentile(tookSorted, 95)),
  };
}

async function measureBundle(viewerDir: string) {
  const assets = join(viewerDir, 'assets');
  const files = await readdir(assets);
  let js = 0;
  let jsGz = 0;
  let css = 0;
  let cssGz = 0;
  for (const f of files) {
    const buf = await readFile(join(assets, f));
    if (f.endsWith('.js')) {
      js += buf.length;
      jsGz += gzipSync(buf).length;
    } else if (f.endsWith('.css')) {
      css += buf.length;
      cssGz += gzipSync(buf).length;
    }
  }
  const kb = (n: number) => round(n / 1024, 1);
  return { js_kb: kb(js), js_gzip_kb: kb(jsGz), css_kb: kb(css), css_gzip_kb: kb(cssGz) };
}

async function measurePaint(url: string) {
  const browser = await launchChromium({ width: 1280, height: 800 });
  try {
    const fcp: number[] = [];
    const list: number[] = [];
    for (let i = 0; i < PAINT_RUNS; i++) {
      // A fresh page each time; routing every request through Playwright turns the HTTP cache off,
      // so each load fetches the HTML, script and data again (a cold load from localhost).
      const page = await browser.context.newPage();
      await page.route('**/*', (route) => route.continue());
      await page.goto(`${url}/`, { waitUntil: 'load' });
      await page.waitForSelector('.list-view .row');
      await page.waitForFunction(() => performance.getEntriesByName('backlog:list-rendered').length > 0);
      const t = await page.evaluate(() => ({
        fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
        list: performance.getEntriesByName('backlog:list-rendered')[0].startTime,
      }));
      fcp.push(t.fcp);
      list.push(t.list);
      await page.close();
    }
    const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)], 0);
    return {
      runs: PAINT_RUNS,
      first_contentful_paint_ms: median(fcp),
      list_rendered_ms: median(list),
      list_rendered_max_ms: round(Math.max(...list), 0),
    };
  } finally {
    await browser.close();
  }
}

log('building the viewer ...');
const built = await buildViewer();
const report: Record<string, unknown> = { date: new Date().toISOString(), node: process.version };
try {
  report.bundle = await measureBundle(built.dir);
  log(`GET /search on ${BACKLOG} ...`);
  const { url, child } = await startServer(BACKLOG, built.dir);
  try {
    const items = ((await (await fetch(`${url}/health`)).json()) as { items: number }).items;
    report.search = { backlog: BACKLOG, items, ...(await measureSearch(url)) };
    if (HAS_CHROMIUM) {
      log('first paint (Backlog.md folder) ...');
      report.first_paint_backlog_md = await measurePaint(url);
    }
  } finally {
    await stopServer(child);
  }
  if (HAS_CHROMIUM) {
    log('first paint (demo backlog) ...');
    const demo = await startServer(DEMO_DIR, built.dir);
    try {
      report.first_paint_demo = await measurePaint(demo.url);
    } finally {
      await stopServer(demo.child);
    }
  }
} finally {
  await built.cleanup();
}

if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  const s = report.search as Record<string, number | string>;
  const b = report.bundle as Record<string, number>;
  const p = report.first_paint_backlog_md as Record<string, number> | undefined;
  const d = report.first_paint_demo as Record<string, number> | undefined;
  const lines = [
    `| measure | value | target |`,
    `|---|---|---|`,
    `| GET /search p50 (${s.requests} requests, ${s.items} items, ${s.search_mode}) | ${s.p50_ms} ms | |`,
    `| GET /search p95 | ${s.p95_ms} ms | <= 15 ms |`,
    `| GET /search p99 | ${s.p99_ms} ms | |`,
    `| searchUnified alone (took_ms) p50 / p95 | ${s.server_took_p50_ms} / ${s.server_took_p95_ms} ms | |`,
    `| viewer JS, gzipped (minified) | ${b.js_gzip_kb} KB (${b.js_kb} KB) | <= 150 KB |`,
    `| viewer CSS, gzipped (minified) | ${b.css_gzip_kb} KB (${b.css_kb} KB) | |`,
  ];
  if (p)
    lines.push(
      `| first paint, Backlog.md folder: FCP / list rendered (median of ${p.runs}) | ${p.first_contentful_paint_ms} / ${p.list_rendered_ms} ms (max ${p.list_rendered_max_ms}) | <= 1000 ms |`,
    );
  if (d)
    lines.push(
      `| first paint, demo backlog: FCP / list rendered (median of ${d.runs}) | ${d.first_contentful_paint_ms} / ${d.list_rendered_ms} ms (max ${d.list_rendered_max_ms}) | <= 1000 ms |`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
}
