/**
 * plain-options.ts reads the search and list options without zod: for every input it accepts, its answer
 * must be the schema's, key for key (order, defaults, optional keys given as undefined); whatever the
 * schema refuses it must leave to the schema. Checked on generated input, valid and not.
 */
import { describe, expect, it } from 'vitest';
import { listOptionsSchema, searchOptionsSchema, toBacklogError } from '../src/service/options.js';
import {
  LIST_KEYS,
  SEARCH_KEYS,
  hintFor,
  plainListError,
  plainListOptions,
  plainSearchOptions,
} from '../src/service/plain-options.js';
import type { ListOptionsInput } from '../src/service/options.js';
import { closeBacklog, openBacklog } from '../src/service/open-backlog.js';
import { isBacklogError, type BacklogError } from '../src/errors.js';
import { tempBacklog } from './helpers.js';

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const long = 'x'.repeat(1001);
const sparse: string[] = [];
sparse[2] = 'task';
/** Values for each kind of option: plain ones and ones only the schema can judge. */
const FILTER_VALUES: unknown[] = [
  undefined,
  'task',
  'task,epic',
  ' task , ,resource ',
  'Task',
  'nope',
  '',
  ',',
  'active,all',
  'draft',
  'parent',
  'children,references',
  ['task', 'document'],
  ['active', ' archived '],
  ['parent'],
  [],
  [''],
  ['a', 5],
  sparse,
  Array(101).fill('a'),
  Array(100).fill('a'),
  long,
  [long],
  5,
  null,
  true,
  { a: 1 },
];
const NUMBER_VALUES: unknown[] = [
  undefined,
  '1',
  '10',
  '0',
  '-1',
  '3',
  '100',
  '101',
  '1000',
  '1001',
  ' 5 ',
  '',
  '2.5',
  'abc',
  '0x10',
  '1e2',
  5,
  0,
  -0,
  2.5,
  Infinity,
  NaN,
  null,
  true,
  [],
  '9007199254740993',
];
const STRING_VALUES: unknown[] = [
  undefined,
  'relevant',
  'recent',
  'updated',
  'id',
  'priority',
  'best',
  'bm25',
  'hybrid',
  'semantic',
  'simple',
  'raw',
  'type',
  'status',
  '',
  5,
  null,
];
const BOOLEAN_VALUES: unknown[] = [undefined, true, false, 'true', 0, 1, null];
const QUERY_VALUES: unknown[] = [undefined, 'board view', '', '  login  ', 42, null, ['a']];

function valuesFor(key: string): unknown[] {
  if (key === 'query') return QUERY_VALUES;
  if (['limit', 'offset', 'max_hops'].includes(key)) return NUMBER_VALUES;
  if (['sort', 'mode', 'match_mode', 'group_by'].includes(key)) return STRING_VALUES;
  if (['conjunctive', 'include_content', 'include_scores', 'include_related'].includes(key))
    return BOOLEAN_VALUES;
  return FILTER_VALUES;
}

function generate(
  next: () => number,
  keys: string[],
  query: boolean,
  present: number,
): Record<string, unknown> {
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)];
  const input: Record<string, unknown> = {};
  if (query && next() < 0.9) input.query = next() < 0.8 ? 'board view' : pick(QUERY_VALUES);
  for (const key of keys) {
    if (key === 'query') continue;
    // Most keys absent; a present one mostly plain, sometimes anything of its kind.
    if (next() >= present) continue;
    input[key] = pick(valuesFor(key));
  }
  if (next() < 0.05) input[pick(['limt', 'q', '__proto__', 'type'])] = 'x';
  return input;
}

function compare(
  name: string,
  schema: typeof searchOptionsSchema | typeof listOptionsSchema,
  read: (input: unknown) => object | undefined,
  keys: string[],
  query: boolean,
): void {
  const next = random(23);
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < 20_000; i++) {
    const input = generate(next, keys, query, query ? 0.12 : 0.3);
    const plain = read(input);
    const parsed = schema.safeParse(input);
    if (!parsed.success) refused++;
    if (plain === undefined) continue;
    accepted++;
    const where = `${name} ${JSON.stringify(input)}`;
    expect(parsed.success, where).toBe(true);
    // Key for key, in order, undefined values included.
    expect(Object.entries(plain), where).toEqual(Object.entries(parsed.data!));
  }
  // Both branches ran often (the test can fail either way).
  expect(accepted).toBeGreaterThan(3000);
  expect(refused).toBeGreaterThan(3000);
}

describe('options read without zod (plain-options.ts)', () => {
  it("names the schemas' options in their order", () => {
    expect(SEARCH_KEYS).toEqual(Object.keys(searchOptionsSchema.shape));
    expect(LIST_KEYS).toEqual(Object.keys(listOptionsSchema.shape));
  });

  it('search: what it reads, it reads as the schema; the rest it leaves to the schema', () => {
    compare('search', searchOptionsSchema, plainSearchOptions, SEARCH_KEYS, true);
  });

  it('list: what it reads, it reads as the schema; the rest it leaves to the schema', () => {
    compare('list', listOptionsSchema, plainListOptions, LIST_KEYS, false);
  });

  it("reads the CLI's and the HTTP API's usual input", () => {
    const cli = {
      types: 'task',
      sort: 'relevant',
      limit: '10',
      offset: '0',
      conjunctive: false,
      match_mode: 'simple',
      include_related: false,
      max_hops: undefined,
      group_by: undefined,
      include_content: false,
      include_scores: false,
      query: 'board view windows',
    };
    expect(plainSearchOptions(cli)).toEqual(searchOptionsSchema.parse(cli));
    expect(Object.keys(plainSearchOptions(cli)!)).toContain('max_hops');
    expect(plainListOptions({ status: 'To Do,Done', limit: '50', offset: '0', sort: 'updated' })).toEqual(
      listOptionsSchema.parse({ status: 'To Do,Done', limit: '50', offset: '0', sort: 'updated' }),
    );
    expect(plainSearchOptions({ query: 'x', limit: 'abc' })).toBeUndefined();
    expect(plainSearchOptions(Object.create({ query: 'x' }))).toBeUndefined();
  });
});

describe('list() on a service opened without the schemas (optionSchemas: false)', () => {
  const wrong: unknown[] = [
    { limit: 'abc' },
    { limit: 5000 },
    { offset: -1 },
    { sort: 'nope' },
    { types: ['nope'] },
    { state: 'gone' },
    { status: 7 },
    { stauts: 'To Do' },
    { tags: 'x'.repeat(1001) },
    { tags: Array.from({ length: 101 }, () => 'a') },
    null,
    'status',
  ];

  it('refuses what it cannot read with the code and field the schema gives, and a hint (INTERNAL before)', async () => {
    const { dir, cleanup } = await tempBacklog();
    // No service of this file has loaded the schemas (a service that does loads them for the process).
    const lean = await openBacklog({ dir, embeddings: 'none', cacheDir: false, optionSchemas: false });
    const shape = (err: unknown) => {
      expect(isBacklogError(err), String(err)).toBe(true);
      const { code, hint, details } = err as BacklogError;
      return { code, field: details.field, hint: hint.length > 0 };
    };
    try {
      for (const input of wrong) {
        const parsed = listOptionsSchema.safeParse(input);
        expect(parsed.success, JSON.stringify(input)).toBe(false);
        const schema = shape(toBacklogError(parsed.error!, LIST_KEYS));
        expect(() => lean.list(input as ListOptionsInput)).toThrow();
        try {
          lean.list(input as ListOptionsInput);
        } catch (err) {
          expect(shape(err), JSON.stringify(input)).toEqual(schema);
        }
      }
      // Plain options are read as before.
      expect(lean.list({ limit: '2', state: 'all' }).results.length).toBe(2);
    } finally {
      await closeBacklog(lean);
      await cleanup();
    }
  });

  it("words list's own bound for limit (1 to 1000), search's for search (1 to 100)", () => {
    const hint = (known: string[]) => hintFor('limit', known);
    expect(hint(LIST_KEYS)).toBe('Pass limit as an integer from 1 to 1000.');
    expect(hint(SEARCH_KEYS)).toBe('Pass limit as an integer from 1 to 100.');
    expect(plainListError({ limit: 5000 }).hint).toBe('Pass limit as an integer from 1 to 1000.');
  });
});
