/**
 * The judged dev set on a real Backlog.md folder (docs/devset.md): where it lives, its queries, the
 * documents every system ranks, and the filters a query may carry, read the way a Backlog.md user means them.
 *
 * Documents are keyed by their path relative to the backlog folder (`completed/back-72 - ....md`), never by
 * the ids the engine gives them today: paths are stable, ids are being reworked.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadJudgedQueries } from '../../src/eval/beir.js';
import { TEXT_EXTENSIONS, fileType } from '../../src/storage/parse.js';
import { parseFile } from '../../src/storage/parse-file.js';
import { loadTaskSchema } from '../../src/storage/schema.js';
import { detectFormat } from '../../src/storage/formats/detect.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The judged set in the repo (BEIR layout: queries.jsonl, qrels/dev.tsv; the corpus is the folder below). */
export const DEVSET_DIR = join(ROOT, 'bench', 'devset', 'backlog-md');
export const DEVSET_SPLIT = 'dev';

/** The Backlog.md folder the set is judged on: `$BACKLOG_EVAL_DIR/backlog-md`, default ../shared/eval/backlog-md. */
export function backlogSourceDir(): string {
  return resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'), 'backlog-md');
}

export const CLASSES = ['navigation', 'lexical', 'filtered', 'aboutness', 'tail', 'resource'] as const;
export type QueryClass = (typeof CLASSES)[number];

/** The filters a dev-set query may carry, in searchUnified's option names. */
export interface DevsetFilters {
  status?: string[];
  tags?: string[];
  folder?: string[];
  types?: ('task' | 'resource')[];
}

export interface DevsetQuery {
  id: string;
  text: string;
  class: QueryClass;
  options?: DevsetFilters;
}

export interface Devset {
  queries: DevsetQuery[];
  /** query id -> (path -> grade 0-3); every pooled document is judged, grade 0 included. */
  qrels: Map<string, Map<string, number>>;
}

const FILTER_KEYS = new Set(['status', 'tags', 'folder', 'types']);

/** Loads queries.jsonl and qrels/dev.tsv, checking each query's class and options. */
export async function loadDevset(dir = DEVSET_DIR): Promise<Devset> {
  const { queries, qrels } = await loadJudgedQueries(dir, DEVSET_SPLIT);
  return {
    qrels,
    queries: queries.map((q) => {
      const cls = q.fields.class;
      if (!CLASSES.includes(cls as QueryClass))
        throw new Error(`query ${q.id}: class "${String(cls)}" unknown`);
      const options = q.fields.options as DevsetFilters | undefined;
      for (const [key, value] of Object.entries(options ?? {})) {
        if (!FILTER_KEYS.has(key) || !Array.isArray(value) || value.some((v) => typeof v !== 'string'))
          throw new Error(
            `query ${q.id}: option ${key} must be one of ${[...FILTER_KEYS].join(', ')}, a list of strings`,
          );
      }
      return { id: q.id, text: q.text, class: cls as QueryClass, ...(options ? { options } : {}) };
    }),
  };
}

/** One file of the backlog as the baselines index it and the filters read it. */
export interface DevsetDoc {
  /** Path relative to the backlog folder, `/`-separated: the corpus id of the qrels. */
  path: string;
  title: string;
  body: string;
  /** Front matter `id` (BACK-72, DRAFT-7, doc-002, decision-1, m-7) or ''. */
  fmId: string;
  status: string | null;
  tags: string[];
  /** task: id with the config's task_prefix (tasks/, completed/, archive/tasks/); draft: DRAFT-n; else resource. */
  kind: 'task' | 'draft' | 'resource';
}

async function walk(dir: string, root: string, out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) await walk(full, root, out);
    else if (entry.isFile() && TEXT_EXTENSIONS.has(fileType(entry.name)))
      out.push(relative(root, full).split(sep).join('/'));
  }
}

/** Every text file of the backlog folder (what the engine indexes), parsed by the product's own parser in the folder's format. */
export async function readDocs(dir = backlogSourceDir()): Promise<DevsetDoc[]> {
  const paths: string[] = [];
  await walk(dir, dir, paths);
  paths.sort();
  const config = await readFile(join(dir, 'config.yml'), 'utf8').catch(() => '');
  const prefix = /^task_prefix:\s*["']?([A-Za-z]+)/m.exec(config)?.[1] ?? 'task';
  const taskId = new RegExp(`^${prefix}-\\d`, 'i');
  // Read in the folder's own format, as the engine reads it (Backlog.md quotes `reporter: @name`).
  const format = await detectFormat(dir);
  await loadTaskSchema();
  const docs: DevsetDoc[] = [];
  for (const path of paths) {
    const full = join(dir, path);
    const [text, st] = await Promise.all([readFile(full, 'utf8'), stat(full)]);
    const { item } = parseFile({ path, size: st.size, mtime_ms: st.mtimeMs }, text, format);
    if (!item) continue;
    const fmId = typeof item.frontmatter.id === 'string' ? item.frontmatter.id : '';
    docs.push({
      path,
      title: item.title,
      body: item.body,
      fmId,
      status: item.status,
      tags: item.tags,
      kind: taskId.test(fmId) ? 'task' : /^draft-\d/i.test(fmId) ? 'draft' : 'resource',
    });
  }
  return docs;
}

/**
 * The filters as a Backlog.md user means them, the truth the judgments follow: status and labels compared
 * case-insensitively ("To do" is "To Do", as Backlog.md itself groups them), a folder with everything
 * beneath it, `task` for every Backlog.md task wherever it lives (tasks/, completed/, archive/tasks/) and
 * `resource` for documents, decisions, milestones and the other files (drafts are neither).
 */
export function matchesFilters(doc: DevsetDoc, f: DevsetFilters | undefined): boolean {
  if (!f) return true;
  const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());
  if (f.status && !(doc.status && lower(f.status).includes(doc.status.toLowerCase()))) return false;
  if (f.tags && !lower(doc.tags).some((t) => lower(f.tags!).includes(t))) return false;
  if (f.folder && !f.folder.some((d) => doc.path.startsWith(d.replace(/\/+$/, '') + '/'))) return false;
  if (f.types && !(f.types as string[]).includes(doc.kind)) return false;
  return true;
}

/** A fingerprint of the folder's files (paths, sizes, mtimes): a copy made from another state is remade. */
async function fingerprint(dir: string): Promise<string> {
  const paths: string[] = [];
  await walk(dir, dir, paths);
  paths.sort();
  const hash = createHash('sha256');
  for (const p of paths) {
    const st = await stat(join(dir, p));
    hash.update(`${p}\t${st.size}\t${Math.floor(st.mtimeMs)}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A copy of the backlog folder in the temp dir for the engine to open (it writes `.cache/` next to the
 * files; the shared folder is never written). `persistent`: the same copy is kept between runs
 * (`$TMPDIR/backlog-search-devset/<fingerprint>`), so its embedding cache survives; else a fresh one.
 */
export async function backlogCopy(
  source = backlogSourceDir(),
  { persistent = false } = {},
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const print = await fingerprint(source);
  const base = join(
    tmpdir(),
    'backlog-search-devset',
    persistent ? print : `${print}-${process.pid}-${Date.now()}`,
  );
  const dir = join(base, 'backlog-md');
  const mark = join(base, 'copied');
  if (!(persistent && (await stat(mark).catch(() => null)))) {
    await rm(base, { recursive: true, force: true });
    await mkdir(base, { recursive: true });
    await cp(source, dir, { recursive: true, filter: (src) => !src.split(sep).includes('.cache') });
    await writeFile(mark, print);
  }
  const cleanup = persistent
    ? async () => {}
    : () => rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  return { dir, cleanup };
}
