/**
 * The service's build in passes, with the bundled model: hybrid from the first pass on (every document by
 * its title), honest about it in every answer, edits taken while the rest is embedded, and in the end
 * the same index and cache as a build in one pass. A process that only reads the cache (`never`) runs
 * hybrid on what is cached when every document has a vector, and says how much is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeBacklog, openBacklog, type BacklogService } from '../src/index.js';
import { EmbeddingCache } from '../src/embeddings/cache.js';
import type { SemanticSearch } from '../src/embeddings/semantic-search.js';

const COUNT = 12;
const topics = ['login', 'billing', 'search', 'backup', 'editor', 'export'];
/** 156 words: three chunks of the bundled model's 70-word windows (14 overlapping). */
const body = (topic: string, i: number, extra = '') =>
  Array.from(
    { length: 13 },
    (_, k) => `Step ${k} of the ${topic} work in case ${i} checks one more detail.`,
  ).join(' ') + extra;

let base: string;
const cacheDir = () => join(base, '.cache');
const file = (i: number) => join(base, 'tasks', `TASK-${String(i).padStart(4, '0')}.md`);
const write = (i: number, title: string, text: string) =>
  writeFile(
    file(i),
    `---\nid: TASK-${String(i).padStart(4, '0')}\ntitle: ${title}\ntype: task\nstatus: open\n---\n${text}\n`,
  );
const semantic = (s: BacklogService) => (s as unknown as { semantic: SemanticSearch }).semantic;

async function until(check: () => boolean, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'backlog-semantic-passes-'));
  await mkdir(join(base, 'tasks'), { recursive: true });
  for (let i = 1; i <= COUNT; i++) {
    const topic = topics[i % topics.length];
    await write(i, `${topic} issue ${i}`, body(topic, i));
  }
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
});

describe('a build in passes (background)', () => {
  it('answers hybrid after the first pass, says how far it is, takes edits, and ends complete', async () => {
    const service = await openBacklog({
      dir: base,
      cacheDir: cacheDir(),
      embeddings: 'bundled',
      embedMissing: 'background',
    });
    try {
      await until(() => service.semanticStatus().state === 'ready');
      const first = service.semanticStatus();
      expect(first.total).toBe(COUNT * 3);
      // Every document is in by its title; its chunks are still to come (one group at most has landed).
      expect(first.missing).toBeGreaterThan(0);
      expect(first.done + (first.missing ?? 0)).toBe(first.total);
      expect(first.readyMs).toBeGreaterThan(0);

      const early = await service.searchUnified('search issue 2', { limit: 3 });
      expect(early.search_mode).toBe('hybrid');
      expect(early.results[0].id).toBe('TASK-0002');
      if (service.semanticStatus().missing)
        expect(early.warnings?.join(' ')).toMatch(
          /the semantic index is still being built: meaning is matched on \d+ of 36 chunks/,
        );

      // An edit while the rest is embedded is indexed as it is now, in full.
      await write(3, 'refund flow', 'Customers want their money back after a failed payment.');
      await service.applyFile('tasks/TASK-0003.md');

      await service.semanticReady();
      // The edit is indexed through the semantic index's write queue (the build may have ended before it).
      await service.flush();
      const done = service.semanticStatus();
      expect(done).toMatchObject({ state: 'ready', done: COUNT * 3 - 2, total: COUNT * 3 - 2 });
      expect(done.missing).toBeUndefined();
      expect(done.completeMs).toBeGreaterThanOrEqual(done.readyMs ?? Infinity);
      const after = await service.searchUnified('give customers their money back', { mode: 'semantic' });
      expect(after.results[0].id).toBe('TASK-0003');
      const complete = await service.searchUnified('search issue 2', { limit: 3 });
      expect(complete.warnings ?? []).toEqual([]);
      await semantic(service).flush();
    } finally {
      await closeBacklog(service);
    }
    // The cache holds the chunks, not the titles that stood in for them meanwhile.
    const cache = await EmbeddingCache.open(cacheDir(), 'bundled:universal-sentence-encoder-lite@0.2.0', 512);
    expect(cache.warnings).toEqual([]);
    expect(cache.size).toBe(COUNT * 3 - 2);
  }, 180_000);

  it('a process that only reads the cache runs hybrid on what is cached, and says what is missing', async () => {
    // Every document's last chunk changes: its first two stay cached.
    for (let i = 1; i <= COUNT; i++) {
      if (i === 3) continue;
      const topic = topics[i % topics.length];
      await write(i, `${topic} issue ${i}`, body(topic, i, ' A new closing remark.'));
    }
    const service = await openBacklog({
      dir: base,
      cacheDir: cacheDir(),
      embeddings: 'bundled',
      embedMissing: 'never',
    });
    try {
      await service.semanticReady();
      expect(service.semanticStatus()).toMatchObject({ state: 'ready', missing: COUNT - 1 });
      const res = await service.searchUnified('search issue 2', { limit: 3 });
      expect(res.search_mode).toBe('hybrid');
      expect(res.warnings?.join(' ')).toMatch(
        /the semantic index is partial: meaning is matched on \d+ of \d+ chunks; 11 have no cached embedding \(run `backlog-search index`\)/,
      );
    } finally {
      await closeBacklog(service);
    }
  }, 180_000);
});
