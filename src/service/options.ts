// zod/mini, not zod: every lookup (search, list, a CLI one-shot) loads this module, and zod's classic API
// costs a start ~10x the import time for the same schemas (docs/performance.md, "zod/mini"). The schemas
// are the same zod 4 core schemas: parsed, and converted to JSON Schema for the MCP tools, as before.
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { BacklogError } from '../errors.js';
import { ITEM_TYPES } from '../storage/types.js';
import { LIST_SORTS } from './list-sort.js';
import { RELATIONS, SEARCH_MODES, type Relation, type SearchMode } from '../search/types.js';
import {
  MAX_FILTER_VALUES,
  MAX_FILTER_VALUE_CHARS,
  OPTION_ALIASES,
  STATE_FILTER_VALUES,
  closestOption,
  hintFor,
  plainSearchOptions,
  unknownOption,
} from './plain-options.js';

// Issue messages in English, as zod's classic API words them (zod/mini has no locale of its own).
if (!z.core.globalConfig.localeError) z.config(en());

export { MAX_FILTER_VALUES, MAX_FILTER_VALUE_CHARS, OPTION_ALIASES, STATE_FILTER_VALUES, closestOption };

/** `schema` with a description, as tools/list advertises it (classic zod's `.describe()`). */
export function described<T extends z.ZodMiniType>(schema: T, description: string): T {
  z.globalRegistry.add(schema, { description });
  return schema;
}

/** One value or a list; a string with commas is a list too (`"auth,ui"`), as agents often send it. */
export const oneOrMany = <T extends z.core.$ZodType<string>>(item: T) => {
  const either = z.union([item, z.array(item).check(z.maxLength(MAX_FILTER_VALUES))]);
  return z.pipe(
    either,
    z.transform(
      (v: z.output<typeof either>) =>
        (Array.isArray(v) ? v : String(v).split(','))
          .map((s) => String(s).trim())
          .filter(Boolean) as z.output<T>[],
    ),
  );
};

const typeValue = z.enum(ITEM_TYPES);
const filterValue = z.string().check(z.maxLength(MAX_FILTER_VALUE_CHARS));
/** A filter: one value or a list of them, optional, with its description. */
const filter = <T extends z.ZodMiniType>(values: T, description: string) =>
  described(z.optional(values), description);

/** Filters shared by search and list. Every value list combines with OR, the fields with AND. */
export const filterShape = {
  types: filter(
    z.pipe(oneOrMany(filterValue), z.array(typeValue)),
    'task, epic, resource (any file that is not a task; Backlog.md: also document, decision, milestone)',
  ),
  status: filter(
    oneOrMany(filterValue),
    "the backlog's statuses, any case and spacing (listed by backlog_list)",
  ),
  state: filter(
    z.pipe(oneOrMany(filterValue), z.array(z.enum(STATE_FILTER_VALUES))),
    "where a task stands, from its folder: active, draft, completed, archived, or all. Default: list shows what the backlog's own tool lists (Backlog.md: active tasks and documents); search covers all, archived ranked lower",
  ),
  parent_id: filter(oneOrMany(filterValue), 'items under these ids, at any depth, and the items themselves'),
  tags: filter(oneOrMany(filterValue), 'any of these tags'),
  author: filter(oneOrMany(filterValue), 'any of these authors'),
  // picomatch throws on a pattern over 65,536 characters; no real glob comes near 1,000.
  path: filter(
    oneOrMany(filterValue),
    'file paths or globs relative to the backlog root, e.g. resources/adr/*.md',
  ),
  folder: filter(oneOrMany(filterValue), 'folders relative to the root; everything beneath matches'),
  file_type: filter(oneOrMany(filterValue), 'extensions without the dot: md, json, yaml'),
};

/** An integer from `min` (to `max`), read from a string too, with a default. */
const integer = (min: number, max: number | undefined, fallback: number) =>
  z._default(
    z.coerce.number().check(z.int(), z.minimum(min), ...(max === undefined ? [] : [z.maximum(max)])),
    fallback,
  );

export { SEARCH_MODES, RELATIONS, type Relation, type SearchMode };

/** The options of `searchUnified`: the one schema the CLI, MCP tools and HTTP API all validate with. */
export const searchOptionsSchema = z.strictObject({
  query: described(z.string(), 'words to search for; an id such as TASK-0042 returns that item first'),
  ...filterShape,
  sort: z._default(z.enum(['relevant', 'recent']), 'relevant'),
  limit: integer(1, 100, 20),
  offset: integer(0, undefined, 0),
  mode: described(z.optional(z.enum(SEARCH_MODES)), 'default: hybrid once embeddings are ready'),
  match_mode: described(
    z._default(z.enum(['simple', 'raw']), 'simple'),
    'simple: plain words, every character literal. raw: "exact phrase", prefix*, AND / OR / NOT, -term, field:term (title, tags, status, author, type, body), ( )',
  ),
  conjunctive: described(z._default(z.boolean(), false), 'every query word must match (in any field)'),
  include_content: described(
    z._default(z.boolean(), false),
    'add each content (MCP: cut at 4,000 characters)',
  ),
  include_scores: described(z._default(z.boolean(), false), 'add each score: lexical, vector, final'),
  include_related: described(
    z._default(z.boolean(), false),
    'add items linked to the hits: parent, children, references',
  ),
  max_hops: described(integer(1, 3, 1), 'links away a related item may be'),
  relations: filter(
    z.pipe(oneOrMany(filterValue), z.array(z.enum(RELATIONS))),
    'links to follow (default all)',
  ),
  group_by: described(z.optional(z.enum(['type'])), 'a count and the best hits per type'),
});

export type SearchOptionsInput = z.input<typeof searchOptionsSchema>;
export type SearchOptions = z.output<typeof searchOptionsSchema>;

export const listOptionsSchema = z.strictObject({
  ...filterShape,
  sort: described(
    z._default(z.enum(LIST_SORTS), 'updated'),
    'updated (newest first, also "recent"), created, id, title, priority, status (board order)',
  ),
  limit: integer(1, 1000, 100),
  offset: integer(0, undefined, 0),
});

export type ListOptionsInput = z.input<typeof listOptionsSchema>;
export type ListOptions = z.output<typeof listOptionsSchema>;

export { MAX_QUERY_CHARS } from './limits.js';

/** Turns a zod failure into the library's error: INVALID_QUERY for the query, INVALID_FILTER for the rest. */
export function toBacklogError(error: z.core.$ZodError, known: string[]): BacklogError {
  const issue = error.issues[0];
  if (issue.code === 'unrecognized_keys') return unknownOption(issue.keys[0], known);
  const field = String(issue.path[0] ?? 'options');
  const tooBig = tooBigIssue(issue);
  if (tooBig && field !== 'query' && field !== 'limit' && field !== 'offset' && field !== 'max_hops')
    return new BacklogError(
      'INPUT_TOO_LARGE',
      `${field}: over ${tooBig.maximum} ${tooBig.origin === 'array' ? 'values' : 'characters'}`,
      `Pass at most ${MAX_FILTER_VALUES} values of at most ${MAX_FILTER_VALUE_CHARS} characters each.`,
      { field, limit: Number(tooBig.maximum) },
    );
  if (field === 'query')
    return new BacklogError(
      'INVALID_QUERY',
      `query: ${issue.message}`,
      'Pass the words to search for as a string.',
      { field },
    );
  return new BacklogError('INVALID_FILTER', `${field}: ${issue.message}`, hintFor(field, known), { field });
}

/**
 * The search options as the schema reads them, or its first issue as a BacklogError (`known`: the keys to
 * suggest for a misspelt one). `jitless`: zod would compile the object schema into a function on its first
 * parse (4-18 ms of a one-shot's first search); its plain parse costs a settled search no more (measured,
 * docs/performance.md).
 */
export function parseSearchOptions(input: Record<string, unknown>, known: string[]): SearchOptions {
  const plain = plainSearchOptions(input);
  if (plain) return plain as SearchOptions;
  const parsed = searchOptionsSchema.safeParse(input, { jitless: true });
  if (!parsed.success) throw toBacklogError(parsed.error, known);
  return parsed.data;
}

/** The size limit an issue broke, looking inside a one-or-many union's branches. */
function tooBigIssue(issue: z.core.$ZodIssue): { origin: string; maximum: number | bigint } | undefined {
  if (issue.code === 'too_big') return issue;
  if (issue.code === 'invalid_union')
    for (const branch of issue.errors) for (const inner of branch) if (inner.code === 'too_big') return inner;
  return undefined;
}

/** Renames accepted aliases (q -> query, top_k -> limit, id -> ids, ...); anything else unknown is left for the strict schema to reject. */
export function normalizeArgs(
  raw: unknown,
  known: readonly string[],
  aliases: Record<string, string> = {},
  nullIsUnset = false,
): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new BacklogError(
      'INVALID_FILTER',
      'arguments must be an object',
      'Pass the options as a JSON object, e.g. {"query": "login"}.',
    );
  // A Map, then own properties: a key named `__proto__` stays an (unknown) option, never a prototype.
  const out = new Map<string, unknown>();
  const entries = Object.entries(raw as Record<string, unknown>).filter(
    ([, v]) => !(nullIsUnset && v === null),
  );
  for (const [key, value] of entries) if (known.includes(key)) out.set(key, value);
  for (const [key, value] of entries) {
    if (known.includes(key)) continue;
    const target = Object.hasOwn(aliases, key)
      ? aliases[key]
      : Object.hasOwn(OPTION_ALIASES, key)
        ? OPTION_ALIASES[key]
        : undefined;
    if (target === undefined || !known.includes(target)) {
      out.set(key, value);
      continue;
    }
    if (out.has(target))
      throw new BacklogError(
        'INVALID_FILTER',
        `"${key}" and "${target}" were both given`,
        `"${key}" is another name for "${target}"; pass only "${target}".`,
        { field: key },
      );
    out.set(target, value);
  }
  return Object.fromEntries(out);
}
