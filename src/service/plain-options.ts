/**
 * The search and list options read without zod, for input whose every value is of its plain type (what
 * the CLI, the HTTP API and most tool calls send): the same object the schemas in options.ts give for it,
 * key for key (test/plain-options.test.ts compares them on generated input). Anything else (a wrong type,
 * a value out of range, an unknown key) returns undefined, and the schema reads it and words its error.
 * A one-shot search or list thereby never loads zod (issue #23: its module costs a start more than the
 * parse).
 */
import { BacklogError } from '../errors.js';
import { ITEM_TYPES, TASK_STATES } from '../storage/types.js';
import { RELATIONS, SEARCH_MODES } from '../search/types.js';
import { swapDistance } from '../search/suggest.js';
import { LIST_SORTS } from './list-sort.js';

/** No real status, tag, id or folder comes near these; longer input is INPUT_TOO_LARGE before any work is done. */
export const MAX_FILTER_VALUE_CHARS = 1000;
export const MAX_FILTER_VALUES = 100;
/** The `state` filter's values: the task states, and `all` for no state filter. */
export const STATE_FILTER_VALUES = [...TASK_STATES, 'all'] as const;

/** What a reader returns for a value it leaves to the schema; TOO_LARGE: one over a filter's budget. */
const SCHEMA = Symbol('schema');
const TOO_LARGE = Symbol('too large');

interface Field {
  read: (value: unknown) => unknown;
  /** The value when none is given (the schema's `default`). */
  fallback?: unknown;
  required?: boolean;
}

/** One value or a list, a string with commas a list too (options.ts `oneOrMany`), each of `allowed` if given. */
function values(allowed?: readonly string[]): Field {
  return {
    read(value) {
      let list: string[];
      if (typeof value === 'string') {
        if (value.length > MAX_FILTER_VALUE_CHARS) return TOO_LARGE;
        list = value.split(',');
      } else if (Array.isArray(value)) {
        if (value.length > MAX_FILTER_VALUES) return TOO_LARGE;
        list = [];
        for (let i = 0; i < value.length; i++) {
          const v: unknown = value[i];
          if (typeof v !== 'string') return SCHEMA;
          if (v.length > MAX_FILTER_VALUE_CHARS) return TOO_LARGE;
          list.push(v);
        }
      } else return SCHEMA;
      const out = list.map((s) => s.trim()).filter(Boolean);
      return allowed && !out.every((s) => allowed.includes(s)) ? SCHEMA : out;
    },
  };
}

/** An integer in [min, max], read from a string too (`z.coerce.number().int()`). */
function integer(min: number, max: number, fallback: number): Field {
  return {
    fallback,
    read(value) {
      if (typeof value !== 'string' && typeof value !== 'number') return SCHEMA;
      const n = Number(value);
      return Number.isSafeInteger(n) && n >= min && n <= max ? n : SCHEMA;
    },
  };
}

function oneOf(allowed: readonly string[], fallback?: string): Field {
  return {
    ...(fallback !== undefined ? { fallback } : {}),
    read: (value) => (typeof value === 'string' && allowed.includes(value) ? value : SCHEMA),
  };
}

const flag: Field = { fallback: false, read: (value) => (typeof value === 'boolean' ? value : SCHEMA) };

/** The filters, in the schemas' order (`filterShape`). */
const FILTERS: Record<string, Field> = {
  types: values(ITEM_TYPES),
  status: values(),
  state: values(STATE_FILTER_VALUES),
  parent_id: values(),
  tags: values(),
  author: values(),
  path: values(),
  folder: values(),
  file_type: values(),
};

/** searchOptionsSchema's fields, in its order. */
const SEARCH_FIELDS: Record<string, Field> = {
  query: { required: true, read: (value) => (typeof value === 'string' ? value : SCHEMA) },
  ...FILTERS,
  sort: oneOf(['relevant', 'recent'], 'relevant'),
  limit: integer(1, 100, 20),
  offset: integer(0, Number.MAX_SAFE_INTEGER, 0),
  mode: oneOf(SEARCH_MODES),
  match_mode: oneOf(['simple', 'raw'], 'simple'),
  conjunctive: flag,
  include_content: flag,
  include_scores: flag,
  include_related: flag,
  max_hops: integer(1, 3, 1),
  relations: values(RELATIONS),
  group_by: oneOf(['type']),
};

/** listOptionsSchema's fields, in its order. */
const LIST_FIELDS: Record<string, Field> = {
  ...FILTERS,
  sort: oneOf(LIST_SORTS, 'updated'),
  limit: integer(1, 1000, 100),
  offset: integer(0, Number.MAX_SAFE_INTEGER, 0),
};

/** The option names, in the schemas' order (checked against them in test/plain-options.test.ts). */
export const SEARCH_KEYS = Object.keys(SEARCH_FIELDS);
export const LIST_KEYS = Object.keys(LIST_FIELDS);

function plain(input: unknown, fields: Record<string, Field>): Record<string, unknown> | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const proto: unknown = Object.getPrototypeOf(input);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!Object.hasOwn(fields, key)) return undefined;
  // As the schema makes it: every field in its order; a default when none is given; an optional field
  // given as undefined is kept as undefined, one not given is left out.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const field = fields[key];
    const value = Object.hasOwn(given, key) ? given[key] : undefined;
    if (value === undefined) {
      if (field.required) return undefined;
      if ('fallback' in field) out[key] = field.fallback;
      else if (Object.hasOwn(given, key)) out[key] = undefined;
      continue;
    }
    const read = field.read(value);
    if (read === SCHEMA || read === TOO_LARGE) return undefined;
    out[key] = read;
  }
  return out;
}

/**
 * The search options as searchOptionsSchema reads them (its SearchOptions; options.ts imports this module,
 * so the type is the caller's to give), or undefined for input the schema must read.
 */
export function plainSearchOptions(input: unknown): Record<string, unknown> | undefined {
  return plain(input, SEARCH_FIELDS);
}

/** The list options as listOptionsSchema reads them (its ListOptions), or undefined for input the schema must read. */
export function plainListOptions(input: unknown): Record<string, unknown> | undefined {
  return plain(input, LIST_FIELDS);
}

/**
 * Why plainListOptions declined `input`, with the code the schema gives wrong input (INVALID_FILTER,
 * INPUT_TOO_LARGE) and a hint: `list()` of a service opened without the schemas (`optionSchemas: false`)
 * reads plain options only, synchronously, and refuses the rest so (a value only the schema would
 * take, such as `limit: [5]`, is refused too).
 */
export function plainListError(input: unknown): BacklogError {
  const known = LIST_KEYS;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return new BacklogError(
      'INVALID_FILTER',
      'options: expected an object',
      'Pass the options as an object.',
      {
        field: 'options',
      },
    );
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!Object.hasOwn(LIST_FIELDS, key)) return unknownOption(key, known);
  for (const key of known) {
    const value = Object.hasOwn(given, key) ? given[key] : undefined;
    const read = value === undefined ? undefined : LIST_FIELDS[key].read(value);
    if (read === TOO_LARGE)
      return new BacklogError(
        'INPUT_TOO_LARGE',
        `${key}: over ${MAX_FILTER_VALUES} values or ${MAX_FILTER_VALUE_CHARS} characters`,
        `Pass at most ${MAX_FILTER_VALUES} values of at most ${MAX_FILTER_VALUE_CHARS} characters each.`,
        { field: key },
      );
    if (read === SCHEMA)
      return new BacklogError('INVALID_FILTER', `${key}: invalid value`, hintFor(key, known), { field: key });
  }
  return new BacklogError(
    'INVALID_FILTER',
    'options: not a plain object',
    'Pass the options as a plain object ({ ... }), or open the backlog with the option schemas (the default).',
    { field: 'options' },
  );
}

/** Names agents often guess for an option, and the option they mean (accepted as aliases by the MCP tools). */
export const OPTION_ALIASES: Readonly<Record<string, string>> = {
  q: 'query',
  text: 'query',
  top_k: 'limit',
  max_results: 'limit',
  k: 'limit',
  type: 'types',
  tag: 'tags',
  statuses: 'status',
  parent: 'parent_id',
  skip: 'offset',
};

/** An option that is none of `known`: INVALID_FILTER, with the closest known one as the hint. */
export function unknownOption(key: string, known: string[]): BacklogError {
  const guess = closestOption(key, known);
  return new BacklogError(
    'INVALID_FILTER',
    `Unknown option "${key}"`,
    guess ? `Did you mean "${guess}"?` : `Known options: ${known.join(', ')}.`,
    { field: key },
  );
}

/** The closest known option to an unknown one, for "did you mean" hints. */
export function closestOption(name: string, known: string[]): string | undefined {
  const aliases = OPTION_ALIASES;
  if (Object.hasOwn(aliases, name) && known.includes(aliases[name])) return aliases[name];
  const lower = name.toLowerCase();
  const prefix = known.find((k) => k.startsWith(lower) || lower.startsWith(k));
  if (prefix) return prefix;
  // Typos: the known option within 2 edits (1 for short names), e.g. limt -> limit, stauts -> status.
  let best: string | undefined;
  let bestDistance = lower.length <= 4 ? 2 : 3;
  for (const k of known) {
    const d = swapDistance(lower, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** The hint for a wrong value of `field` (`known`: the options of the call: search's have `query`). */
export function hintFor(field: string, known: string[]): string {
  const search = known.includes('query');
  switch (field) {
    case 'types':
      return `Use one or more of: ${ITEM_TYPES.join(', ')}.`;
    case 'state':
      return `Use one or more of: ${STATE_FILTER_VALUES.join(', ')}.`;
    case 'limit':
      return `Pass limit as an integer from 1 to ${search ? 100 : 1000}.`;
    case 'offset':
      return 'Pass offset as an integer >= 0 (use next_offset from the previous page).';
    case 'sort':
      // Search takes a query; list does not, and has its own orders.
      return search
        ? 'Use sort "relevant" or "recent".'
        : `Use sort ${LIST_SORTS.map((s) => `"${s}"`).join(', ')}.`;
    case 'mode':
      return `Use mode ${SEARCH_MODES.join(', ')}.`;
    default:
      return `Check the value of "${field}".`;
  }
}
