import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  mkdir,
  open as open_,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  truncate,
  utimes,
  writeFile,
  symlink,
  lstat,
} from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { restore as pluginRestore } from '@orama/plugin-data-persistence';
import { search as oramaSearch } from '@orama/orama';
import { createHash, createHmac } from 'node:crypto';
import { openBacklog, type BacklogService } from '../src/index.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import {
  cacheKeyPath,
  prefetchSignedFile,
  readSignedFile,
  stampPath,
  stampSignedFile,
  type SignedRead,
} from '../src/service/cache-file.js';
import { isUnread, readBytes } from '../src/storage/unread-bytes.js';
import {
  ensureCacheDir,
  readIndexCache,
  serviceCacheVersion,
  writeIndexCache,
} from '../src/service/index-cache.js';
import { pack, unpack } from '../src/search/packed.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { runCli, tempBacklog } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempBacklog());
  // Whatever cache the source folder holds (another checkout's, another format) is not this test's.
  await rm(join(dir, '.cache'), { recursive: true, force: true });
});
afterEach(() => cleanup());

const cacheFile = () => join(dir, '.cache', 'index.bin');
async function open(options = {}): Promise<BacklogService> {
  const service = await openBacklog({ dir, ...options });
  await service.flush();
  return service;
}
const ids = async (s: BacklogService, q: string) =>
  (await s.searchUnified(q, { limit: 50 })).results.map((r) => r.id);
const QUERIES = ['sync conflict', 'rate limit login', 'переводы', 'FeatureStore', 'TASK-0012'];

/** Replaces one section of the cache file (index-cache.ts layout), then signs and stamps it as this user's. */
async function rewriteSection(name: string, edit: (bytes: Buffer) => Uint8Array): Promise<void> {
  const bytes = await readFile(cacheFile());
  const body = bytes.subarray(40);
  const headerLength = body.readUInt32LE(0);
  const header = JSON.parse(body.subarray(4, 4 + headerLength).toString()) as {
    version: string;
    sections: [string, number][];
  };
  let at = 4 + headerLength;
  const parts = header.sections.map(([n, length]) => {
    const part = body.subarray(at, at + length);
    at += length;
    return n === name ? Buffer.from(edit(Buffer.from(part))) : part;
  });
  header.sections = header.sections.map(([n], i) => [n, parts[i].length]);
  const json = JSON.stringify(header);
  const text = Buffer.from(json + ' '.repeat((8 - ((4 + json.length) % 8)) % 8));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(text.length);
  await writeSigned(bytes.subarray(0, 8), Buffer.concat([length, text, ...parts]), { stamp: true });
}

/** The version a service with the default settings writes its cache under. */
const defaultVersion = () =>
  serviceCacheVersion(new OramaSearchService().settings, DEFAULT_LIMITS.maxWordsPerFile, 'native');

/**
 * Writes `body` as the cache file after `magic`, signed with this user's key as a bug (not an attacker, who
 * has no key) could write it; with `stamp`, stamped too (then read when first needed, unchecked whole).
 */
async function writeSigned(
  magic: Uint8Array,
  body: Uint8Array,
  { stamp }: { stamp: boolean },
): Promise<void> {
  const key = await readFile(cacheKeyPath());
  const signed = Buffer.concat([magic, createHmac('sha256', key).update(body).digest(), body]);
  await writeFile(cacheFile(), signed);
  if (stamp)
    await stampSignedFile(cacheFile(), await stat(cacheFile(), { bigint: true }), signed.subarray(8, 40));
}

/**
 * One task's bytes in the cache no longer its columns' (its id spelled otherwise), signed and stamped as a
 * bug could write them: a task that a search for `sync` (with or without a status filter) does not show,
 * nor anything under it. Its id and the item as `cold` has it.
 */
async function malformOneItem(cold: BacklogService): Promise<{ victimId: string; victim: unknown }> {
  const shown = new Set(
    (
      await Promise.all(
        [{}, { status: ['Open', 'done'] }].map((o) => cold.searchUnified('sync', { limit: 5, ...o })),
      )
    ).flatMap((r) => r.results.map((x) => x.id)),
  );
  const victimId = cold
    .ids()
    .find((id) => /^TASK-\d+$/.test(id) && !shown.has(id) && !cold.children(id).length)!;
  await rewriteSection('items', (bytes) => {
    const text = Buffer.from(bytes);
    const at = text.indexOf(`"id":"${victimId}"`);
    expect(at).toBeGreaterThan(0);
    text.write(`"id":"${victimId.slice(0, -1)}X"`, at, 'latin1');
    return text;
  });
  return { victimId, victim: cold.get(victimId) };
}

/** The cache file's index section (index-cache.ts layout), a view of `bytes`. */
function indexSection(bytes: Buffer): Buffer {
  const body = bytes.subarray(40);
  const headerLength = body.readUInt32LE(0);
  const header = JSON.parse(body.subarray(4, 4 + headerLength).toString()) as {
    sections: [string, number][];
  };
  expect(header.sections[0][0]).toBe('index');
  return body.subarray(4 + headerLength, 4 + headerLength + header.sections[0][1]);
}

describe('persisted index', () => {
  it('is written on the first start and used on the next, with the same results', async () => {
    const cold = await open();
    expect(cold.cacheStatus()).toMatchObject({ used: false });
    expect((await stat(cacheFile())).size).toBeGreaterThan(1000);
    const warm = await open();
    expect(warm.cacheStatus()).toMatchObject({ used: true, changed: 0 });
    for (const q of QUERIES) expect(await ids(warm, q)).toEqual(await ids(cold, q));
    expect((await warm.searchUnified('"rate limit"', { match_mode: 'raw' })).total).toBe(
      (await cold.searchUnified('"rate limit"', { match_mode: 'raw' })).total,
    );
    expect(warm.diagnostics()).toEqual(cold.diagnostics());
  });

  it('gives back every body as written, ASCII or not (each cache section decoded once and cut per body)', async () => {
    const texts = [
      'plain ascii only',
      'accents: café, naïve — déjà vu',
      'emoji 🦫🦦 and 北京 and ελληνικά',
      '',
      'x',
    ];
    for (const [i, text] of texts.entries())
      await writeFile(
        join(dir, `tasks/TASK-097${i}-body.md`),
        `---\nid: TASK-097${i}\ntitle: Body ${i}\ntype: task\nstatus: open\n---\n${text}\n`,
      );
    const cold = await open();
    const warm = await open();
    expect(warm.cacheStatus()).toMatchObject({ used: true, changed: 0 });
    expect(warm.ids().length).toBe(cold.ids().length);
    for (const id of cold.ids()) expect(warm.get(id).body).toBe(cold.get(id).body);
    expect(warm.get('TASK-0972').body).toContain('🦫🦦 and 北京');
  });

  it('a restart reads only the files that changed, appeared or disappeared', async () => {
    await open();
    await writeFile(
      join(dir, 'tasks/TASK-0960-new.md'),
      '---\nid: TASK-0960\ntitle: Okapi importer\ntype: task\nstatus: open\n---\nokapi\n',
    );
    const gone = (await readdir(join(dir, 'tasks'))).find((n) => n.startsWith('TASK-0037'))!;
    await rm(join(dir, 'tasks', gone));
    const f = (await readdir(join(dir, 'tasks'))).find((n) => n.startsWith('TASK-0004'))!;
    const text = await readFile(join(dir, 'tasks', f), 'utf8');
    await writeFile(
      join(dir, 'tasks', f),
      text.replace('## Context', '## Context\n\nAlso the capybara form.'),
    );
    const warm = await open();
    expect(warm.cacheStatus()).toMatchObject({ used: true, changed: 3 });
    expect(await ids(warm, 'okapi')).toEqual(['TASK-0960']);
    expect(await ids(warm, 'capybara')).toEqual(['TASK-0004']);
    expect(() => warm.get('TASK-0037')).toThrow(/No item/);
  });

  it('a truncated or corrupt cache is detected, reported and rebuilt from the files', async () => {
    const cold = await open();
    const { size } = await stat(cacheFile());
    await truncate(cacheFile(), Math.floor(size / 2));
    const afterTruncate = await open();
    expect(afterTruncate.cacheStatus().used).toBe(false);
    expect(afterTruncate.diagnostics().files).toEqual([
      expect.objectContaining({
        code: 'cache_rebuilt',
        level: 'warning',
        message: expect.stringMatching(/checksum/),
      }),
    ]);
    for (const q of QUERIES) expect(await ids(afterTruncate, q)).toEqual(await ids(cold, q));
    // It was rewritten whole: the next start uses it again, without the warning.
    const next = await open();
    expect(next.cacheStatus().used).toBe(true);
    expect(next.diagnostics().files).toEqual([]);

    await writeFile(cacheFile(), 'not a cache at all');
    const garbage = await open();
    expect(garbage.cacheStatus().used).toBe(false);
    expect(garbage.diagnostics().files[0].message).toMatch(/not a backlog-search cache/);
  });

  it('a cache made with other settings is not used', async () => {
    await open();
    const other = await open({ search: { fieldWeights: { title: 5 } } });
    expect(other.cacheStatus().used).toBe(false);
    expect(other.diagnostics().files[0].message).toMatch(/other settings/);
  });

  it('a cache in the previous format (positions as nested arrays) is rejected and rebuilt', async () => {
    const cold = await open();
    const settings = new OramaSearchService().settings;
    const read = await readIndexCache(
      cacheFile(),
      serviceCacheVersion(settings, DEFAULT_LIMITS.maxWordsPerFile, 'native'),
    );
    if (!('snapshot' in read)) throw new Error(read.reason);
    // The index as format 2 laid out the BM25F fields: postings with word positions, no format mark.
    // (The lexical index inside the index section, beside the saved snippet bodies since CACHE_FORMAT 17.)
    const { lexical } = unpack(read.snapshot.index) as { lexical: Uint8Array };
    const raw = unpack(lexical) as { index: { bm25f: { fieldNames: string[] } } };
    raw.index.bm25f = {
      fieldNames: raw.index.bm25f.fieldNames,
      fields: raw.index.bm25f.fieldNames.map(() => ({
        terms: ['sync'],
        docs: [[0]],
        tfs: [[1]],
        pos: [[[0]]],
        lengths: [1],
      })),
    } as never;
    const oldIndex = pack(raw);
    const formerVersion = createHash('sha1')
      .update(JSON.stringify({ format: 2, parts: { settings } }))
      .digest('hex');

    // As format 2 wrote it: another version, so not even decoded.
    await writeIndexCache(cacheFile(), formerVersion, { ...read.snapshot, index: oldIndex });
    const afterUpgrade = await open();
    expect(afterUpgrade.cacheStatus().used).toBe(false);
    expect(afterUpgrade.diagnostics().files[0].message).toMatch(/older version/);
    for (const q of QUERIES) expect(await ids(afterUpgrade, q)).toEqual(await ids(cold, q));
    expect((await afterUpgrade.searchUnified('"rate limit"', { match_mode: 'raw' })).total).toBe(
      (await cold.searchUnified('"rate limit"', { match_mode: 'raw' })).total,
    );

    // The old layout under the current version (restore() given old bytes): refused, not misread.
    expect(() => new OramaSearchService().restore(oldIndex)).toThrow(/field index format 1/);
    await writeIndexCache(
      cacheFile(),
      serviceCacheVersion(settings, DEFAULT_LIMITS.maxWordsPerFile, 'native'),
      {
        ...read.snapshot,
        index: oldIndex,
      },
    );
    const misversioned = await open();
    expect(misversioned.cacheStatus().used).toBe(false);
    expect(misversioned.diagnostics().files[0].message).toMatch(/field index format 1/);
    for (const q of QUERIES) expect(await ids(misversioned, q)).toEqual(await ids(cold, q));
    // Rewritten in the current format: the next start uses it.
    expect((await open()).cacheStatus().used).toBe(true);
  });

  it('a signed cache whose sections do not add up is refused and rebuilt, never read past its end', async () => {
    const cold = await open();
    const version = defaultVersion();
    const good = await readFile(cacheFile());
    const body = good.subarray(40);
    const headerLength = body.readUInt32LE(0);
    const header = JSON.parse(body.subarray(4, 4 + headerLength).toString()) as {
      sections: [string, number][];
    };
    header.sections[1][1] += 1_000_000;
    const json = Buffer.from(JSON.stringify(header));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length);
    const bad = [
      Buffer.concat([length, json, body.subarray(4 + headerLength)]),
      body.subarray(0, body.length - 1),
      Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0x7f]), body.subarray(4)]),
    ];
    for (const tampered of bad) {
      await writeSigned(good.subarray(0, 8), tampered, { stamp: false });
      expect(await readIndexCache(cacheFile(), version)).toMatchObject({
        reason: expect.stringMatching(/unreadable/),
      });
      const rebuilt = await open();
      expect(rebuilt.cacheStatus().used).toBe(false);
      for (const q of QUERIES) expect(await ids(rebuilt, q)).toEqual(await ids(cold, q));
    }
  });

  it('postings or a term order read in place that name no document or term, or out of order, are refused and rebuilt', async () => {
    const cold = await open();
    const good = await readFile(cacheFile());
    for (const [name, doc, part] of [
      ['a document past the last', 1_000_000, 'postings'],
      ['a negative document (out of order)', -5, 'postings'],
      ['a term order naming no term (the dictionary is searched by it)', 1_000_000, 'sorted'],
    ] as const) {
      const bytes = Buffer.from(good);
      // The leaves are views of `bytes`: the body field's postings, changed where they lie.
      const saved = unpack((unpack(indexSection(bytes)) as { lexical: Uint8Array }).lexical) as {
        index: { bm25f: { fieldNames: string[]; fields: Record<typeof part, Uint8Array>[] } };
      };
      const { fieldNames, fields } = saved.index.bm25f;
      const postings = fields[fieldNames.indexOf('body')][part];
      const view = new DataView(postings.buffer, postings.byteOffset, postings.byteLength);
      view.setInt32(0, doc, true); // the first pair's document, or the first term in order
      await writeSigned(bytes.subarray(0, 8), bytes.subarray(40), { stamp: false });
      const rebuilt = await open();
      expect(rebuilt.cacheStatus().used, name).toBe(false);
      expect(JSON.stringify(rebuilt.diagnostics())).toContain('cache_rebuilt');
      for (const q of QUERIES) expect(await ids(rebuilt, q)).toEqual(await ids(cold, q));
    }
  });

  it('a stamped cache is read when first needed; a term whose postings turn out malformed builds the index from the items', async () => {
    const cold = await open();
    const read = await readSignedFile(cacheFile());
    expect(read).toMatchObject({ checked: 'stamp' });
    const version = defaultVersion();
    const cached = await readIndexCache(cacheFile(), version);
    if (!('snapshot' in cached)) throw new Error('no snapshot');
    // The index's JSON is read, its postings and sequences are not (nor the bodies).
    const lexical = (unpack(cached.snapshot.index) as { lexical: Uint8Array }).lexical;
    expect(isUnread(lexical)).toBe(true);
    const oneShot = () => openBacklog({ dir, background: false, embeddings: 'none' });
    const lazy = await oneShot();
    for (const q of QUERIES) expect(await ids(lazy, q), q).toEqual(await ids(cold, q));
    expect(lazy.cacheStatus().used).toBe(true);

    // Every posting of the body field made malformed (documents -1: out of order), signed and stamped
    // as a bug could write them: the first query that reads one falls back, with the same answers.
    const bytes = await readFile(cacheFile());
    const saved = unpack((unpack(indexSection(bytes)) as { lexical: Uint8Array }).lexical) as {
      index: { bm25f: { fieldNames: string[]; fields: { postings: Uint8Array }[] } };
    };
    const { fieldNames, fields } = saved.index.bm25f;
    fields[fieldNames.indexOf('body')].postings.fill(0xff);
    await writeSigned(bytes.subarray(0, 8), bytes.subarray(40), { stamp: true });
    expect(await readSignedFile(cacheFile())).toMatchObject({ checked: 'stamp' });
    const fallen = await oneShot();
    for (const q of QUERIES) expect(await ids(fallen, q), q).toEqual(await ids(cold, q));
    expect(JSON.stringify(fallen.diagnostics())).toContain('cache_rebuilt');
    // Dropped: the next start rebuilds it from the files.
    expect(existsSync(cacheFile())).toBe(false);
  });

  it('stored documents or a filter tree that do not decode build the index from the items, in a one-shot and a server', async () => {
    const cold = await open();
    const good = await readFile(cacheFile());
    // Reads that decode them: a status filter, sorting by date, a listing by status.
    const answers = async (s: BacklogService) =>
      JSON.stringify([
        (await s.searchUnified('sync', { status: ['Open', 'done'], limit: 5 })).results,
        (await s.searchUnified('login', { sort: 'recent', limit: 5 })).results,
        s.list({ status: 'done', limit: 20 }).results.map((r) => r.id),
      ]);
    const want = await answers(cold);
    type Saved = { docs: { docs: Uint8Array }; index: { indexes: Record<string, { node: Uint8Array }> } };
    for (const [part, leaf] of [
      ['stored documents', (saved: Saved) => saved.docs.docs],
      ['a filter tree', (saved: Saved) => saved.index.indexes.status_key.node],
    ] as const) {
      for (const background of [false, true]) {
        const bytes = Buffer.from(good);
        // A view of `bytes`: '{' in every byte is JSON that does not parse.
        leaf(unpack((unpack(indexSection(bytes)) as { lexical: Uint8Array }).lexical) as Saved).fill(0x7b);
        await writeSigned(bytes.subarray(0, 8), bytes.subarray(40), { stamp: true });
        const s = await openBacklog({ dir, background, embeddings: 'none' });
        expect(await answers(s), `${part}, background ${background}`).toBe(want);
        // A change to the index reads all of it first (a file applied again, as a watcher does).
        await s.applyFile(cold.get('TASK-0012').path);
        expect(await answers(s), `${part}, background ${background}, changed`).toBe(want);
        expect(JSON.stringify(s.diagnostics()), part).toContain('cache_rebuilt');
        await s.flush();
        await s.close();
        // Dropped, or written again from the items: the next start does not meet the bad bytes.
        const next = await openBacklog({ dir, background: false, embeddings: 'none' });
        expect(await answers(next)).toBe(want);
        expect(JSON.stringify(next.diagnostics())).not.toContain('cache_rebuilt');
        await next.close();
      }
    }
  });

  it('a cache read early on libuv threads (prefetchSignedFile) is checked the same way', async () => {
    await open();
    const good = await readFile(cacheFile());
    // A stamped file's body is read when first needed (unread-bytes.ts): `whole` reads the rest.
    const whole = (read: SignedRead) => ('body' in read ? (readBytes(read.body), read.body) : undefined);
    const plain = whole(await readSignedFile(cacheFile()));
    prefetchSignedFile(cacheFile());
    const early = whole(await readSignedFile(cacheFile()));
    expect(early && plain && early.equals(plain)).toBe(true);
    expect(plain?.equals(good.subarray(40))).toBe(true);
    // The early read is the one used: the file replaced after it started does not change the answer,
    // nor its parts read after the replacement (from the descriptor of the file that was checked).
    prefetchSignedFile(cacheFile());
    await writeFile(`${cacheFile()}.new`, 'replaced');
    await rename(`${cacheFile()}.new`, cacheFile()); // as writers replace it: atomically
    const taken = whole(await readSignedFile(cacheFile()));
    expect(taken && plain && taken.equals(plain)).toBe(true);
    // One byte of the body changed, then the signature: both refused, as readSignedFile refuses them.
    for (const at of [good.length - 1, 20]) {
      const tampered = Buffer.from(good);
      tampered[at] ^= 1;
      await writeFile(cacheFile(), tampered);
      prefetchSignedFile(cacheFile());
      expect(await readSignedFile(cacheFile())).toEqual({
        reason: expect.stringMatching(/checksum mismatch/),
      });
      expect(await readSignedFile(cacheFile())).toEqual({
        reason: expect.stringMatching(/checksum mismatch/),
      });
    }
    await writeFile(cacheFile(), Buffer.from('not ours at all, long enough to have a head of 40 bytes'));
    prefetchSignedFile(cacheFile());
    expect(await readSignedFile(cacheFile())).toEqual({
      reason: expect.stringMatching(/not a backlog-search cache/),
    });
    await rm(cacheFile());
    prefetchSignedFile(cacheFile());
    expect(await readSignedFile(cacheFile())).toMatchObject({ missing: true });
  });

  it('a restored index (arrays read where they lie in the file) takes live changes and answers as a fresh build', async () => {
    const cold = await open();
    const warm = await open();
    expect(warm.cacheStatus()).toMatchObject({ used: true, changed: 0 });
    const answer = async (s: BacklogService, q: string) =>
      (await s.searchUnified(q, { limit: 50 })).results.map((r) => [r.id, r.score, r.snippet]);
    for (const q of QUERIES) expect(await answer(warm, q)).toEqual(await answer(cold, q));
    // Changes applied to the restored index (its postings and sequences are views of the cache's bytes).
    const tasks = await readdir(join(dir, 'tasks'));
    const edited = tasks.find((n) => n.startsWith('TASK-0012'))!;
    const text = await readFile(join(dir, 'tasks', edited), 'utf8');
    await writeFile(join(dir, 'tasks', edited), `${text}\nNow also about sync conflict rate limits.\n`);
    await writeFile(
      join(dir, 'tasks/TASK-0961-new.md'),
      '---\nid: TASK-0961\ntitle: Sync conflict login limit\ntype: task\nstatus: open\n---\nrate limit sync conflict FeatureStore\n',
    );
    const removed = tasks.find((n) => n.startsWith('TASK-0004'))!;
    await rm(join(dir, 'tasks', removed));
    for (const live of [warm, cold]) {
      await live.applyFile(`tasks/${edited}`);
      await live.applyFile('tasks/TASK-0961-new.md');
      live.removeFile(`tasks/${removed}`);
    }
    const fresh = await open({ rebuild: true });
    // The same changes to a built and to a restored index: the same answers. A fresh build numbers its
    // documents in file order (ties may fall in another order): the same results and scores.
    const sorted = (a: unknown[][]) => a.map((r) => JSON.stringify(r)).sort();
    for (const q of [...QUERIES, 'sync conflict rate limits', 'login']) {
      expect(await answer(warm, q)).toEqual(await answer(cold, q));
      expect(sorted(await answer(warm, q))).toEqual(sorted(await answer(fresh, q)));
    }
    expect((await ids(warm, 'FeatureStore')).includes('TASK-0961')).toBe(true);
  });

  it('a stamped file is taken without its whole signature; any change to it is checked whole', async () => {
    await open();
    const path = cacheFile();
    const good = await readFile(path);
    const checked = async (early = false) => {
      if (early) prefetchSignedFile(path);
      const read = await readSignedFile(path);
      return 'body' in read ? read.checked : read.reason;
    };
    // Written with its stamp: both reads take it by the stamp.
    expect(await checked()).toBe('stamp');
    expect(await checked(true)).toBe('stamp');
    // The same bytes in another file (a copy put in place): checked whole, then stamped again.
    await writeFile(`${path}.new`, good);
    await rename(`${path}.new`, path);
    expect(await checked(true)).toBe('signature');
    expect(await checked()).toBe('stamp');
    // A stamp that is not this file's (torn, empty, another file's): checked whole.
    const stamp = await readFile(stampPath(path));
    for (const other of [stamp.subarray(0, 20), Buffer.alloc(0), Buffer.from(stamp).fill(7, 8)]) {
      await writeFile(stampPath(path), other);
      expect(await checked()).toBe('signature');
    }
    expect(await checked()).toBe('stamp');
    // One byte changed in place (same inode, same size, its modification time set back): the change
    // time moved, so the stamp does not hold, and the signature refuses it.
    const { mtime } = await stat(path);
    const handle = await open_(path, 'r+');
    await handle.write(Buffer.from([good[good.length - 1] ^ 1]), 0, 1, good.length - 1);
    await handle.close();
    await utimes(path, mtime, mtime);
    expect(await checked()).toMatch(/checksum mismatch/);
    expect(await checked(true)).toMatch(/checksum mismatch/);
    // Put back as it was, in place: the stamp still does not hold (another change time); checked whole.
    await writeFile(path, good);
    expect(await checked()).toBe('signature');
    expect(await checked(true)).toBe('stamp');
    // The stamp of one backlog's cache beside another's (made with the same key): checked whole.
    await writeFile(stampPath(path), stamp);
    expect(await checked()).toBe('signature');
  });

  it('links and FIFOs planted in .cache/ are neither followed nor waited on', async () => {
    await open();
    const path = cacheFile();
    const victim = join(dir, '..', 'victim.txt');
    await writeFile(victim, "the user's own file\n");
    // A stamp that is a link to another file: the check replaces the link, the file is untouched.
    await rm(stampPath(path));
    await symlink(victim, stampPath(path));
    const read = await readSignedFile(path);
    expect('body' in read && read.checked).toBe('signature');
    expect(await readFile(victim, 'utf8')).toBe("the user's own file\n");
    expect((await lstat(stampPath(path))).isSymbolicLink()).toBe(false);
    // A stamp that is a FIFO: not waited on (the read would hang), the signature checked instead.
    await rm(stampPath(path));
    execFileSync('mkfifo', [stampPath(path)]);
    const fifo = await readSignedFile(path);
    expect('body' in fifo && fifo.checked).toBe('signature');
    // The cache itself a link (to a valid cache elsewhere) or a FIFO: no cache, never followed or waited on.
    const elsewhere = join(dir, '..', 'elsewhere.bin');
    await rename(path, elsewhere);
    await symlink(elsewhere, path);
    prefetchSignedFile(path);
    expect(await readSignedFile(path)).toMatchObject({ missing: true });
    await rm(path);
    execFileSync('mkfifo', [path]);
    prefetchSignedFile(path);
    expect(await readSignedFile(path)).toMatchObject({ missing: true });
  });

  it('a one-shot restores the index when first read; a bad one is built from the items and the cache dropped', async () => {
    const cold = await open();
    const version = defaultVersion();
    const read = await readIndexCache(cacheFile(), version);
    if (!('snapshot' in read)) throw new Error(read.reason);
    const oneShot = await open({ background: false });
    expect(oneShot.cacheStatus()).toMatchObject({ used: true, changed: 0 });
    for (const q of QUERIES) expect(await ids(oneShot, q)).toEqual(await ids(cold, q));
    expect(oneShot.diagnostics()).toEqual(cold.diagnostics());
    // A search's one-shot parses its index while the files are stat'ed (readAhead): the same answers.
    const ahead = await open({ background: false, expectQuery: 'sync conflict' });
    for (const q of QUERIES) expect(await ids(ahead, q)).toEqual(await ids(cold, q));

    // Signed by this user, but its index unreadable: `get` answers without reading the index; the first
    // search finds it bad, builds the index from the cached items and deletes the cache.
    await writeIndexCache(cacheFile(), version, { ...read.snapshot, index: new Uint8Array([0xc1]) });
    const broken = await open({ background: false, expectQuery: 'sync conflict' });
    expect(broken.get('TASK-0012').id).toBe('TASK-0012');
    expect(broken.diagnostics().files.filter((d) => d.code === 'cache_rebuilt')).toEqual([]);
    for (const q of QUERIES) expect(await ids(broken, q)).toEqual(await ids(cold, q));
    expect(broken.diagnostics().files.filter((d) => d.code === 'cache_rebuilt')).toHaveLength(1);
    await expect(stat(cacheFile())).rejects.toThrow();
    // The next start reads the files and writes the cache again.
    expect((await open({ background: false })).cacheStatus().used).toBe(false);
    expect((await open({ background: false })).cacheStatus().used).toBe(true);
  });

  it('a one-shot reads the cached items it shows, each when first asked for; a malformed one fails a lookup, is read from the files by a search, and drops the cache', async () => {
    const cold = await open();
    const oneShot = () => openBacklog({ dir, background: false, embeddings: 'none' });
    const search = async (s: BacklogService, q: string) =>
      JSON.stringify((await s.searchUnified(q, { limit: 5 })).results);
    const first = await oneShot();
    for (const q of QUERIES) expect(await search(first, q), q).toBe(await search(cold, q));
    expect(first.get('TASK-0012')).toEqual(cold.get('TASK-0012'));
    expect(first.list({ limit: 50 })).toEqual(cold.list({ limit: 50 }));
    expect(first.getMetadata('TASK-0012').links).toEqual(cold.getMetadata('TASK-0012').links);

    const { victimId, victim } = await malformOneItem(cold);
    const lazy = await oneShot();
    expect(await search(lazy, 'sync')).toBe(await search(cold, 'sync'));
    // A status filter's vocabulary comes from the status column, not from every item.
    const filtered = async (s: BacklogService) => {
      const { results, total } = await s.searchUnified('sync', { status: ['Open', 'done'], limit: 5 });
      return JSON.stringify({ results, total });
    };
    expect(await filtered(lazy)).toBe(await filtered(cold));
    expect(lazy.cacheStatus().used).toBe(true);
    expect(existsSync(cacheFile())).toBe(true);
    // Asked for, it is checked and refused: the lookup fails (not a wrong item), saying so (the CLI then runs
    // the command again), and the cache is dropped.
    expect(() => lazy.get(victimId)).toThrow(
      expect.objectContaining({
        code: 'INTERNAL',
        details: { cache_rebuilt: expect.stringMatching(/malformed/) },
      }),
    );
    expect(existsSync(cacheFile())).toBe(false);
    const rebuilt = await oneShot();
    expect(rebuilt.cacheStatus().used).toBe(false);
    expect(rebuilt.get(victimId)).toEqual(victim);

    // A search that shows it reads the files instead, and answers as from them, reported.
    await rebuilt.flush();
    expect((await malformOneItem(cold)).victimId).toBe(victimId);
    const searching = await oneShot();
    const title = (victim as { title: string }).title;
    expect(await search(searching, title)).toBe(await search(cold, title));
    expect(JSON.parse(await search(searching, title))[0].id).toBe(victimId);
    expect(JSON.stringify(searching.diagnostics())).toMatch(/cache_rebuilt.*malformed/);
  });

  it('a one-shot command whose cached item turns out malformed answers from the files, reported as cache_rebuilt', async () => {
    const cold = await open();
    const { victimId, victim } = await malformOneItem(cold);
    const got = await runCli(['--dir', dir, 'get', victimId, '--json']);
    expect(got.stderr).toMatch(/warning cache_rebuilt: .*malformed.*rebuilt from the files/);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual(JSON.parse(JSON.stringify(victim)));
    // The run from the files wrote the cache again, whole: the next one-shot uses it.
    const next = await openBacklog({ dir, background: false, embeddings: 'none' });
    expect(next.cacheStatus().used).toBe(true);
    expect(next.get(victimId)).toEqual(victim);

    // A search that shows it: the service reads the files (the library test above), the command answers.
    await malformOneItem(cold);
    const query = `${victim && (victim as { title: string }).title}`;
    const found = await runCli(['--dir', dir, 'search', query, '--json', '-n', '3', '--no-server']);
    expect(found.code, found.stderr).toBe(0);
    expect((JSON.parse(found.stdout) as { results: { id: string }[] }).results[0].id).toBe(victimId);
    const after = await openBacklog({ dir, background: false, embeddings: 'none' });
    expect(after.cacheStatus().used).toBe(true);
    expect(after.get(victimId)).toEqual(victim);

    // A long-lived process reads every item when it starts: refused there, rebuilt from the files.
    await malformOneItem(cold);
    const served = await open();
    expect(served.cacheStatus().used).toBe(false);
    expect(JSON.stringify(served.diagnostics())).toMatch(/cache_rebuilt.*malformed/);
    expect(served.get(victimId)).toEqual(victim);
  });

  it('an item table whose ends or columns do not add up is refused and rebuilt', async () => {
    const cold = await open();
    const version = defaultVersion();
    const good = await readFile(cacheFile());
    // The number columns are binary leaves (Uint8Array views of their bytes once unpacked).
    const uint32s = (leaf: unknown) => new Uint32Array((leaf as Uint8Array).slice().buffer);
    const breaks: [string, (meta: Record<string, unknown>) => void][] = [
      ['ends out of order', (m) => void (m.itemEnds = uint32s(m.itemEnds).reverse())],
      ['ends not binary', (m) => void (m.itemEnds = [...uint32s(m.itemEnds)])],
      ['a column short', (m) => void (m.paths as string[]).pop()],
      ['an id not a string', (m) => void ((m.ids as unknown[])[0] = 7)],
      ['a status past the names', (m) => void (m.statusAt = uint32s(m.statusAt).fill(99))],
      ['a status name not a string', (m) => void ((m.statusNames as unknown[])[0] = 7)],
      ['front matter ends cut', (m) => void (m.frontmatterEnds = uint32s(m.frontmatterEnds).subarray(1))],
      ['a file size missing', (m) => void (m.fileSizes = (m.fileSizes as Uint8Array).subarray(8))],
      ["the files' paths shorter than their sizes", (m) => void (m.filePaths = ['a.md'])],
    ];
    for (const [what, edit] of breaks) {
      await writeFile(cacheFile(), good);
      await rewriteSection('meta', (bytes) => {
        const meta = unpack(bytes) as Record<string, unknown>;
        edit(meta);
        return pack(meta);
      });
      expect(await readIndexCache(cacheFile(), version), what).toMatchObject({
        reason: expect.stringContaining('malformed item table'),
      });
      const s = await openBacklog({ dir, background: false, embeddings: 'none' });
      expect(s.cacheStatus().used, what).toBe(false);
      for (const q of QUERIES) expect(await ids(s, q), `${what}: ${q}`).toEqual(await ids(cold, q));
      await s.flush();
    }
    // An item's path in the columns outside the root: refused before anything is read.
    await writeFile(cacheFile(), good);
    await rewriteSection('meta', (bytes) => {
      const meta = unpack(bytes) as Record<string, unknown>;
      (meta.paths as string[])[0] = '../outside.md';
      return pack(meta);
    });
    const s = await openBacklog({ dir, background: false, embeddings: 'none' });
    expect(s.cacheStatus().used).toBe(false);
    expect(JSON.stringify(s.diagnostics())).toContain('malformed');
  });

  it("a one-shot routes ids from the cache's saved routes; malformed ones are built from the items and the cache dropped", async () => {
    const cold = await open();
    const oneShot = () => openBacklog({ dir, background: false, embeddings: 'none' });
    const routed = ['TASK-0012', 'task 12', '12', 'task-0012'];
    const first = await oneShot();
    for (const q of [...QUERIES, ...routed]) expect(await ids(first, q), q).toEqual(await ids(cold, q));
    expect((await first.searchUnified('task 12', { limit: 1 })).results[0]?.id).toBe('TASK-0012');

    const good = await readFile(cacheFile());
    const breaks: [string, (routes: Record<string, unknown>) => void][] = [
      ['keys out of order', (r) => void (r.idKeys as string[]).reverse()],
      ['a position past the items', (r) => void (r.idAt = Uint32Array.from(r.idAt as Uint8Array, () => 1e6))],
      ['positions cut', (r) => void (r.numberAt = new Uint8Array(4))],
    ];
    for (const [what, edit] of breaks) {
      await writeFile(cacheFile(), good);
      await rewriteSection('routes', (bytes) => {
        const routes = unpack(bytes) as Record<string, unknown>;
        edit(routes);
        return pack(routes);
      });
      const broken = await oneShot();
      for (const q of [...QUERIES, ...routed])
        expect(await ids(broken, q), `${what}: ${q}`).toEqual(await ids(cold, q));
      expect(
        broken.diagnostics().files.filter((d) => d.code === 'cache_rebuilt'),
        what,
      ).toHaveLength(1);
      await expect(stat(cacheFile()), what).rejects.toThrow();
    }
    // Bytes that are not packed at all.
    await writeFile(cacheFile(), good);
    await rewriteSection('routes', () => new Uint8Array([1, 2, 3]));
    const garbage = await oneShot();
    for (const q of routed) expect(await ids(garbage, q), q).toEqual(await ids(cold, q));
    await expect(stat(cacheFile())).rejects.toThrow();
  });

  it('a one-shot that builds saves only the bodies it prepared; the next long-lived start saves them all', async () => {
    const version = defaultVersion();
    const savedTable = async () => {
      const read = await readIndexCache(cacheFile(), version);
      if (!('snapshot' in read)) throw new Error(read.reason);
      const { snippets } = unpack(read.snapshot.index) as { snippets: Uint8Array };
      const { partial, ids } = unpack(snippets) as { partial: boolean; ids: string[] };
      return { partial, saved: ids.length, items: read.snapshot.items.length };
    };
    const oneShot = await open({ background: false });
    expect(oneShot.cacheStatus()).toMatchObject({ used: false });
    const first = await savedTable();
    expect(first.partial).toBe(true);
    expect(first.saved).toBeLessThan(first.items);
    // A long-lived start restores it and writes the cache again, every body prepared.
    const server = await open();
    expect(server.cacheStatus()).toMatchObject({ used: true, changed: 0 });
    expect(server.cacheStatus().bytes).toBeGreaterThan(1000);
    const second = await savedTable();
    expect(second).toMatchObject({ partial: false, items: first.items });
    expect(second.saved).toBeGreaterThan(first.items * 0.9);
    for (const q of QUERIES) expect(await ids(server, q)).toEqual(await ids(oneShot, q));
    // Complete now: the next start does not write it.
    expect((await open()).cacheStatus()).toMatchObject({ used: true, bytes: null });
  });

  it('a write killed half-way leaves a temp file, never a broken cache', async () => {
    const cold = await open();
    const good = await readFile(cacheFile());
    // What a kill during writeFileAtomic leaves behind: a partial temp file beside the real one.
    await writeFile(`${cacheFile()}.12345.deadbeef.tmp`, good.subarray(0, 100));
    const warm = await open();
    expect(warm.cacheStatus().used).toBe(true);
    expect(await ids(warm, 'sync')).toEqual(await ids(cold, 'sync'));
  });

  it('an unwritable cache folder is reported and costs only speed', async () => {
    await mkdir(join(dir, 'blocker'));
    await writeFile(join(dir, 'blocker', 'file'), 'x');
    const service = await open({ cacheDir: join(dir, 'blocker', 'file', 'sub') });
    expect(service.diagnostics().files.map((d) => d.code)).toContain('cache_unwritable');
    expect((await ids(service, 'sync')).length).toBeGreaterThan(0);
  });

  it("the persistence plugin's own restore() loses our tokenizer (why we load into our own create())", async () => {
    const svc = new OramaSearchService();
    await svc.build([{ id: 'ru', title: 'Перевод интерфейса', body: 'переводы на русский язык' }]);
    const bytes = await svc.serialize();
    // Orama's default tokenizer treats Cyrillic as a separator, and its default index cannot read the text
    // fields' vocabulary trees (bytes of their own since CACHE_FORMAT 12): the restored database finds
    // nothing, or fails to search at all.
    const found = await (async () => {
      const theirs = await pluginRestore('binary', Buffer.from(bytes).toString('hex'));
      return (await oramaSearch(theirs, { term: 'перевод' })).count;
    })().catch(() => 0);
    expect(found).toBe(0);
    const ours = new OramaSearchService();
    ours.restore(bytes);
    expect(ours.search({ query: 'перевод' }).hits.map((h) => h.id)).toEqual(['ru']);
  });
  it('is not written once the backlog folder is gone (the write would make the folder again)', async () => {
    const service = await open({ embeddings: 'none' });
    await service.create({ title: 'Written just before the folder is deleted' });
    await rm(dir, { recursive: true, force: true });
    await service.flush();
    await service.close();
    expect(existsSync(dir)).toBe(false);
  });
  it('never makes the backlog folder again, even when the write began before the folder was deleted', async () => {
    const gone = join(dir, 'deleted');
    await expect(ensureCacheDir(join(gone, '.cache'), gone)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(gone)).toBe(false);
    // Outside the backlog (BACKLOG_CACHE_DIR, a workspace's shared folder) every level is made.
    await ensureCacheDir(join(dir, 'shared', 'one'), gone);
    expect(existsSync(join(dir, 'shared', 'one', '.gitignore'))).toBe(true);
    await ensureCacheDir(join(dir, '.cache', 'deeper'), dir);
    expect(existsSync(join(dir, '.cache', 'deeper', '.gitignore'))).toBe(true);
  });
});
