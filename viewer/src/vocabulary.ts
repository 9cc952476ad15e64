/**
 * How the open backlog names things (GET /health `vocabulary`): its project name, the kinds of item it
 * has (the type chips and filters), the states a task can be in, and what a parent is called. A server
 * from before the vocabulary gets the native format's words. Pure: tested in Node.
 */
import { DEFAULT_TYPES, ITEM_TYPES, type ItemType } from './state-url.js';

export interface Kind {
  type: ItemType;
  label: string;
  plural: string;
}

export interface Vocabulary {
  project: string;
  format: string;
  kinds: Kind[];
  /** `['active']` where tasks have no other state (native); Backlog.md: active, draft, completed, archived. */
  states: string[];
  /** `epic` or `parent task`. */
  parent: string;
  example_ids: string[];
}

export const NATIVE_VOCABULARY: Vocabulary = {
  project: 'Backlog',
  format: 'native',
  kinds: [
    { type: 'task', label: 'Task', plural: 'Tasks' },
    { type: 'epic', label: 'Epic', plural: 'Epics' },
    { type: 'resource', label: 'Resource', plural: 'Resources' },
  ],
  states: ['active'],
  parent: 'epic',
  example_ids: [],
};

/** The server's vocabulary with unknown kinds left out, or the native one. */
export function vocabularyOf(v: Partial<Vocabulary> | undefined | null): Vocabulary {
  if (!v || !Array.isArray(v.kinds)) return NATIVE_VOCABULARY;
  const kinds = v.kinds.filter((k) => (ITEM_TYPES as readonly string[]).includes(k.type));
  return {
    project: v.project || NATIVE_VOCABULARY.project,
    format: v.format ?? 'native',
    kinds: kinds.length ? kinds : NATIVE_VOCABULARY.kinds,
    states: Array.isArray(v.states) && v.states.length ? v.states : ['active'],
    parent: v.parent || 'epic',
    example_ids: Array.isArray(v.example_ids) ? v.example_ids : [],
  };
}

/**
 * The words for several projects shown together (the project switcher's "All"): every kind any has (in
 * the usual order, the first project's label), every state, and "Parent" where they call parents differently.
 */
export function mergeVocabularies(list: Vocabulary[], project: string): Vocabulary {
  if (list.length === 1) return { ...list[0], project };
  const kinds = ITEM_TYPES.flatMap((t) => list.flatMap((v) => v.kinds).find((k) => k.type === t) ?? []);
  const formats = [...new Set(list.map((v) => v.format))];
  const parents = [...new Set(list.map((v) => v.parent))];
  return {
    project,
    format: formats.length === 1 ? formats[0] : 'mixed',
    kinds: kinds.length ? kinds : NATIVE_VOCABULARY.kinds,
    states: ['active', 'draft', 'completed', 'archived'].filter((s) =>
      list.some((v) => v.states.includes(s)),
    ),
    parent: parents.length === 1 ? parents[0] : 'parent',
    example_ids: list.flatMap((v) => v.example_ids.slice(0, 1)),
  };
}

/** The kinds the type filter narrows by; with none chosen, the list shows these (`types` empty: every item). */
export function selectedKinds(v: Vocabulary, types: ItemType[]): ItemType[] {
  const all = v.kinds.map((k) => k.type);
  return types.length ? all.filter((t) => types.includes(t)) : all;
}

/**
 * The `types` of the URL after turning kind `t` on or off: `[]` when every kind is on, the default
 * (tasks and epics) when just the backlog's task kinds are; never nothing.
 */
export function toggleKind(v: Vocabulary, types: ItemType[], t: ItemType): ItemType[] {
  const all = v.kinds.map((k) => k.type);
  const on = selectedKinds(v, types);
  const next = on.includes(t) ? on.filter((x) => x !== t) : all.filter((x) => on.includes(x) || x === t);
  if (!next.length) return types;
  if (next.length === all.length) return [];
  const defaults = all.filter((x) => DEFAULT_TYPES.includes(x));
  if (next.length === defaults.length && defaults.every((x) => next.includes(x))) return DEFAULT_TYPES;
  return next;
}

/**
 * The spotlight's chips. The server reads `resource` as every file that is not a task, so where the
 * backlog has documents, decisions or milestones as kinds of their own, the chips are those (a search
 * without a chip still finds the other files).
 */
export function spotlightKinds(v: Vocabulary): Kind[] {
  const documentKinds = v.kinds.some((k) => ['document', 'decision', 'milestone'].includes(k.type));
  return documentKinds ? v.kinds.filter((k) => k.type !== 'resource') : v.kinds;
}

/** `Epic` / `Parent task`: the filter's label and the parent's name. */
export function parentLabel(v: Vocabulary): string {
  return v.parent.charAt(0).toUpperCase() + v.parent.slice(1);
}

/** The kinds' labels (`Task`, `Decision`), for badges; a kind the vocabulary lacks gets a plain name. */
export function kindLabel(v: Vocabulary, type: string): string {
  return v.kinds.find((k) => k.type === type)?.label ?? (type === 'resource' ? 'File' : capitalize(type));
}

/** How a state reads on a badge and in the filter. */
export const STATE_LABELS: Record<string, string> = {
  active: 'Active',
  draft: 'Drafts',
  completed: 'Completed',
  archived: 'Archived',
};

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
