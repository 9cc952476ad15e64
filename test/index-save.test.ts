/**
 * `backlog-search index` saves every prepared snippet body (saveEveryBody) without the background work a
 * long-lived process does (the warm-up searches, the proximity filters): its cache is the one a server
 * writes, the same table of bodies and the same index (a server's analyzer also keeps the runs of
 * what its searches analyzed, e.g. the tags its snippets show: `runs`, a memo; and its searches' words
 * get their term numbers first).
 */
import { describe, expect, test } from 'vitest';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { unpack } from '../src/search/packed.js';
import { tempBacklog } from './helpers.js';

/** The persisted index's `index` section, unpacked: the lexical index (unpacked too) and the saved bodies. */
function indexSection(file: Buffer): { lexical: Record<string, unknown>; snippets: Uint8Array } {
  const body = file.subarray(40); // magic and signature
  const headerLength = body.readUInt32LE(0);
  const header = JSON.parse(body.subarray(4, 4 + headerLength).toString()) as {
    sections: [string, number][];
  };
  expect(header.sections[0][0]).toBe('index');
  const at = 4 + headerLength;
  const index = unpack(body.subarray(at, at + header.sections[0][1])) as {
    lexical: Uint8Array;
    snippets: Uint8Array;
  };
  return { lexical: unpack(index.lexical) as Record<string, unknown>, snippets: index.snippets };
}

/** A value's bytes to compare: typed arrays as their bytes, the rest as JSON. */
const asText = (value: unknown) =>
  JSON.stringify(value, (_, v: unknown) =>
    ArrayBuffer.isView(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') : v,
  );

/**
 * The saved bodies' table as what it says (saved-snippets.ts): each body's text, runs and (run, term)
 * occurrences. Its term numbers follow the order terms got their ids in the process that wrote it (a
 * server's warm-up searches give theirs first), so they are compared through the words they stand for.
 */
function table(bytes: Uint8Array): string[] {
  const t = unpack(bytes) as Record<string, Uint8Array> & {
    ids: string[];
    languages: string[];
    terms: string[];
  };
  const u32 = (b: Uint8Array) => new Uint32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const [docs, termIds, termRuns] = [u32(t.docs), u32(t.termIds), u32(t.termRuns)];
  const out = [asText([t.partial, t.ids, t.languages, t.docs, t.text, t.starts, t.ends])];
  let o = 0;
  for (let i = 0; i < t.ids.length; i++) {
    const occurrences: string[] = [];
    for (let k = 0; k < docs[i * 6 + 3]; k++, o++) occurrences.push(`${termRuns[o]}:${t.terms[termIds[o]]}`);
    out.push(occurrences.sort().join(' '));
  }
  return out;
}

describe('saveEveryBody', () => {
  test('a build with background work off saves every body: the table and the index a server writes', async () => {
    const { dir, cleanup } = await tempBacklog();
    const cache = join(dir, '.cache', 'index.bin');
    try {
      const built = await openBacklog({ dir, embeddings: 'none', background: false, saveEveryBody: true });
      const lexical = (
        built.index as unknown as { lexicalIndex: { proximityFields(): { adjacencyReady: boolean }[] } }
      ).lexicalIndex;
      const rehearsal = (built.index as unknown as { rehearsal: { running: boolean } }).rehearsal;
      await new Promise((resolve) => setTimeout(resolve, 50));
      // No background work: no warm-up searches, no proximity filters.
      expect(rehearsal.running).toBe(false);
      expect(lexical.proximityFields().every((f) => !f.adjacencyReady)).toBe(true);
      await closeBacklog(built);
      const once = await readFile(cache);

      const reopened = await openBacklog({ dir, embeddings: 'none', background: false });
      expect(reopened.cacheStatus().used).toBe(true);
      expect(reopened.index.snippetsPartial).toBe(false);
      await closeBacklog(reopened);

      // What a server writes after its background work, from the same files.
      await rm(join(dir, '.cache'), { recursive: true });
      const server = await openBacklog({ dir, embeddings: 'none' });
      await server.index.warmedUp();
      await closeBacklog(server);
      const mine = indexSection(once);
      const theirs = indexSection(await readFile(cache));
      expect(table(mine.snippets)).toEqual(table(theirs.snippets));
      for (const key of Object.keys(theirs.lexical))
        if (key !== 'runs') expect(asText(mine.lexical[key]), key).toBe(asText(theirs.lexical[key]));
    } finally {
      await cleanup();
    }
  });
});
