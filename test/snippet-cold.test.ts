/**
 * A restored process's snippets (issue #23): the index carries the analyzer's run caches
 * (TextAnalyzer.savedRuns), so a body never prepared in this process is analyzed from them. The
 * answers must be those of the process that built the index, and a table that is not well formed is
 * ignored, never trusted or crashed on.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { SavedSnippets } from '../src/search/saved-snippets.js';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { BACKLOG_MD_DIR } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const table = (text: string) => new TextEncoder().encode(text);

describe('snippets of bodies never prepared, from a restored index', () => {
  test('equal those of the process that built it (the Backlog.md folder)', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'snipcold-'));
    dirs.push(tmp);
    const dir = join(tmp, 'backlog');
    await cp(BACKLOG_MD_DIR, dir, { recursive: true, filter: (src) => !src.includes('.cache') });
    const queries = ['board view windows', 'task list filter', 'mcp server tools', 'drafts archive', 'ID-42'];
    const answers = async (service: Awaited<ReturnType<typeof openBacklog>>) => {
      const out = [];
      for (const q of queries) {
        const r = await service.searchUnified(q, { limit: 20, include_scores: true });
        out.push(r.results.map((x) => [x.id, x.score, x.snippet]));
      }
      return out;
    };
    // Built from the files, its analyzer warm from the build: the reference.
    const built = await openBacklog({
      dir,
      cacheDir: false,
      embeddings: 'none',
      watch: false,
      background: false,
    });
    const expected = await answers(built);
    await closeBacklog(built);
    // Opened once to write `.cache/`, then restored from it with nothing prepared in the background.
    await closeBacklog(await openBacklog({ dir, embeddings: 'none', watch: false }));
    const restored = await openBacklog({ dir, embeddings: 'none', watch: false, background: false });
    const got = await answers(restored);
    // The restored result store read the bodies prepared by the process that wrote the index (since
    // CACHE_FORMAT 18; the analyzer's run table serves bodies not saved: a backlog over the saved limits).
    const saved = (restored.index as unknown as { resultStore: { saved: unknown } }).resultStore.saved;
    await closeBacklog(restored);
    expect(got).toEqual(expected);
    expect(expected.flat().length).toBeGreaterThan(20);
    expect(saved).toBeInstanceOf(SavedSnippets);
  }, 120_000);
});

describe('the analyzer run table (savedRuns / restoreRuns)', () => {
  const text = 'The FeatureStore syncs sync_queue rows; TASK-0042 and the failures of windows.';

  test('goes round: a restored analyzer gives the runs the saving one did', () => {
    const a = new TextAnalyzer();
    const runs = a.runs(text, 'english');
    const saved = a.savedRuns();
    expect(Object.keys(saved)).toEqual(['english']);
    const b = new TextAnalyzer();
    b.restoreRuns(saved);
    expect(b.runs(text, 'english')).toEqual(runs);
    // Saved again before use: the entries are kept, not only those this process analyzed.
    const c = new TextAnalyzer();
    c.restoreRuns(saved);
    expect(c.savedRuns()).toEqual(saved);
  });

  test('is what the analyzer reads, until the language plan changes', () => {
    const a = new TextAnalyzer();
    a.restoreRuns({ english: table('Windows\u00011\tbogus') });
    expect(a.runs('Windows', 'english')[0].terms).toEqual(['bogus']);
    a.languages.restoreState(a.languages.state()); // a new plan: the table was made under another
    expect(a.runs('Windows', 'english')[0].terms).toEqual(['window']);
  });

  test('a table that is not well formed is ignored, entry by entry or whole', () => {
    const fresh = new TextAnalyzer().runs(text, 'english');
    const hostile: unknown[] = [
      null,
      7,
      'english',
      { english: 'not bytes' },
      { english: table('no separator') },
      { english: table('Windows\nsyncs\u00011\twindow') }, // two runs, one line of terms
      { english: table('Windows\u0001x\tbogus') }, // span not a number
      { english: table('Windows\u00013\tbogus') }, // span over the terms
      { english: table('Windows\u00011\t') }, // a span without terms
      { english: table('Windows\u0001-1\tbogus') },
      { english: table('Windows\u00011\tbo\u0001gus') },
      { english: table('Windows\u00011\tbogus\textra') },
      { english: new Uint8Array([0xff, 0xfe, 0x01, 0x00]) },
      { ['x'.repeat(1000)]: table('Windows\u00011\tbogus') },
    ];
    for (const saved of hostile) {
      const a = new TextAnalyzer();
      expect(() => a.restoreRuns(saved)).not.toThrow();
      expect(a.runs(text, 'english')).toEqual(fresh);
      expect(() => a.savedRuns()).not.toThrow();
    }
    // Out of order: looked up by halves, so a run may be missed (then analyzed), never mistaken.
    const a = new TextAnalyzer();
    a.restoreRuns({ english: table('zeta\nFeatureStore\u00011\tzeta\n2\tfeatur store featurestor') });
    expect(a.runs(text, 'english')).toEqual(fresh);
  });
});
