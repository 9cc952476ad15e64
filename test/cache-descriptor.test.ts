/**
 * A stamped cache is read when its parts are first needed, through a descriptor kept open until every
 * part is read (src/storage/unread-bytes.ts). A long-lived process must not hold it for ever: it reads
 * the rest once its background work is done, and close() lets it go. Counted in this real process's
 * /proc/self/fd (Linux).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { HAS_BACKLOG_MD_FULL, BACKLOG_MD_DIR, tempBacklog } from './helpers.js';

/** This process's descriptors open on `file`. */
function descriptorsOn(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // Closed meanwhile (the listing's own descriptor).
    }
  }
  return n;
}

async function until(done: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return done();
}

// The Backlog.md folder's cache (13 MB) is more than an open reads at once; the small excerpt's (when
// ../shared is absent) is read whole by the open, so it has no descriptor left to count.
describe.skipIf(!existsSync('/proc/self/fd') || !HAS_BACKLOG_MD_FULL)(
  'the persisted index file of a long-lived process',
  () => {
    it('is closed once the background work is done, and on close()', async () => {
      const { dir, cleanup } = await tempBacklog(BACKLOG_MD_DIR);
      const cache = join(dir, '.cache', 'index.bin');
      try {
        await closeBacklog(await openBacklog({ dir, embeddings: 'none' })); // writes and stamps the cache

        const server = await openBacklog({ dir, embeddings: 'none' });
        expect(server.cacheStatus().used).toBe(true);
        expect(descriptorsOn(cache)).toBe(1); // read when first needed
        await server.index.warmedUp();
        expect(await until(() => descriptorsOn(cache) === 0, 10_000)).toBe(true);
        // Every part is still there to read: a query that needs one that was unread answers as before.
        const answer = await server.searchUnified('board view windows', { limit: 5 });
        expect(answer.results.length).toBeGreaterThan(0);
        await closeBacklog(server);

        // Closed before the background work is done: the file is let go at once.
        const early = await openBacklog({ dir, embeddings: 'none' });
        expect(descriptorsOn(cache)).toBe(1);
        await closeBacklog(early);
        expect(descriptorsOn(cache)).toBe(0);
        expect(existsSync(cache)).toBe(true);
      } finally {
        await cleanup();
      }
    }, 120_000);
  },
);
