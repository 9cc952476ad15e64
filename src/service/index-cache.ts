/**
 * The persisted index: everything `openBacklog` derives from the files (parsed items, diagnostics, the
 * Orama index) in one file under `.cache/`, so a restart re-reads only the files that changed.
 *
 * Layout: 8 magic bytes, an HMAC-SHA256 of the body (32 bytes), then the body, not compressed (a
 * short-lived command reads it in a few ms; gunzip took longer than everything else it read):
 * - 4 bytes (uint32 LE): the length of a JSON header `{ version, sections: [name, bytes][] }`, then it
 *   (spaces after it, so that the first section starts at a multiple of 8 bytes in the file);
 * - `index`: OramaSearchService.serialize(), as it was handed over (decoded only when first searched):
 *   its binary leaves lie at multiples of 8 (packed.ts), and the index reads its arrays where they lie;
 * - `meta`: the item table's columns (ItemTable: ids, paths, statuses, where each item ends in `items`
 *   and `frontmatter`, each body's length in bytes) and the files' sizes and times, packed
 *   (src/search/packed.ts: strings as JSON read by the native JSON.parse, numbers as binary leaves);
 * - `items`: the items without their bodies and front matter, a packed list (packList);
 * - `frontmatter`: each item's front matter, packed apart: the only part with values JSON has not
 *   (dates, NaN), which unpack then walks for;
 * - `bodies`: each body in UTF-8, one after the other (`bodyBytes`: each one's length in bytes), each
 *   decoded when first read (withBodies);
 * - `diagnostics`: the files' diagnostics, packed, decoded when first read (a search never reads them;
 *   a 50,000-file backlog with a warning per file had 12 MB of them);
 * - `routes`: the items' id routes (IdRouter.saveRoutes, the items routed in their order), which a
 *   one-shot's restore looks keys up in instead of routing every item.
 * A wrong magic, a signature mismatch (truncated, corrupt, or not written by this user on this
 * machine) or another version (schema, settings or format changed) makes the cache unusable; the
 * caller rebuilds from the files.
 *
 * The cache sits inside the backlog folder, which arrives with `git pull`: the HMAC key lives outside
 * it (`~/.config/backlog-search/cache-key`, mode 0600), so a cache someone else made is never read. A
 * stamp beside the file spares re-reading the whole signature while the file is unchanged (cache-file.ts).
 * What a valid cache holds is still checked against the files (BacklogService keeps only items whose
 * files are inside the root now). `.cache/` gets a `.gitignore` of its own when it is created.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { IdRouter } from '../search/id-routing.js';
import { pack, packList, pad, unpack, unpackElement } from '../search/packed.js';
import { lazyProperty } from '../storage/lazy.js';
import { readBytes } from '../storage/unread-bytes.js';
import { writeFileAtomicStat } from '../storage/write-file.js';
import { readSignedFile, signatureOf, signedFile, stampSignedFile } from './cache-file.js';
import { TASK_STATES, type BacklogItem, type Diagnostic, type TaskState } from '../storage/types.js';
import { updatedMsOf } from './item-store.js';

import { VERSION } from '../version.js';

/**
 * Bump when the layout of the cache or of the index inside it changes. 3: the BM25F fields as binary
 * (term dictionary, forward index and document frequencies; FIELD_INDEX_FORMAT 2). 4: signed with a
 * key kept outside the backlog (HMAC-SHA256 instead of an unkeyed SHA-1). 5: items carry `state`, the
 * index a `state` filter key and status keys in every spelling (`in progress`). 6: terms per language
 * and script (word boundaries from Intl.Segmenter, per-language stemming), each document's language
 * and the index's language plan. 7: headings as a text field. 8: resource ids are URIs with spaces
 * and other unsafe characters %-encoded. 9: Latin terms keep their marks, with folded twins (`~ban`);
 * languages without rules (vietnamese, czech, ...). 10: documents have the state key `none`; a duplicate
 * id's later file is `ID@state`, not its URI. 11: a sub-task's lineage goes through the copy of its parent
 * in its own state (`BACK-76@archived`) and through an older prefix (`task-76`). 12: each text field's radix
 * tree as bytes of its own, decoded when first used. 13: sections instead of one gzipped msgpack (bodies as
 * one UTF-8 run), and packed JSON instead of msgpack, the index's and its trees' too. 14: ASCII bodies and the
 * others in two sections, each decoded as one string. 15: the index holds the analyzer's run caches
 * (TextAnalyzer.savedRuns), so a restored process's first snippets do not stem every word anew. 16: one
 * `bodies` section with each body's length in bytes, each body decoded when first read; the index first,
 * at a multiple of 8 bytes, its leaves too (packed.ts), read where they lie. 17: the diagnostics in a section of
 * their own, decoded when first read; the index's stored documents and its filter trees as bytes of their
 * own, decoded when first read (orama-components.ts); packed JSON always ASCII (no check on read).
 * 18: the index holds the bodies prepared for snippets beside the lexical index (ResultStore.savePrepared,
 * saved-snippets.ts).
 * 19: the index and the body field's postings and sequences are leaves that unpack leaves unread (packed.ts
 * `Unread`): a file whose stamp matches is read when first needed (unread-bytes.ts), a term's postings
 * when it is first looked up.
 * 20: the saved bodies' runs and occurrences as SnippetText's own uint32 arrays, read in place.
 * 21: the items and their front matter in sections of their own, each item readable alone (packed.ts
 * packList), with the items' ids, paths, titles and statuses as columns in `meta` (ItemTable): a one-shot decodes
 * the items it shows.
 * 22: the items' id routes in a section of their own (`routes`: IdRouter.saveRoutes), looked up where they
 * lie by a one-shot instead of routing every item at its start; `meta`'s numbers as binary leaves, the
 * statuses as codes of their names, no titles, the files' paths only when they are not the items'.
 * 23: each item's state (a code: its index in TASK_STATES, their count for none) and date (`updatedMsOf`) as
 * columns too: a one-shot `list` decodes the items it shows.
 */
export const CACHE_FORMAT = 23;
const HEADER_BYTES = 4;
/** A header is a version and seven section lengths: anything longer is not one of ours. */
const MAX_HEADER_BYTES = 4096;
const SECTIONS = ['index', 'meta', 'items', 'frontmatter', 'bodies', 'diagnostics', 'routes'] as const;

export interface FileStat {
  size: number;
  mtime_ms: number;
}

export interface CacheSnapshot {
  files: Record<string, FileStat>;
  items: BacklogItem[];
  diagnostics: Diagnostic[];
  index: Uint8Array;
}

/**
 * The cached items by position, each decoded when first asked for: their ids, paths and statuses are
 * columns read with the header (a one-shot search checks paths without the items).
 */
export interface ItemTable {
  readonly ids: readonly string[];
  readonly paths: readonly string[];
  /** Made from the status column when first read. */
  readonly statuses: readonly (string | null)[];
  /** Made from the state column when first read. */
  readonly states: readonly (TaskState | null)[];
  /** Each item's `updatedMsOf`: when it last changed (list's order). */
  readonly updated: ArrayLike<number>;
  /** Item `i` (its body decoded when first read), as the whole `items` list has it; throws when malformed. */
  item(i: number): BacklogItem;
}

/** The version a BacklogService writes: its search settings and the words budget shape what is cached. */
export function serviceCacheVersion(settings: unknown, maxWordsPerFile: number, format: string): string {
  return cacheVersion({ settings, maxWordsPerFile, format });
}

/** Version of a cache: any change of format, schema or settings gives another. */
export function cacheVersion(parts: unknown): string {
  return createHash('sha1')
    .update(JSON.stringify({ format: CACHE_FORMAT, version: VERSION, parts }))
    .digest('hex');
}

/**
 * Makes `dir` (a cache folder) with a `.gitignore` that keeps everything in it out of git. Inside `root`
 * (the backlog's folder) only the levels below `root` are made: a backlog deleted while its service was
 * open is not made again by a cache write that was already under way (it fails with ENOENT instead).
 */
export async function ensureCacheDir(dir: string, root?: string): Promise<void> {
  const below = root === undefined ? '..' : relative(root, dir);
  if (below === '' || below.startsWith('..') || isAbsolute(below)) await mkdir(dir, { recursive: true });
  else {
    let level = root!;
    for (const part of below.split(sep)) {
      level = join(level, part);
      await mkdir(level).catch(unlessExists);
    }
  }
  await writeFile(
    join(dir, '.gitignore'),
    '# Derived data of backlog-search: safe to delete, never commit.\n*\n',
    {
      flag: 'wx',
    },
  ).catch(unlessExists);
}

function unlessExists(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EEXIST') throw err;
}

export async function writeIndexCache(
  path: string,
  version: string,
  snapshot: CacheSnapshot,
  /** The backlog's folder: levels of the cache folder above it are never made (ensureCacheDir). */
  root?: string,
): Promise<number> {
  await ensureCacheDir(dirname(path), root);
  const { files, items, diagnostics, index } = snapshot;
  // Each body encoded on its own (a lone surrogate at the end of one and at the start of the next
  // would otherwise be encoded as one character of both), and decoded on its own when first read.
  const bodies = items.map((item) => Buffer.from(item.body, 'utf8'));
  const listed = packList(items.map((item) => ({ ...item, body: '', frontmatter: {} })));
  const frontmatter = packList(items.map((item) => item.frontmatter));
  const filePaths = Object.keys(files);
  const paths = items.map((item) => item.path);
  // Each status once, and each item's as a number (a column of 50,000 strings was parsed at every start).
  const statusNames: (string | null)[] = [];
  const statusCode = new Map<string | null, number>();
  const statusAt = Uint32Array.from(items, ({ status = null }) => {
    if (!statusCode.has(status)) statusCode.set(status, statusNames.push(status) - 1);
    return statusCode.get(status)!;
  });
  // Strings as JSON, numbers as binary leaves (read where they lie); the files' paths only when they are
  // not the items' (a service writes one file per item, in the items' order).
  const meta = pack({
    ...(filePaths.length === paths.length && filePaths.every((p, i) => p === paths[i]) ? {} : { filePaths }),
    fileSizes: Float64Array.from(filePaths, (p) => files[p].size),
    fileMtimes: Float64Array.from(filePaths, (p) => files[p].mtime_ms),
    bodyBytes: Float64Array.from(bodies, (b) => b.length),
    ids: items.map((item) => item.id),
    paths,
    statusNames,
    statusAt,
    stateAt: Uint32Array.from(items, ({ state }) => stateCode(state)),
    updated: Float64Array.from(items, updatedMsOf),
    itemEnds: listed.ends,
    frontmatterEnds: frontmatter.ends,
  });
  const sections = [
    index,
    meta,
    listed.bytes,
    frontmatter.bytes,
    Buffer.concat(bodies),
    pack(diagnostics),
    IdRouter.saveRoutes(items),
  ];
  const json = JSON.stringify({
    version,
    sections: SECTIONS.map((name, i) => [name, sections[i].byteLength]),
  });
  // Spaces after the header put the index at a multiple of 8 bytes, its arrays read where they lie.
  const header = Buffer.from(json + ' '.repeat(pad(HEADER_BYTES + Buffer.byteLength(json))));
  const length = Buffer.alloc(HEADER_BYTES);
  length.writeUInt32LE(header.length);
  const body = Buffer.concat([length, header, ...sections]);
  const bytes = await signedFile(body);
  const stat = await writeFileAtomicStat(path, bytes);
  await stampSignedFile(path, stat, signatureOf(bytes));
  return bytes.length;
}

/**
 * The snapshot, or why there is none (`missing` is not worth a warning; the rest is). `table`: the items
 * one by one (ItemTable). With `lazyItems`, `snapshot.items` is decoded when first read, and throws then
 * when malformed (the caller reads it where it can fall back); else now (a malformed list: no snapshot).
 */
export async function readIndexCache(
  path: string,
  version: string,
  { lazyItems = false }: { lazyItems?: boolean } = {},
): Promise<
  | { snapshot: CacheSnapshot; table: ItemTable; files: FileColumns; routes: Uint8Array }
  | { reason: string; missing?: boolean }
> {
  const read = await readSignedFile(path);
  if (!('body' in read)) return read;
  const { body } = read;
  try {
    const sections = readSections(body);
    if (sections.version !== version) return { reason: 'made with other settings or an older version' };
    const meta = readMeta(unpack(sections.meta));
    const bodyOf = bodyReader(meta.bodyBytes, sections.bodies);
    const table = itemTable(meta, sections, bodyOf);
    const snapshot = { index: sections.index } as unknown as CacheSnapshot;
    const files = { paths: meta.filePaths, sizes: meta.fileSizes, mtimes: meta.fileMtimes };
    lazyFiles(snapshot, files);
    lazyItemList(snapshot, () => allItems(meta, sections, bodyOf));
    if (!lazyItems) void snapshot.items;
    lazyDiagnostics(snapshot, sections.diagnostics);
    return { snapshot, table, files, routes: sections.routes };
  } catch (err) {
    return { reason: `unreadable (${(err as Error).message})` };
  }
}

/** The files the cache was made from, as columns: path `i`'s size and modification time. */
export interface FileColumns {
  paths: readonly string[];
  sizes: ArrayLike<number>;
  mtimes: ArrayLike<number>;
}

/** `meta` as read: the files, each body's length in bytes, the item columns and where each item ends. */
interface Meta {
  filePaths: string[];
  fileSizes: Float64Array;
  fileMtimes: Float64Array;
  bodyBytes: Float64Array;
  ids: string[];
  paths: string[];
  statusNames: (string | null)[];
  statusAt: Uint32Array;
  /** Each item's state as its index in TASK_STATES, their count for none. */
  stateAt: Uint32Array;
  updated: Float64Array;
  itemEnds: Uint32Array;
  frontmatterEnds: Uint32Array;
}

/** A binary leaf of `n` numbers as a typed array (a view where it lies, a copy when it lies unaligned). */
function numbers<T extends Float64Array | Uint32Array>(
  leaf: unknown,
  Kind: { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number },
  n: number,
): T {
  const size = Kind.BYTES_PER_ELEMENT;
  if (!(leaf instanceof Uint8Array) || leaf.byteLength !== n * size)
    throw new Error('a malformed item table');
  const bytes = leaf.byteOffset % size === 0 ? leaf : Uint8Array.prototype.slice.call(leaf);
  return new Kind(bytes.buffer, bytes.byteOffset, n);
}

/** An item's state as the item table's column holds it: its index in TASK_STATES, their count for none. */
function stateCode(state: TaskState | null | undefined): number {
  return state ? TASK_STATES.indexOf(state) : TASK_STATES.length;
}

/**
 * `meta` checked: a column of each per item (a number column of the files per file), strings where
 * strings are, the lists' ends increasing, each status one of the names and each state a code.
 */
function readMeta(value: unknown): Meta {
  const meta = (value ?? {}) as Record<keyof Meta, unknown>;
  const strings = (list: unknown, n: number): list is string[] =>
    Array.isArray(list) && list.length === n && list.every((s) => typeof s === 'string');
  const n = Array.isArray(meta.ids) ? meta.ids.length : -1;
  const filePaths = meta.filePaths === undefined ? meta.paths : meta.filePaths;
  const files = Array.isArray(filePaths) ? filePaths.length : -1;
  if (
    !strings(meta.ids, n) ||
    !strings(meta.paths, n) ||
    !strings(filePaths, files) ||
    !Array.isArray(meta.statusNames) ||
    !meta.statusNames.every((s) => s === null || typeof s === 'string')
  )
    throw new Error('a malformed item table');
  const statusAt = numbers(meta.statusAt, Uint32Array, n);
  const itemEnds = numbers(meta.itemEnds, Uint32Array, n);
  const frontmatterEnds = numbers(meta.frontmatterEnds, Uint32Array, n);
  const increasing = (ends: Uint32Array) => ends.every((end, i) => (i === 0 ? end > 0 : end > ends[i - 1]));
  const stateAt = numbers(meta.stateAt, Uint32Array, n);
  const names = meta.statusNames.length;
  if (
    !increasing(itemEnds) ||
    !increasing(frontmatterEnds) ||
    !statusAt.every((code) => code < names) ||
    !stateAt.every((code) => code <= TASK_STATES.length)
  )
    throw new Error('a malformed item table');
  return {
    filePaths,
    fileSizes: numbers(meta.fileSizes, Float64Array, files),
    fileMtimes: numbers(meta.fileMtimes, Float64Array, files),
    bodyBytes: numbers(meta.bodyBytes, Float64Array, n),
    ids: meta.ids,
    paths: meta.paths,
    statusNames: meta.statusNames as (string | null)[],
    statusAt,
    stateAt,
    updated: numbers(meta.updated, Float64Array, n),
    itemEnds,
    frontmatterEnds,
  };
}

/** `snapshot.files` made from the columns when first read (the indexer compares the columns). */
const lazyFiles = lazyProperty('files', (columns: FileColumns): Record<string, FileStat> => {
  const files: Record<string, FileStat> = {};
  columns.paths.forEach((p, i) => (files[p] = { size: columns.sizes[i], mtime_ms: columns.mtimes[i] }));
  return files;
});

/** `snapshot.items`, made when first read. */
const lazyItemList = lazyProperty('items', (make: () => BacklogItem[]) => make());

/** Every item, from the whole lists (one parse each, faster than one per item); throws when they disagree. */
function allItems(
  meta: Meta,
  sections: Record<'items' | 'frontmatter', Buffer>,
  bodyOf: (item: BacklogItem, i: number) => void,
): BacklogItem[] {
  const items = unpack(sections.items);
  const frontmatter = unpack(sections.frontmatter);
  if (!Array.isArray(items) || !Array.isArray(frontmatter) || items.length !== meta.ids.length)
    throw new Error('items and front matter disagree');
  if (frontmatter.length !== items.length) throw new Error('items and front matter disagree');
  items.forEach((item: BacklogItem, i) => {
    if (item && typeof item === 'object') {
      if (!isItsColumns(meta, item, i)) throw new Error(`item ${i} is malformed`);
      item.frontmatter = frontmatter[i] as Record<string, unknown>;
      bodyOf(item, i);
    }
  });
  return items as BacklogItem[];
}

/** Whether item `i` has the id, path, status, state and date its columns say. */
function isItsColumns(meta: Meta, item: BacklogItem, i: number): boolean {
  return (
    item.id === meta.ids[i] &&
    item.path === meta.paths[i] &&
    (item.status ?? null) === meta.statusNames[meta.statusAt[i]] &&
    stateCode(item.state) === meta.stateAt[i] &&
    Object.is(updatedMsOf(item), meta.updated[i])
  );
}

/** The items one by one (ItemTable): an item that is not one, or not its columns', throws. */
function itemTable(
  meta: Meta,
  sections: Record<'items' | 'frontmatter', Buffer>,
  bodyOf: (item: BacklogItem, i: number) => void,
): ItemTable {
  const { ids, paths, updated } = meta;
  let statuses: (string | null)[] | undefined;
  let states: (TaskState | null)[] | undefined;
  return {
    ids,
    paths,
    updated,
    get statuses() {
      return (statuses ??= Array.from(meta.statusAt, (code) => meta.statusNames[code]));
    },
    get states() {
      return (states ??= Array.from(meta.stateAt, (code) => TASK_STATES[code] ?? null));
    },
    item(i) {
      const item = unpackElement(sections.items, meta.itemEnds, i) as BacklogItem;
      if (item === null || typeof item !== 'object' || !isItsColumns(meta, item, i))
        throw new Error(`item ${i} is malformed`);
      item.frontmatter = unpackElement(sections.frontmatter, meta.frontmatterEnds, i) as Record<
        string,
        unknown
      >;
      bodyOf(item, i);
      return item;
    },
  };
}

/** The header and the sections it names, each checked to lie inside the body. */
function readSections(body: Buffer): { version: string } & Record<(typeof SECTIONS)[number], Buffer> {
  readBytes(body, 0, HEADER_BYTES);
  const headerLength = body.length >= HEADER_BYTES ? body.readUInt32LE(0) : Infinity;
  if (headerLength > MAX_HEADER_BYTES || HEADER_BYTES + headerLength > body.length)
    throw new Error('no header');
  readBytes(body, HEADER_BYTES, HEADER_BYTES + headerLength);
  const header = JSON.parse(body.subarray(HEADER_BYTES, HEADER_BYTES + headerLength).toString('utf8')) as {
    version?: unknown;
    sections?: unknown;
  };
  const lengths = Array.isArray(header.sections) ? header.sections : [];
  if (
    typeof header.version !== 'string' ||
    lengths.length !== SECTIONS.length ||
    !lengths.every(
      (s, i) => Array.isArray(s) && s[0] === SECTIONS[i] && Number.isSafeInteger(s[1]) && s[1] >= 0,
    )
  )
    throw new Error('a malformed header');
  let at = HEADER_BYTES + headerLength;
  const out: Record<string, Buffer> = {};
  for (const [name, length] of lengths as [string, number][]) {
    if (at + length > body.length) throw new Error(`section ${name} runs past the end`);
    out[name] = body.subarray(at, at + length);
    at += length;
  }
  if (at !== body.length) throw new Error('bytes after the last section');
  return {
    version: header.version,
    meta: out.meta,
    frontmatter: out.frontmatter,
    items: out.items,
    bodies: out.bodies,
    index: out.index,
    diagnostics: out.diagnostics,
    routes: out.routes,
  };
}

/**
 * `snapshot.diagnostics`, decoded when first read. Bytes that do not decode to a list (a bug: the file is
 * signed) give one warning instead of a throw wherever they are first read.
 */
const lazyDiagnostics = lazyProperty('diagnostics', (bytes: Buffer): Diagnostic[] => {
  try {
    const list = unpack(bytes);
    if (Array.isArray(list) && list.every((d) => d !== null && typeof d === 'object'))
      return list as Diagnostic[];
  } catch {
    // Reported below.
  }
  return [
    {
      level: 'warning',
      path: '.cache',
      line: null,
      code: 'cache_rebuilt',
      message: "persisted index's diagnostics unreadable: delete .cache/ to read them again from the files",
    },
  ];
});

/**
 * Gives an item its body back, decoded from its bytes when first read (lazyProperty): a one-shot search
 * shows a few bodies, and decoding all of them was a tenth of a 50,000-document start. `bodyBytes`: each
 * body's length in UTF-8 bytes, one after the other in `bytes` (a view of the file's, kept while a body
 * is still to be decoded).
 */
function bodyReader(bodyBytes: Float64Array, bytes: Buffer): (item: BacklogItem, i: number) => void {
  if (
    !bodyBytes.every((n) => Number.isSafeInteger(n) && n >= 0) ||
    bodyBytes.reduce((a, b) => a + b, 0) !== bytes.length
  )
    throw new Error('items and bodies disagree');
  const starts = new Float64Array(bodyBytes.length + 1);
  for (let i = 0; i < bodyBytes.length; i++) starts[i + 1] = starts[i] + bodyBytes[i];
  const lazyBody = lazyProperty('body', (i: number) => {
    readBytes(bytes, starts[i], starts[i + 1]);
    return bytes.toString('utf8', starts[i], starts[i + 1]);
  });
  return lazyBody;
}
