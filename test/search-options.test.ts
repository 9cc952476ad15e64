import { describe, expect, it } from 'vitest';
import { plainSearchOptions, searchOptionsSchema } from '../src/service/options.js';

/** Values for each key: valid and invalid, of the right type and not, so both paths are crossed. */
const VALUES: Record<string, unknown[]> = {
  query: ['board view', '', ' x ', 42, null],
  sort: ['relevant', 'recent', 'newest', 1],
  limit: [
    1,
    20,
    100,
    '10',
    ' 7 ',
    '1e1',
    0,
    101,
    2.5,
    '',
    '0x10',
    'ten',
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -1,
    true,
  ],
  offset: [0, 7, '3', '', -0, 2 ** 53 - 1, -1, 1.5, 'x', null, 2 ** 53, 1e300, '1e300'],
  mode: ['hybrid', 'bm25', 'semantic', 'lexical', 0],
  match_mode: ['simple', 'raw', 'regex'],
  conjunctive: [true, false, 'true', 1],
  include_content: [true, false, 0],
  include_scores: [true, false, 'yes'],
  include_related: [true, false, null],
  max_hops: [1, 3, '2', 4, 0, '9'],
  group_by: ['type', 'status'],
  relations: [['parent'], 'children', 'sideways'],
  types: ['task', ['epic', 'task'], 'widget'],
  status: ['To Do', ['Done']],
  tags: ['ui,api'],
  unknown_key: ['x'],
};

/** How many of each key's first VALUES the schema accepts (keys plainSearchOptions may take). */
const VALID: Record<string, number> = {
  query: 3,
  sort: 2,
  limit: 6,
  offset: 6,
  mode: 3,
  match_mode: 2,
  conjunctive: 2,
  include_content: 2,
  include_scores: 2,
  include_related: 2,
  max_hops: 3,
  group_by: 1,
};

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('plainSearchOptions (search options without zod)', () => {
  it('gives exactly what the schema gives, or leaves the input to the schema', () => {
    const rand = rng(5);
    const keys = Object.keys(VALUES);
    let plain = 0;
    let schema = 0;
    for (let n = 0; n < 3000; n++) {
      const input: Record<string, unknown> = {};
      for (const key of keys) {
        const r = rand();
        // Filters and unknown keys (always the schema's) now and then; the plain keys often.
        if (r < (VALID[key] ? 0.55 : 0.94)) continue;
        // An undefined value (a caller spreading optional options) is common: the key is there, unset.
        if (rand() < 0.15) input[key] = undefined;
        else {
          const from = VALID[key] && rand() < 0.9 ? VALID[key] : VALUES[key].length;
          input[key] = VALUES[key][Math.floor(rand() * from)];
        }
      }
      if (rand() < 0.9) input.query ??= 'q';
      const fast = plainSearchOptions(input);
      const parsed = searchOptionsSchema.safeParse(input);
      if (fast === undefined) {
        schema++;
        continue;
      }
      plain++;
      expect(parsed.success, JSON.stringify(input)).toBe(true);
      // Same keys in the same order (undefined ones included), same values.
      expect(Object.entries(fast)).toStrictEqual(Object.entries(parsed.data!));
    }
    // Both paths were taken often.
    expect(plain).toBeGreaterThan(100);
    expect(schema).toBeGreaterThan(100);
  });

  it('takes the usual requests, and leaves filters, bad values and unknown keys to the schema', () => {
    expect(plainSearchOptions({ query: 'a' })).toStrictEqual(searchOptionsSchema.parse({ query: 'a' }));
    const usual = { query: 'a', limit: 5, mode: 'bm25', include_scores: true, types: undefined };
    expect(Object.entries(plainSearchOptions(usual)!)).toStrictEqual(
      Object.entries(searchOptionsSchema.parse(usual)),
    );
    expect(plainSearchOptions({ query: 'a', status: 'Done' })).toBeUndefined();
    // The CLI's numbers come as text.
    expect(plainSearchOptions({ query: 'a', limit: '5', offset: '0' })).toStrictEqual(
      searchOptionsSchema.parse({ query: 'a', limit: '5', offset: '0' }),
    );
    expect(plainSearchOptions({ query: 'a', limit: 'five' })).toBeUndefined();
    expect(plainSearchOptions({ query: 'a', limt: 5 })).toBeUndefined();
    expect(plainSearchOptions({ query: 'a', limt: undefined })).toBeUndefined();
    expect(plainSearchOptions({ limit: 5 })).toBeUndefined();
  });
});
