/**
 * The generators of the fuzzing: queries and option objects (valid, hostile, every script). Built on
 * demand: `fc.string({ unit: 'binary' })` holds a table of about 80 MB, so the library fuzz samples its
 * cases in a worker thread (its own heap) and the heap of the process under test stays its own size.
 */
import fc from 'fast-check';

/** The 1 MB query of the fuzz: one string, sent between threads as MB_MARK and put back by `revive`. */
export const MB_STRING = 'a '.repeat(512 * 1024);
const MB_MARK = '\u0000fuzz:1MB\u0000';

function build() {
  const OPERATORS = [
    '"',
    "'",
    '(',
    ')',
    'AND',
    'OR',
    'NOT',
    '-',
    '*',
    ':',
    'title:',
    'tags:',
    'status:',
    'body:',
    'type:',
    '\\',
    '\u0000',
    ' ',
    '\t',
    '\n',
    'task',
    'mcp',
    'TASK-1',
    'task-12',
    '*:*',
    '~',
    '^2',
    '&&',
    '||',
    '{',
    '}',
    '[',
    ']',
    '%2e%2e',
    '../',
    '__proto__',
    'constructor',
    '\u202e',
    '\ud800',
    '🙂',
    'ß',
    'İ',
    'ǅ',
    '\u0301',
  ];

  /** Text of every kind: any code point (lone surrogates too), words of every script, operators, deep parentheses, 1 MB. */
  const text = fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
    {
      weight: 6,
      arbitrary: fc.array(fc.constantFrom(...OPERATORS), { maxLength: 30 }).map((a) => a.join(' ')),
    },
    {
      weight: 3,
      arbitrary: fc.array(fc.constantFrom(...OPERATORS), { maxLength: 30 }).map((a) => a.join('')),
    },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'search',
        'web ui',
        'mcp server',
        'board drag',
        'task',
        'cli',
        'sync conflict',
        'a',
        'the',
      ),
    },
    { weight: 1, arbitrary: fc.nat(3000).map((n) => `${'('.repeat(n)}x${')'.repeat(n)}`) },
    { weight: 1, arbitrary: fc.nat(1000).map((n) => `${'"a '.repeat(n)}`) },
    { weight: 1, arbitrary: fc.nat(500).map((n) => `${'a* OR '.repeat(n)}b`) },
    { weight: 1, arbitrary: fc.constant(MB_STRING) },
  );

  const valueOf = <T>(valid: fc.Arbitrary<T>) =>
    fc.oneof(
      { weight: 5, arbitrary: valid },
      { weight: 1, arbitrary: fc.anything() },
      { weight: 1, arbitrary: text },
    );

  /** Option objects: valid values, wrong types, unknown and prototype keys. */
  /** Options a caller would send: every value valid for the Backlog.md folder. */
  const validOptions = fc.record(
    {
      types: fc.constantFrom('task', 'epic', 'resource', ['task', 'epic'], 'task,resource'),
      status: fc.constantFrom('To Do', 'Done', 'In Progress', ['Done', 'To Do']),
      path: fc.constantFrom(
        'tasks/**',
        '**/*.md',
        '{tasks,docs}/**',
        '**/**/**/**/*',
        '[a-z]*/**',
        'tasks/task-1*',
      ),
      folder: fc.constantFrom('tasks', 'docs', 'decisions', 'completed'),
      limit: fc.integer({ min: 1, max: 100 }),
      offset: fc.integer({ min: 0, max: 300 }),
      sort: fc.constantFrom('relevant', 'recent'),
      mode: fc.constantFrom('bm25', 'hybrid', 'semantic'),
      conjunctive: fc.boolean(),
      include_content: fc.boolean(),
      include_scores: fc.boolean(),
      include_related: fc.boolean(),
      max_hops: fc.integer({ min: 1, max: 3 }),
      group_by: fc.constant('type'),
    },
    { requiredKeys: [] },
  );

  /** Options with wrong types, values out of range, unknown and prototype keys, text of every kind. */
  const hostileOptions = fc
    .tuple(
      fc.record(
        {
          types: valueOf(fc.constantFrom('task', 'nope', ['task', 'epic'])),
          status: valueOf(fc.constantFrom('To Do', 'open', 'Done')),
          tags: valueOf(fc.array(fc.string(), { maxLength: 3 })),
          parent_id: valueOf(fc.constantFrom('task-1', 'TASK-1', 'task-9999')),
          path: valueOf(fc.constantFrom('**/*.md', '{a,b}/**', '!(x)', '../**', '/etc/*')),
          folder: valueOf(fc.constantFrom('tasks', '../', '/etc')),
          limit: valueOf(fc.integer({ min: -5, max: 200 })),
          offset: valueOf(fc.integer({ min: -5, max: 2000 })),
          mode: valueOf(fc.constantFrom('bm25', 'hybrid', 'x')),
          max_hops: valueOf(fc.integer({ min: 0, max: 5 })),
        },
        { requiredKeys: [] },
      ),
      fc.dictionary(
        fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toString')),
        fc.anything(),
        { maxKeys: 2 },
      ),
    )
    .map(([known, extra]) => ({ ...known, ...extra }));

  const options = fc.oneof({ weight: 3, arbitrary: validOptions }, { weight: 1, arbitrary: hostileOptions });

  const query = fc.oneof({ weight: 19, arbitrary: text }, { weight: 1, arbitrary: fc.anything() });
  return { query, options, text };
}

let built: ReturnType<typeof build> | undefined;

/** The arbitraries, built on the first call. */
export function fuzzArbitraries(): ReturnType<typeof build> {
  return (built ??= build());
}

/** Case `k` of a run: batches of 5,000 sampled with seed 14,000 + the batch's first index. */
export function sampleCases(first: number, count: number): [unknown, unknown][] {
  const { query, options } = fuzzArbitraries();
  return fc.sample(fc.tuple(query, options), { numRuns: count, seed: 14_000 + first });
}

/** `value` with the 1 MB string swapped for `to` (a worker's cases would otherwise arrive as 1 MB copies). */
function swap(value: unknown, from: string, to: string, depth = 0): unknown {
  if (value === from) return to;
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => swap(v, from, to, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, k, {
      value: swap(v, from, to, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** For sending: the 1 MB string as a short mark. */
export const pack = (cases: [unknown, unknown][]) => cases.map((c) => swap(c, MB_STRING, MB_MARK));
/** On arrival: the mark back as the 1 MB string (one string, shared by every case that has it). */
export const revive = (cases: unknown[]) =>
  cases.map((c) => swap(c, MB_MARK, MB_STRING) as [unknown, unknown]);
