import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { openBacklog, type BacklogService } from '../src/index.js';
import { BacklogError } from '../src/errors.js';
import { DEMO_DIR } from './helpers.js';

let service: BacklogService;
beforeAll(async () => {
  service = await openBacklog({ dir: DEMO_DIR });
});

const queryText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.string({
    unit: fc.constantFrom(...'"*()-:ANDORNOT _%+\\/.[]{}^~!?\'`#@$&|<>'.split('')),
    maxLength: 60,
  }),
  fc.string({ unit: 'binary', minLength: 1990, maxLength: 2600 }),
  // Sequences of the query language's own pieces, valid and invalid.
  fc
    .array(
      fc.constantFrom(
        'AND',
        'OR',
        'NOT',
        '(',
        ')',
        '"',
        '-',
        'title:',
        'tags:',
        'status:open',
        'type:',
        'sync',
        'auth*',
        '*',
        'rate-limit',
        'ё',
        '596',
      ),
      { maxLength: 25 },
    )
    .chain((parts) => fc.constantFrom(parts.join(' '), parts.join(''))),
);

const MAX = 2000;

describe('any input', () => {
  it('raw mode returns results or QUERY_SYNTAX, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(queryText, async (q) => {
        try {
          const res = await service.searchUnified(q, { limit: 5, match_mode: 'raw' });
          expect(res.total).toBeGreaterThanOrEqual(res.results.length);
        } catch (err) {
          expect(err).toBeInstanceOf(BacklogError);
          const code = (err as BacklogError).code;
          // A blank or over-long query is INVALID_QUERY before any parsing, in both modes.
          if (code === 'INVALID_QUERY') expect(q.trim() === '' || q.trim().length > MAX).toBe(true);
          else expect(code).toBe('QUERY_SYNTAX');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('simple search never throws anything but INVALID_QUERY, and returns well-formed results', async () => {
    await fc.assert(
      fc.asyncProperty(queryText, async (q) => {
        try {
          const res = await service.searchUnified(q, { limit: 5 });
          expect(res.total).toBeGreaterThanOrEqual(res.results.length);
          for (const r of res.results) expect(typeof r.snippet.text).toBe('string');
        } catch (err) {
          expect(err).toBeInstanceOf(BacklogError);
          expect((err as BacklogError).code).toBe('INVALID_QUERY');
        }
      }),
      { numRuns: 2000 },
    );
  });
});
