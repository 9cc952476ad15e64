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
);

describe('any input', () => {
  it('simple search never throws anything but INVALID_QUERY, and returns well-formed results', () => {
    fc.assert(
      fc.property(queryText, (q) => {
        try {
          const res = service.searchUnified(q, { limit: 5 });
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
