import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { isBacklogError, BacklogError, droppedCacheReason } from '../errors.js';
import type { EmbeddingProvider } from '../embeddings/types.js';
import type { OpenBacklogOptions } from '../service/open-backlog.js';
import type { BacklogService } from '../service/backlog-service.js';
import { DEMO_BACKLOG_DIR } from '../storage/demo.js';
import { VERSION } from '../version.js';
import { DIAGNOSTIC_LEVELS, atLeast } from '../service/diagnostics.js';
import type { DiagnosticLevel } from '../storage/types.js';
import type { Style } from './style.js';
import { LIST_SORTS } from '../service/list-sort.js';

// Each command imports what it uses when it runs (issue #23): `--help` and `--version` load none of the
// service, `get` and a lexical `search` none of the HTTP server, the MCP server or the embedding runtime.
const backlog = () => import('../service/open-backlog.js');
const formats = () => import('./format.js');
const cliWorkspace = () => import('./workspace.js');
import type { Workspace } from '../workspace/workspace.js';

/** commander's collector for a repeatable `--dir` (several backlogs: a workspace, docs/workspace.md). */
function collectDir(value: string, previous: string[] | string | undefined): string[] {
  return [...(previous === undefined ? [] : [previous].flat()), value];
}

/** Whether the options may name several backlogs (cli/workspace.ts decides; it is loaded only then). */
function mayBeWorkspace(dir: string[] | string | undefined, workspace: string | undefined): boolean {
  const dirs = dir === undefined ? [] : [dir].flat();
  return workspace !== undefined || dirs.length > 1 || dirs.some((d) => d.includes('='));
}

interface GlobalOptions {
  /** Repeatable (several backlogs: a workspace, docs/workspace.md). */
  dir?: string | string[];
  workspace?: string;
  color?: boolean;
  embeddings?: string;
  memoryBudget?: number;
}

function megabytes(value: string): number {
  const mb = Number(value);
  if (!Number.isFinite(mb) || mb <= 0)
    throw new InvalidArgumentError('Give a positive number of MB, e.g. 800.');
  return mb;
}

/** `--dir`, else BACKLOG_DIR, else ./backlog; the demo backlog when none of those exists and none was asked for. */
async function resolveDir(explicit: string | undefined): Promise<string> {
  const asked = explicit ?? process.env.BACKLOG_DIR;
  if (asked) return resolve(asked);
  const local = resolve('backlog');
  if ((await stat(local).catch(() => null))?.isDirectory()) return local;
  process.stderr.write(
    `No ./backlog folder here; using the built-in demo backlog, read-only (${DEMO_BACKLOG_DIR}). Pass --dir to choose one.\n`,
  );
  return DEMO_BACKLOG_DIR;
}

/** How long `serve` may take to stop after SIGINT or SIGTERM before it exits anyway. */
const STOP_DEADLINE_MS = 10_000;

/** Services opened by one-shot commands: written and closed (workers stopped) when the command is done. */
const oneShots: BacklogService[] = [];
/** Loaded when a one-shot search started its model early: stopped if the command fails before using it. */
let earlyStart: typeof import('../embeddings/early-start.js') | undefined;
/** Run when the command is done, whether it failed or not (mcp: stop reading stdin, so the process exits). */
const atExit: (() => void)[] = [];

/**
 * How a command opens the backlog. One-shot commands use cached embeddings only (hybrid when every
 * chunk is cached, else bm25 with a warning); `index` rebuilds everything with progress bars; the
 * servers embed in the background while lexical search answers.
 */
type OpenKind = 'oneshot' | 'lookup' | 'index' | 'server';

async function open(
  cmd: Command,
  kind: OpenKind = 'oneshot',
  watch = false,
  query?: string,
  schemas = true,
): Promise<BacklogService> {
  const service = await (await begin(cmd, kind, watch, query, schemas)).opened;
  if (kind !== 'server') oneShots.push(service);
  return service;
}

/** The service as soon as its format is known, with `read` and `opened` (see beginOpenBacklog). */
async function begin(
  cmd: Command,
  kind: OpenKind,
  watch: boolean,
  /** A one-shot search's query: the model, when it will be needed, loads during the open. */
  query?: string,
  /** The search and list options' schemas (zod) are loaded: a lookup whose options are plain needs none. */
  schemas = true,
): Promise<{ service: BacklogService; read: Promise<BacklogService>; opened: Promise<BacklogService> }> {
  const { dir, embeddings, memoryBudget, workspace } = cmd.optsWithGlobals<GlobalOptions>();
  if (mayBeWorkspace(dir, workspace) && (await (await cliWorkspace()).workspaceSpec(dir, workspace)))
    throw new BacklogError(
      'INVALID_INPUT',
      `${cmd.name()} serves one backlog; several were given (--dir repeated, NAME=PATH or --workspace)`,
      'search, list and get take several backlogs; give this command one --dir (docs/workspace.md).',
      { field: 'dir' },
    );
  const root = await resolveDir([dir ?? []].flat()[0]);
  if (kind !== 'index') {
    // Read the cache on libuv's threads while the service's modules compile (~0.1 s); checked when taken.
    const { CACHE_FILE, cacheDirFor, prefetchSignedFile } = await import('../service/cache-file.js');
    const cacheDir = cacheDirFor(root);
    prefetchSignedFile(join(cacheDir, CACHE_FILE));
    const provider = (embeddings ?? process.env.BACKLOG_EMBEDDINGS ?? 'auto') as EmbeddingProvider;
    // A hybrid one-shot: the model's worker loads (~0.8 s) beside the rest of the open (early-start.ts).
    if (kind === 'oneshot' && query !== undefined && provider !== 'none') {
      earlyStart = await import('../embeddings/early-start.js');
      earlyStart.startModelEarly({ provider, cacheDir, query });
    }
  }
  const { beginOpenBacklog } = await backlog();
  const bar = kind === 'index' ? (await import('./progress.js')).createProgress() : undefined;
  const begun = await beginOpenBacklog({
    dir: root,
    onProgress: bar?.update,
    onEmbedProgress: bar ? (done, total) => bar.update('embed', done, total) : undefined,
    watch,
    rebuild: kind === 'index',
    // get and list never rank by meaning: loading the model would cost them ~0.6 s and ~130 MB.
    embeddings: kind === 'lookup' ? 'none' : (embeddings as OpenBacklogOptions['embeddings']),
    embedMissing: kind === 'index' ? 'wait' : kind === 'server' ? 'background' : 'never',
    // One query and exit: preparing every body for snippets would cost more than the query. `index` is
    // the build a user asks for: it prepares every body before its save, and its cache keeps them for
    // the next process; the warm-up searches and proximity filters are a server's (docs/performance.md).
    background: kind === 'server',
    saveEveryBody: kind === 'index',
    // A lookup only reads: writers' leftovers are hidden or not text files, never indexed, so the walk
    // that removes them (every folder, ~10 ms here) is left to the servers and `index`.
    removeLeftovers: kind === 'server' || kind === 'index',
    ...(schemas ? {} : { optionSchemas: false }),
    ...(query !== undefined ? { expectQuery: query } : {}),
    ...(memoryBudget !== undefined ? { memoryBudgetMb: memoryBudget } : {}),
  });
  if (bar) begun.opened = begun.opened.finally(() => bar.stop());
  return begun;
}

/** search, list and get: the one backlog as before, or a workspace when several are given (docs/workspace.md). */
async function openMany(cmd: Command, query?: string, schemas = true): Promise<BacklogService | Workspace> {
  const { dir, embeddings, workspace } = cmd.optsWithGlobals<GlobalOptions>();
  const ws = mayBeWorkspace(dir, workspace)
    ? await (
        await cliWorkspace()
      ).openCliWorkspace(dir, workspace, cmd.name() === 'search' ? embeddings : 'none')
    : undefined;
  if (!ws) return open(cmd, cmd.name() === 'search' ? 'oneshot' : 'lookup', false, query, schemas);
  oneShots.push(...ws.projects.map((p) => p.service));
  return ws;
}

/** serve: the workspace the options name (watching, embedding in the background), or undefined for one backlog. */
async function serveWorkspace(cmd: Command, watch: boolean): Promise<Workspace | undefined> {
  const { dir, embeddings, memoryBudget, workspace } = cmd.optsWithGlobals<GlobalOptions>();
  if (!mayBeWorkspace(dir, workspace)) return undefined;
  const backlogs = await (await cliWorkspace()).workspaceSpec(dir, workspace);
  if (!backlogs) return undefined;
  const { openWorkspace } = await import('../workspace/open-workspace.js');
  const ws = await openWorkspace({
    backlogs,
    watch,
    embeddings: embeddings as OpenBacklogOptions['embeddings'],
    embedMissing: 'background',
    background: true,
    ...(memoryBudget !== undefined ? { memoryBudgetMb: memoryBudget } : {}),
  });
  for (const p of ws.problems) process.stderr.write(`warning ${p.code}: ${p.name}: ${p.message}\n`);
  return ws;
}

/** `--project` as a request option (checked against a single backlog's name, then dropped). */
async function projectOption(
  target: BacklogService | Workspace,
  o: { project?: string },
): Promise<{ project?: string }> {
  return o.project ? (await cliWorkspace()).projectOf(target, o) : {};
}

function filterOptions(cmd: Command): Command {
  return cmd
    .option(
      '-t, --type <types>',
      'comma-separated: task, epic, resource (native); task, document, decision, milestone (Backlog.md)',
    )
    .option('-s, --status <statuses>', 'statuses (comma-separated)')
    .option(
      '--state <states>',
      'active, draft, completed, archived, or all (list shows active tasks and documents by default)',
    )
    .option('-p, --parent <ids>', 'items under these ids, at any depth')
    .option('--tag <tags>', 'any of these tags')
    .option('--author <authors>', 'any of these authors')
    .option('--path <globs>', 'file paths or globs relative to the backlog root')
    .option('--folder <folders>', 'folders relative to the backlog root')
    .option('--file-type <exts>', 'extensions without the dot')
    .option('--project <names>', 'with several backlogs: these projects only (comma-separated; * for all)');
}

/** The filter flags given, by their names on the command line (for "Nothing matched --type epic"). */
async function filterFlags(o: Record<string, unknown>): Promise<string> {
  const { type, status, state, parent, tag, author, path, folder, fileType } = o;
  const { describeFilters } = await formats();
  return describeFilters({ type, status, state, parent, tag, author, path, folder, 'file-type': fileType });
}

function filtersFrom(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const map: Record<string, string> = {
    type: 'types',
    status: 'status',
    state: 'state',
    parent: 'parent_id',
    tag: 'tags',
    author: 'author',
    path: 'path',
    folder: 'folder',
    fileType: 'file_type',
  };
  for (const [from, to] of Object.entries(map)) if (o[from] !== undefined) out[to] = o[from];
  return out;
}

/** JSON as it always was with --json; else the text, coloured when stdout is a terminal (see styleFor). */
async function print(
  json: boolean,
  value: unknown,
  text: (style: Style) => string,
  cmd?: Command,
): Promise<void> {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const { styleFor } = await import('./style.js');
  const flag = cmd?.optsWithGlobals<GlobalOptions>().color;
  process.stdout.write(`${text(styleFor(process.stdout, process.env, flag !== false))}\n`);
}

type SearchRequest = Parameters<BacklogService['searchUnified']>[1];

/** The search answered by this process: the backlog (or workspace) opened from its cache. */
async function searchHere(
  cmd: Command,
  query: string,
  request: SearchRequest,
  o: { project?: string },
): Promise<Awaited<ReturnType<BacklogService['searchUnified']>>> {
  // A search whose options are not plain loads the schemas itself (searchUnified).
  const service = await openMany(cmd, query, false);
  // The vectors `index` built are on disk: load them (well under a second) so the search runs hybrid.
  for (const s of 'projects' in service ? service.projects.map((p) => p.service) : [service])
    await s.semanticReady();
  return service.searchUnified(query, { ...request, ...(await projectOption(service, o)) });
}

/** The list made by this process. */
async function listHere(
  cmd: Command,
  request: Record<string, unknown>,
  o: { project?: string },
): Promise<ReturnType<BacklogService['list']>> {
  // The schemas (zod) only for options that are not plain (plain-options.ts): list() reads them synchronously.
  const { plainListOptions } = await import('../service/plain-options.js');
  const service = await openMany(cmd, undefined, plainListOptions(request) === undefined);
  return service.list({ ...request, ...(await projectOption(service, o)) }) as ReturnType<
    BacklogService['list']
  >;
}

/**
 * The answer of a `serve` of the same backlog, when one is running (src/http/discovery.ts): the same
 * `searchUnified` (`GET /search`) or `list` (`GET /tasks`) over HTTP, without reading the index or
 * loading a model here. One backlog only, the same version (and for a search the same embedding
 * provider); anything else, or any failure, and the command answers itself.
 */
async function askRunningServer(
  cmd: Command,
  route: '/search' | '/tasks',
  request: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const { dir, embeddings, workspace, memoryBudget } = cmd.optsWithGlobals<GlobalOptions>();
  if (process.env.BACKLOG_NO_SERVER || workspace || memoryBudget !== undefined) return undefined;
  if (Array.isArray(dir) && dir.length > 1) return undefined;
  const explicit = [dir ?? []].flat()[0];
  if (explicit?.includes('=') && !existsSync(explicit)) return undefined; // NAME=PATH: a workspace
  const asked = explicit ?? process.env.BACKLOG_DIR ?? 'backlog';
  const { findServer, getJson } = await import('../http/discovery.js');
  const provider = embeddings ?? process.env.BACKLOG_EMBEDDINGS ?? 'auto';
  const server = findServer(resolve(asked), VERSION, route === '/search' ? provider : undefined);
  if (!server) return undefined;
  const params = new URLSearchParams();
  if (server.project) params.set('project', server.project);
  for (const [key, value] of Object.entries(request))
    if (value !== undefined) params.set(key, Array.isArray(value) ? value.join(',') : String(value));
  const got = await getJson(`${server.url}${route}?${params}`, server.token, ASK_SERVER_MS);
  // An error the server found in the request is the same error here: this process reports it.
  if (!got || got.status !== 'ok') return undefined;
  delete got.status;
  return got;
}
/** How long a one-shot search waits for a running server before answering itself. */
const ASK_SERVER_MS = 1000;

export function buildProgram(): Command {
  const program = new Command('backlog-search')
    .description('Search a backlog of markdown tasks, epics and documents.')
    .version(VERSION, '-V, --version')
    .option(
      '-d, --dir <path>',
      'backlog folder (default: $BACKLOG_DIR, ./backlog, else the demo backlog); repeat it, or NAME=PATH, for several',
      collectDir,
    )
    .option('--workspace <file>', 'a YAML file listing several backlogs (docs/workspace.md)')
    .addOption(
      new Option(
        '-e, --embeddings <provider>',
        'embedding provider for hybrid search (default: $BACKLOG_EMBEDDINGS, else auto)',
      ).choices(['auto', 'transformers', 'bundled', 'none']),
    )
    .addOption(
      new Option(
        '--memory-budget <MB>',
        'RSS the first embedding of a large backlog plans to stay under; a second core is used only if it fits (default: $BACKLOG_MEMORY_MB, else 400)',
      ).argParser(megabytes),
    )
    .option('--no-color', 'plain text even on a terminal (also: NO_COLOR=1)')
    .showHelpAfterError()
    // Usage errors reach main() as CommanderErrors, which exits with 2 like every other input error.
    .exitOverride();

  filterOptions(
    program.command('search').description('search the backlog').argument('<query...>', 'words to search for'),
  )
    .addOption(
      new Option('--sort <order>', 'relevant or recent').choices(['relevant', 'recent']).default('relevant'),
    )
    .option('-n, --limit <n>', 'results per page (1-100)', '10')
    .option('--offset <n>', 'skip this many results', '0')
    .option('--all-words', 'every word must match (conjunctive)')
    .option(
      '--raw',
      'query language: "phrase", prefix*, AND/OR/NOT, -word, title:/tags:/status:/author:/type:',
    )
    .option('--related [hops]', 'add items linked to the hits, up to 1-3 links away')
    .addOption(new Option('--group-by <key>', 'group results').choices(['type']))
    .option('--content', 'include full content')
    .option('--scores', 'include scores')
    .option('--json', 'print JSON')
    .option('--no-server', 'answer here even when a `serve` of this backlog is running')
    .action(async (words: string[], o, cmd: Command) => {
      const request = {
        ...filtersFrom(o),
        sort: o.sort,
        limit: o.limit,
        offset: o.offset,
        conjunctive: Boolean(o.allWords),
        match_mode: o.raw ? ('raw' as const) : ('simple' as const),
        include_related: o.related !== undefined,
        max_hops: typeof o.related === 'string' ? o.related : undefined,
        group_by: o.groupBy,
        include_content: Boolean(o.content),
        include_scores: Boolean(o.scores),
      };
      const query = words.join(' ');
      const remote =
        o.server !== false && !o.project
          ? await askRunningServer(cmd, '/search', { query, ...request })
          : undefined;
      const res =
        (remote as Awaited<ReturnType<BacklogService['searchUnified']>> | undefined) ??
        (await searchHere(cmd, query, request, o));
      const { formatSearch } = await formats();
      const flags = await filterFlags(o);
      await print(o.json, res, (style) => formatSearch(res, style, flags, Number(o.offset)), cmd);
    });

  program
    .command('get')
    .description('show items by id, resource URI or path')
    .argument('<ids...>')
    .option('--project <names>', 'with several backlogs: where a bare id is looked up')
    .option('--json', 'print JSON')
    .action(async (ids: string[], o, cmd: Command) => {
      const service = await openMany(cmd, undefined, false); // no search or list options: no zod
      const entries =
        'projects' in service ? service.get(ids, await projectOption(service, o)) : service.get(ids);
      const { formatGet } = await formats();
      await print(
        o.json,
        entries.length === 1 && entries[0].status === 'ok' ? entries[0].item : entries,
        (style) => formatGet(entries, style),
        cmd,
      );
      if (entries.every((e) => e.status === 'error')) process.exitCode = 2;
    });

  filterOptions(
    program.command('list').description('list items matching filters, most recently updated first'),
  )
    .addOption(
      new Option(
        '--sort <key>',
        'updated or created (newest first), id or title (A-Z), priority (critical first), status (board order)',
      )
        .choices([...LIST_SORTS])
        .default('updated'),
    )
    .option('-n, --limit <n>', 'items per page (1-1000)', '50')
    .option('--offset <n>', 'skip this many items', '0')
    .option('--json', 'print JSON')
    .option('--no-server', 'answer here even when a `serve` of this backlog is running')
    .action(async (o, cmd: Command) => {
      const request = { ...filtersFrom(o), sort: o.sort, limit: o.limit, offset: o.offset };
      const remote =
        o.server !== false && !o.project ? await askRunningServer(cmd, '/tasks', request) : undefined;
      const res =
        (remote as ReturnType<BacklogService['list']> | undefined) ?? (await listHere(cmd, request, o));
      const { formatList } = await formats();
      const flags = await filterFlags(o);
      await print(o.json, res, (style) => formatList(res, style, flags, Number(o.offset)), cmd);
    });

  program
    .command('index')
    .description('read every file and rebuild the index, with progress')
    .action(async (_o, cmd: Command) => {
      const started = performance.now();
      const service = await open(cmd, 'index');
      const d = service.diagnostics();
      process.stdout.write(
        `Indexed ${d.items} items (${Object.entries(d.by_type)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')}) in ${Math.round(performance.now() - started)} ms; ${d.files.length} diagnostics.\n`,
      );
      if (d.embeddings.buildNote) process.stderr.write(`note: ${d.embeddings.buildNote}\n`);
      for (const w of d.embeddings.warnings) process.stderr.write(`warning: ${w}\n`);
    });

  program
    .command('diagnostics')
    .description('report files that did not fit the schema, with a summary line per kind')
    .addOption(
      new Option('--level <level>', 'show findings at this level or worse')
        .choices([...DIAGNOSTIC_LEVELS])
        .default('warning'),
    )
    .option('--json', 'print JSON (findings filtered by --level)')
    .action(async (o, cmd: Command) => {
      const service = await open(cmd, 'oneshot', false, undefined, false); // no options to read: no zod
      // The embeddings' state as a search would find it (read from .cache/, no model loaded).
      await service.semanticReady();
      const d = service.diagnostics();
      const level = o.level as DiagnosticLevel;
      const { formatDiagnostics } = await formats();
      await print(
        o.json,
        { ...d, files: d.files.filter((f) => atLeast(f.level, level)) },
        (style) => formatDiagnostics(d, level, style),
        cmd,
      );
    });

  program
    .command('eval')
    .description('evaluate ranking on a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)')
    .argument('<dir>')
    .option('--split <split>', 'qrels split', 'test')
    .addOption(
      new Option('--mode <mode>', 'retrieval mode').choices(['bm25', 'semantic', 'hybrid']).default('bm25'),
    )
    .option('--json', 'print one JSON object')
    .action(async (dir: string, o, cmd: Command) => {
      const { loadBeir } = await import('../eval/beir.js');
      const { embeddingRetriever, formatReport, oramaServiceRetriever, runEval } =
        await import('../eval/run-eval.js');
      const dataset = await loadBeir(resolve(dir), o.split);
      if (o.mode === 'bm25') {
        const report = await runEval(dataset, oramaServiceRetriever());
        await print(o.json, { ...report, mode: 'bm25' }, () => formatReport(report, 'bm25'));
        return;
      }
      const { embeddings } = cmd.optsWithGlobals<GlobalOptions>();
      const retriever = embeddingRetriever(o.mode, {
        provider: embeddings === 'transformers' || embeddings === 'auto' ? embeddings : 'bundled',
        // Embeddings of the corpus are kept in this project's .cache, never in the dataset's folder.
        cacheDir: resolve('.cache', 'eval-embeddings', basename(resolve(dir))),
      });
      try {
        const report = await runEval(dataset, retriever);
        // The mode that actually ran: without an embedding provider the fused list is BM25 alone.
        const mode = retriever.provider() === 'none' ? 'bm25' : o.mode;
        if (mode !== o.mode) process.stderr.write(`no embedding provider could be loaded; ran ${mode}\n`);
        await print(o.json, { ...report, mode }, () => formatReport(report, mode));
      } finally {
        await retriever.close();
      }
    });

  program
    .command('mcp')
    .description('serve the backlog to an MCP client over stdio (stdout carries the protocol)')
    .option('--no-watch', 'do not follow changes to the files (by default the index follows them)')
    .option('--read-only', 'serve search and get only: no write tool is listed')
    .action(async (o, cmd: Command) => {
      const readOnly = Boolean(o.readOnly);
      const { dir, workspace, embeddings, memoryBudget } = cmd.optsWithGlobals<GlobalOptions>();
      // One backlog named by --dir or BACKLOG_DIR: `initialize` is answered from its config.yml before the
      // MCP SDK and the service are loaded (mcp/early.ts), and the backlog opens while the SDK loads.
      const one = !mayBeWorkspace(dir, workspace);
      const early =
        one && (dir !== undefined || process.env.BACKLOG_DIR)
          ? (await import('../mcp/early.js')).answerBacklogEarly(await resolveDir([dir].flat()[0]), readOnly)
          : undefined;
      if (early) atExit.push(early.release);
      const instructions = await early?.ready; // the answer first: loading the rest would hold it up
      const begun = one ? begin(cmd, 'server', o.watch !== false) : undefined;
      begun?.catch(() => undefined); // awaited below
      const { closeBacklog } = await backlog();
      const { runStdioServer } = await import('../mcp/stdio.js');
      const serverOpen = {
        watch: o.watch !== false,
        embeddings: embeddings as OpenBacklogOptions['embeddings'],
        embedMissing: 'background' as const,
        background: true,
        ...(memoryBudget !== undefined ? { memoryBudgetMb: memoryBudget } : {}),
      };
      // Several backlogs (--dir repeated, NAME=PATH, --workspace): one server over all (docs/workspace.md),
      // answering initialize and tools/list while they are read, as for one.
      const several = one
        ? undefined
        : await (await cliWorkspace()).beginCliWorkspace(dir, workspace, embeddings, serverOpen);
      if (several) {
        const { ws, opened } = several;
        opened.then(
          () =>
            process.stderr.write(
              `backlog-search: MCP over stdio for ${ws.projects.length} backlogs: ${ws.names().join(', ')}\n`,
            ),
          () => undefined, // runStdioServer rejects with the error
        );
        const { closeWorkspace } = await import('../workspace/open-workspace.js');
        try {
          return await runStdioServer(ws, { readOnly, opened });
        } finally {
          await closeWorkspace(ws);
        }
      }
      // initialize and tools/list are answered while the backlog is read; other requests wait for it
      // (not for the watcher, which starts after the read).
      const { service, read, opened } = await (begun ?? begin(cmd, 'server', o.watch !== false));
      opened.then(
        () =>
          process.stderr.write(
            `backlog-search: MCP over stdio for ${service.dir} (${service.size} items${readOnly ? ', read-only' : ''})\n`,
          ),
        () => undefined, // runStdioServer rejects with the error
      );
      // No --dir and no BACKLOG_DIR: the client's roots, when it has any (mcp/roots.ts); this backlog meanwhile.
      const roots =
        dir === undefined && !process.env.BACKLOG_DIR
          ? await (await import('../mcp/roots.js')).followRoots(service, serverOpen)
          : undefined;
      try {
        await runStdioServer(roots?.ws ?? service, {
          readOnly,
          opened: read,
          ...(early ? { stdio: early, instructions } : {}),
          ...(roots ? { roots: true, warnings: roots.takeWarnings, watch: roots.watchServer } : {}),
        });
      } finally {
        // A client gone while the backlog is read or the watcher starts: closeBacklog stops what is left of
        // the open and waits for the rest; an embedding in flight is abandoned (docs/mcp.md, "Exit").
        await (roots ? roots.close() : closeBacklog(service));
      }
    });

  program
    .command('serve')
    .description('serve the web viewer at /, the HTTP API (/search, /tasks, /events) and MCP at /mcp')
    .option('--port <n>', 'port (0 picks a free one)', '3030')
    .option('--host <host>', 'interface to bind; 127.0.0.1 keeps it on this machine', '127.0.0.1')
    .option(
      '--allow-host <names>',
      'extra Host header names to accept, comma-separated (DNS-rebinding guard)',
    )
    .option(
      '--allow-origin <origins>',
      'extra browser origins to accept, comma-separated, e.g. https://app.example.com',
    )
    .option('--no-watch', 'do not follow changes to the files (by default the index follows them)')
    .option('--viewer-dir <path>', 'serve the viewer from this folder (default: the built one, dist/viewer)')
    .option(
      '--token <secret>',
      'bearer token every API and MCP request must carry (default: $BACKLOG_TOKEN); required with a --host beyond loopback',
    )
    .option('--read-only', 'serve search and get only: no write tool is listed')
    .action(async (o, cmd: Command) => {
      const token: string | undefined = o.token ?? (process.env.BACKLOG_TOKEN || undefined);
      const { checkAccess } = await import('../http/auth.js');
      checkAccess(o.host, token);
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new BacklogError(
          'INVALID_FILTER',
          `--port ${o.port} is not a port number`,
          'Pass an integer from 0 to 65535 (0 picks a free port).',
          { field: 'port' },
        );
      // A signal while the backlogs are read (a first start or a rebuild can take a while) stops at once;
      // once serving, it stops gracefully (below).
      let serving = false;
      const signalled = new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      void signalled.then(() => {
        if (serving) return;
        process.stderr.write('backlog-search: stopped while reading the backlog\n');
        process.exit(0);
      });
      const slow = setTimeout(() => process.stderr.write('backlog-search: reading the backlog...\n'), 1000);
      slow.unref();
      const { closeBacklog } = await backlog();
      // Several backlogs (--dir repeated, NAME=PATH, --workspace): one Workspace behind every route.
      const ws = await serveWorkspace(cmd, o.watch !== false);
      const service = ws ?? (await open(cmd, 'server', o.watch !== false));
      clearTimeout(slow);
      const close = async () => {
        if (ws) await (await import('../workspace/open-workspace.js')).closeWorkspace(ws);
        else await closeBacklog(service as BacklogService);
      };
      const { startHttpServer } = await import('../http/server.js');
      const list = (v: unknown) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined;
      const running = await startHttpServer({
        service,
        host: o.host,
        port,
        allowedHosts: list(o.allowHost),
        allowedOrigins: list(o.allowOrigin),
        viewerDir: o.viewerDir ? resolve(o.viewerDir) : undefined,
        token,
        readOnly: Boolean(o.readOnly),
      }).catch(async (err: NodeJS.ErrnoException) => {
        await close();
        if (err.code === 'EADDRINUSE')
          throw new BacklogError(
            'CONFLICT',
            `${o.host}:${port} is already in use`,
            'Pass another --port (0 picks a free one), or stop the other server.',
            { field: 'port' },
          );
        throw err;
      });
      // One-shot searches of these folders ask this server (src/http/discovery.ts); loopback only.
      const { registerServer } = await import('../http/discovery.js');
      const { embeddings } = cmd.optsWithGlobals<GlobalOptions>();
      const unregister = ['127.0.0.1', 'localhost', '::1', '0.0.0.0'].includes(o.host)
        ? registerServer(
            ws
              ? ws.projects.map((p) => ({ dir: p.dir, project: p.name }))
              : [{ dir: (service as BacklogService).dir }],
            {
              port: running.port,
              host: o.host,
              token,
              version: VERSION,
              embeddings: embeddings ?? process.env.BACKLOG_EMBEDDINGS ?? 'auto',
            },
          )
        : () => undefined;
      process.once('exit', unregister);
      const { findViewerDir } = await import('../http/viewer.js');
      process.stderr.write(
        `backlog-search: serving ${ws ? ws.projects.map((p) => `${p.name} (${p.dir})`).join(', ') : (service as BacklogService).dir} (${service.size} items${o.watch !== false ? ', watching for changes' : ''}) at ${running.url}\n` +
          `Viewer: ${running.url}/${token ? `#token=${encodeURIComponent(token)}` : ''}${o.viewerDir || findViewerDir() ? '' : ' (not built: run npm run build)'}\n` +
          `API: ${running.url}/search?q=... , /tasks, /events\nMCP (Streamable HTTP): ${running.url}/mcp\n` +
          (token ? 'Every API and MCP request needs the header "Authorization: Bearer <token>".\n' : '') +
          (o.readOnly ? 'Read-only: no write tool is listed.\n' : ''),
      );
      if (!['127.0.0.1', 'localhost', '::1'].includes(o.host) && !o.allowHost) {
        process.stderr.write(
          `note: bound to ${o.host}, but only localhost Host headers are accepted; add --allow-host <name> for the names clients use.\n`,
        );
      }
      serving = true;
      await signalled;
      // Stopping waits for open connections and writes the persisted index; a second signal, or a stop
      // that takes over 10 s, ends the process at once (the index is derived, the files are written atomically).
      const now = (why: string) => {
        process.stderr.write(`backlog-search: ${why}; stopping now\n`);
        process.exit(1);
      };
      process.once('SIGINT', () => now('a second signal'));
      process.once('SIGTERM', () => now('a second signal'));
      setTimeout(() => now('still stopping after 10 s'), STOP_DEADLINE_MS).unref();
      unregister();
      await running.close();
      await close();
    });

  return program;
}

/**
 * A reader that stops early (`| head -1`) closes the pipe; the next write fails with EPIPE. Stop
 * quietly then, with status 0, as cat and grep do: nobody is left to read the rest.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

/**
 * Exit status: 0 done; 2 the input was wrong (a usage error from the argument parser, or a coded
 * error such as INVALID_FILTER or NOT_FOUND); 1 anything else (INTERNAL, a bug).
 */
export async function main(argv = process.argv): Promise<void> {
  exitQuietlyOnClosedPipe(process.stdout);
  exitQuietlyOnClosedPipe(process.stderr);
  const json = argv.includes('--json');
  try {
    try {
      await buildProgram().parseAsync(argv);
    } catch (err) {
      const why = droppedCacheReason(err);
      if (why === undefined) throw err;
      // The persisted index was deleted: the command once more, from the files (nothing was printed yet:
      // a command prints once it has its answer).
      earlyStart?.dropEarlyPool();
      await Promise.all(oneShots.splice(0).map((s) => s.close().catch(() => undefined)));
      process.stderr.write(
        `warning cache_rebuilt: persisted index not used: ${why}; rebuilt from the files\n`,
      );
      await buildProgram().parseAsync(argv);
    }
    await Promise.all(oneShots.map((s) => s.close()));
  } catch (err) {
    // What a failed command opened is closed: a model still loading for it would hold the exit.
    earlyStart?.dropEarlyPool();
    await Promise.all(oneShots.map((s) => s.close().catch(() => undefined)));
    if (err instanceof CommanderError) {
      // The parser already printed its message (and the help) on stderr; --help and --version exit 0.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      if (json && err.exitCode !== 0) {
        const usage = new BacklogError(
          'INVALID_INPUT',
          err.message.replace(/^error: /, ''),
          'Run the command with --help for its options.',
        );
        process.stdout.write(`${JSON.stringify({ status: 'error', error: usage.toJSON() }, null, 2)}\n`);
      }
      return;
    }
    const e = isBacklogError(err)
      ? err
      : new BacklogError(
          'INTERNAL',
          (err as Error).message ?? String(err),
          'This is a bug; please report it with the command you ran.',
        );
    if (json) process.stdout.write(`${JSON.stringify({ status: 'error', error: e.toJSON() }, null, 2)}\n`);
    else process.stderr.write(`error ${e.code}: ${e.message}\nhint: ${e.hint}\n`);
    process.exitCode = e.code === 'INTERNAL' ? 1 : 2;
  } finally {
    for (const done of atExit.splice(0)) done();
  }
}
