/**
 * Issue #23: a command loads only what it uses, and starts in a fraction of a second. The compiled CLI is
 * spawned with a loader hook that logs every module resolved, in the process and its workers: tsc's output
 * (one file per module, so the log says which of ours load) and the bundle users run (dist/bin/, made by
 * scripts/bundle-cli.mjs from it: the same dynamic imports, as chunks).
 * The time bounds are generous (a shared machine): they catch a regression to seconds, not a few percent;
 * bench/startup.ts measures.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile, spawn } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKLOG_MD_FIXTURE, builtPackage, ROOT, tempBacklog } from './helpers.js';

const run = promisify(execFile);
const HOOK = join(ROOT, 'test', 'module-log.mjs');
/** What the lexical commands must never load: the embedding runtime and model, the HTTP server, the viewer, MCP. */
const HEAVY =
  /@huggingface\/transformers|onnxruntime|@energetic-ai\/|\/hono\/|@hono\/|\/dist\/(http|mcp|viewer)\//;

/**
 * What a lookup answered from a valid cache never loads: reading a file (the front matter's YAML parser,
 * gray-matter, js-yaml) and writing one; config.yml is read without the yaml package (settings-yaml.ts).
 */
const FILE_READING =
  /\/node_modules\/(yaml|gray-matter|js-yaml)\/|\/dist\/storage\/(frontmatter|parse-file)\.js$|\/dist\/service\/writes\.js$/;

/**
 * zod's classic API (its module and what it builds, ~0.1 s of a start): a lookup validates its options with
 * zod/mini (service/options.ts); the MCP server and the writes may load classic zod.
 */
const CLASSIC_ZOD = /\/node_modules\/zod\/(v4\/classic\/|index\.js$)/;

let base: string;
let cli: string;
/** The bundled command (package.json's bin). */
let bin: string;
/** `node -e 0` here now (median of 3): the time bounds scale with it on a loaded machine. */
let nodeMs: number;
/** `ms`, or `times` x `node -e 0` when the machine is so loaded that this is more. */
const bound = (ms: number, times: number) => Math.max(ms, times * nodeMs);
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  // The package as built: dist/ beside a package.json (version.ts reads it) and this checkout's node_modules.
  base = await builtPackage('bs-startup-');
  cli = join(base, 'dist', 'cli', 'main.js');
  bin = join(base, 'dist', 'bin', 'backlog-search.js');
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await run(process.execPath, ['-e', '0']);
    starts.push(performance.now() - t);
  }
  nodeMs = starts.sort((a, b) => a - b)[1];
  ({ dir, cleanup } = await tempBacklog());
  await run(process.execPath, [cli, '--dir', dir, 'list', '-n', '1']); // writes .cache/index.bin
}, 300_000);

afterAll(async () => {
  await cleanup?.();
  if (base) await rm(base, { recursive: true, force: true });
});

/** Runs the built CLI with the module log; its output, wall time and the modules it resolved. */
async function traced(
  args: string[],
  main = cli,
): Promise<{ stdout: string; ms: number; modules: string[] }> {
  const log = join(base, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const env: NodeJS.ProcessEnv = { ...process.env, MODULE_LOG: log, NO_COLOR: '1' };
  delete env.BACKLOG_EMBEDDINGS; // the default embeddings, as a user has them
  const started = performance.now();
  const { stdout } = await run(process.execPath, ['--import', HOOK, main, ...args], { env });
  const ms = performance.now() - started;
  // Modules only: a package.json read for a version number is not a module loaded.
  const modules = (await readFile(log, 'utf8').catch(() => ''))
    .split('\n')
    .filter((m) => m && !m.endsWith('/package.json'));
  return { stdout, ms, modules };
}

describe('start-up (issue #23)', () => {
  it('--version answers from two modules, well under 2 s', async () => {
    const res = await traced(['--version']);
    expect(res.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(res.modules.filter((m) => m.startsWith('file:')).map((m) => m.replace(/.*\/dist\//, ''))).toEqual([
      'cli/main.js',
      'version.js',
    ]);
    expect(res.ms).toBeLessThan(bound(2000, 8));
  });

  it.each([
    ['--help', ['--help']],
    ['get', ['--dir', '<dir>', 'get', 'TASK-0004']],
    ['list', ['--dir', '<dir>', 'list']],
    ['diagnostics', ['--dir', '<dir>', 'diagnostics']],
    ['search --embeddings none', ['--dir', '<dir>', '--embeddings', 'none', 'search', 'login']],
    // The default embeddings with none cached: bm25, and no model is loaded to find that out.
    ['search (default, nothing embedded)', ['--dir', '<dir>', 'search', 'login']],
  ])('%s loads neither the embedding runtime nor the servers', async (_name, args) => {
    const res = await traced(args.map((a) => (a === '<dir>' ? dir : a)));
    expect(res.stdout.length).toBeGreaterThan(0);
    expect(res.modules.length).toBeGreaterThan(2); // the log works
    expect(res.modules.filter((m) => HEAVY.test(m))).toEqual([]);
    expect(res.modules.filter((m) => CLASSIC_ZOD.test(m))).toEqual([]);
    expect(res.ms).toBeLessThan(bound(5000, 25));
  });

  it('get, diagnostics, and a search or list with plain options load no zod at all', async () => {
    for (const args of [
      ['get', 'TASK-0004'],
      ['diagnostics'],
      ['list', '--no-server', '--type', 'task', '-n', '5'],
      ['--embeddings', 'none', 'search', 'login', '--no-server', '--status', 'open,done', '--related', '2'],
    ]) {
      const res = await traced(['--dir', dir, ...args]);
      expect(res.stdout.length, args.join(' ')).toBeGreaterThan(0);
      expect(
        res.modules.filter((m) => m.includes('/node_modules/zod/')),
        args.join(' '),
      ).toEqual([]);
    }
    // Options the schema must judge load it, and get its error (the check can fail).
    const log = join(base, `modules-${Math.random().toString(36).slice(2)}.txt`);
    const args = [
      '--dir',
      dir,
      '--embeddings',
      'none',
      'search',
      'login',
      '--no-server',
      '-n',
      'abc',
      '--json',
    ];
    const failed = await run(process.execPath, ['--import', HOOK, cli, ...args], {
      env: { ...process.env, MODULE_LOG: log },
    }).catch((err: { code: number; stdout: string }) => err);
    expect('code' in failed && failed.code).toBe(2);
    expect(JSON.parse(failed.stdout).error.message).toBe(
      'limit: Invalid input: expected number, received NaN',
    );
    const modules = (await readFile(log, 'utf8')).split('\n');
    expect(modules.filter((m) => m.includes('/node_modules/zod/')).length).toBeGreaterThan(0);
  });

  it('get, list and a search without embeddings load no embedding module; a default search does', async () => {
    const EMBEDDING = /\/dist\/embeddings\/(pool|cache|semantic-index|resolve|bundled|transformers)\.js$/;
    const embedding = (modules: string[]) => modules.filter((m) => EMBEDDING.test(m));
    for (const args of [
      ['--dir', dir, 'get', 'TASK-0004'],
      ['--dir', dir, 'list', '-n', '5', '--no-server'],
      ['-d', dir, '--embeddings', 'none', 'search', 'login', '--type', 'task', '-n2'],
    ]) {
      const res = await traced(args);
      expect(res.stdout.length, args.join(' ')).toBeGreaterThan(0);
      expect(embedding(res.modules), args.join(' ')).toEqual([]);
    }
    // The default search finds out from the cache folder whether it runs hybrid: the resolver and cache load.
    const auto = await traced(['--dir', dir, 'search', 'login']);
    expect(embedding(auto.modules).length).toBeGreaterThan(0);
  });

  it('get, list and a search make no Intl object (the first loads ICU’s locales); a list by title does', async () => {
    const made = async (args: string[], main: string) => {
      const log = join(base, `intl-${Math.random().toString(36).slice(2)}.txt`);
      const hook = join(ROOT, 'test', 'intl-probe.mjs');
      const { stdout } = await run(process.execPath, ['--import', hook, main, '--dir', dir, ...args], {
        env: { ...process.env, INTL_LOG: log, NO_COLOR: '1' },
      });
      expect(stdout.length, args.join(' ')).toBeGreaterThan(0);
      return (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    };
    for (const main of [cli, bin])
      for (const args of [
        ['get', 'TASK-0004'],
        ['list', '-n', '5', '--no-server'],
        ['--embeddings', 'none', 'search', 'login', '--no-server'],
      ])
        expect(await made(args, main), args.join(' ')).toEqual([]);
    // The probe sees one when it is made (list-sort.ts's collator).
    expect(await made(['list', '--sort', 'title', '--no-server'], bin)).toContain('Collator');
  });

  it("the MCP server loads classic zod (the lookups' check above can fail)", async () => {
    const log = join(base, `modules-${Math.random().toString(36).slice(2)}.txt`);
    const child = spawn(process.execPath, ['--import', HOOK, cli, '--dir', dir, 'mcp'], {
      env: { ...process.env, MODULE_LOG: log, BACKLOG_EMBEDDINGS: 'none' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const send = (msg: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
    let out = '';
    const listed = new Promise<void>((done) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"id":2')) done();
      }),
    );
    const exited = new Promise((done) => child.once('exit', done));
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list' });
    await listed;
    child.stdin.end();
    await exited;
    expect(out).toContain('backlog_search');
    const modules = (await readFile(log, 'utf8')).split('\n');
    expect(modules.filter((m) => CLASSIC_ZOD.test(m)).length).toBeGreaterThan(0);
  }, 60_000);

  it('a lookup from the cache reads no file: no YAML parser, no writes (Backlog.md folder)', async () => {
    const md = await tempBacklog(BACKLOG_MD_FIXTURE);
    try {
      await run(process.execPath, [cli, '--dir', md.dir, 'list', '-n', '1']); // writes .cache/index.bin
      for (const args of [['search', 'board', '--embeddings', 'none'], ['get', 'BACK-222'], ['list']]) {
        const res = await traced(['--dir', md.dir, ...args]);
        expect(res.stdout.length, args.join(' ')).toBeGreaterThan(0);
        expect(
          res.modules.filter((m) => FILE_READING.test(m)),
          args.join(' '),
        ).toEqual([]);
      }
      // A file changed since the cache was written is read: the parser loads then (the check can fail).
      const task = join(
        md.dir,
        'tasks',
        (await readdir(join(md.dir, 'tasks'))).find((f) => f.endsWith('.md'))!,
      );
      await writeFile(task, `${await readFile(task, 'utf8')}\nedited\n`);
      const changed = await traced(['--dir', md.dir, 'search', 'board', '--embeddings', 'none']);
      expect(changed.modules.filter((m) => FILE_READING.test(m)).length).toBeGreaterThan(0);
    } finally {
      await md.cleanup();
    }
  });

  it("a lookup runs without V8's optimizing compiler; other commands with it", async () => {
    const probe = async (args: string[]) => {
      const out = join(base, `opt-${Math.random().toString(36).slice(2)}.json`);
      const flags = ['--allow-natives-syntax', '--import', join(ROOT, 'test', 'optimization-probe.mjs')];
      await run(process.execPath, [...flags, bin, ...args], { env: { ...process.env, OPT_PROBE: out } });
      return JSON.parse(await readFile(out, 'utf8')) as { optimized: boolean; cpuUs: number };
    };
    expect((await probe(['--help'])).optimized).toBe(true);
    for (const args of [
      ['get', 'TASK-0004'],
      ['--embeddings', 'none', 'search', 'login'],
    ]) {
      const lookup = await probe(['--dir', dir, ...args]);
      // Switched on again after a second of CPU (a very slow machine may get there): not before.
      expect(lookup.optimized && lookup.cpuUs < 1_000_000, `${args.join(' ')}: ${lookup.cpuUs} µs`).toBe(
        false,
      );
    }
  });

  it('the bundled command answers as the compiled one, from a few files of its own', async () => {
    const own = (modules: string[]) => modules.filter((m) => m.startsWith('file:'));
    const version = await traced(['--version'], bin);
    expect(version.stdout).toBe((await traced(['--version'])).stdout);
    expect(own(version.modules).length).toBeLessThanOrEqual(5);
    const args = ['--dir', dir, '--embeddings', 'none', 'search', 'login', '--json'];
    const answer = (stdout: string) => ({ ...JSON.parse(stdout), took_ms: 0 });
    const [compiled, bundled] = [await traced(args), await traced(args, bin)];
    expect(answer(bundled.stdout)).toEqual(answer(compiled.stdout));
    // Everything is in the bundle but the stemmers and stop-words, required by language when first used.
    const required = /\/node_modules\/@orama\/(stemmers|stopwords)\//;
    expect(own(bundled.modules).filter((m) => m.includes('/node_modules/') && !required.test(m))).toEqual([]);
    // Distinct files (a file resolved twice is read once); the compiled lookup itself loads no zod now (its
    // ~190 files were most of the compiled build's), so a third, not a quarter.
    const files = (modules: string[]) => new Set(own(modules)).size;
    expect(files(bundled.modules)).toBeLessThan(files(compiled.modules) / 3);
    for (const cmd of [['list'], ['get', 'TASK-0004'], ['diagnostics']]) {
      const [a, b] = [
        await run(process.execPath, [cli, '--dir', dir, ...cmd]),
        await run(process.execPath, [bin, '--dir', dir, ...cmd]),
      ];
      expect(b.stdout).toBe(a.stdout);
    }
  }, 180_000);

  it('a default search says why it ran bm25 when nothing is embedded', async () => {
    const res = await traced(['--dir', dir, 'search', 'login', '--json']);
    const out = JSON.parse(res.stdout);
    expect(out.search_mode).toBe('bm25');
    expect(out.warnings.join(' ')).toContain('no embedding is cached');
  });

  it('with every chunk embedded, the model loads only for a query that needs a vector', async () => {
    const bundled = ['--dir', dir, '--embeddings', 'bundled'];
    await run(process.execPath, [cli, ...bundled, 'index']);
    // Each document's chunk hashes beside the vectors (chunk-plans.ts): the one-shot below does not chunk again.
    expect(
      (await readdir(join(dir, '.cache'))).filter((f) => /^embeddings-.*\.bin\.chunks$/.test(f)),
    ).toHaveLength(1);
    // English-only model, Cyrillic query: bm25, from the cached vectors' state alone.
    const other = await traced([...bundled, 'search', 'вход', '--json'], bin);
    expect(JSON.parse(other.stdout).warnings.join(' ')).toContain('English-only');
    expect(other.modules.filter((m) => HEAVY.test(m))).toEqual([]);
    // The bundle starts the embedding worker from dist/embeddings/worker.js.
    const hybrid = await traced([...bundled, 'search', 'user cannot sign in', '--json'], bin);
    expect(JSON.parse(hybrid.stdout).search_mode).toBe('hybrid');
    expect(hybrid.modules.some((m) => m.includes('@energetic-ai/'))).toBe(true);
    // One worker: the one the CLI started early (early-start.ts), taken by the service, not a second.
    expect(hybrid.modules.filter((m) => /\/embeddings\/worker\.js$/.test(m))).toHaveLength(1);
  }, 240_000);

  it('MCP over stdio answers initialize at once, and a first backlog_search after the open', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--dir', dir],
      env: { ...getDefaultEnvironment(), BACKLOG_EMBEDDINGS: 'none' },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'startup-test', version: '1.0.0' });
    const started = performance.now();
    try {
      await client.connect(transport);
      const initialized = performance.now() - started;
      // Sent at once: it waits for the open, and finds what the backlog holds (an empty index would not).
      const res = await client.callTool({
        name: 'backlog_search',
        arguments: { query: 'login', limit: 3, response_format: 'detailed' },
      });
      const structured = res.structuredContent as { status: string; results: { id: string }[] };
      expect(structured.status).toBe('ok');
      expect(structured.results.length).toBeGreaterThan(0);
      expect(initialized).toBeLessThan(bound(3000, 15));
      expect(performance.now() - started).toBeLessThan(bound(5000, 25));
    } finally {
      await client.close();
    }
  }, 60_000);
});
