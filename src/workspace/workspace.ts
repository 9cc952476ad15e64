/**
 * A workspace: several backlogs behind the reads and writes of one BacklogService (docs/workspace.md).
 * Each backlog keeps its own service (files, ids, config, cache, diagnostics, watcher); this class picks
 * the projects a request is about (`project`), asks each, and merges. With one backlog open every call
 * is the service's own, unchanged; with several, ids come back qualified (`demo:TASK-0001`) and every
 * result, item and write result carries `project`.
 */
import { droppedCacheReason, errors, isBacklogError } from '../errors.js';
import { parseRawQuery, positiveText } from '../search/query-parser.js';
import type { RelatedResult, ResultGroup, SearchHit, SearchResult } from '../search/types.js';
import {
  filtersOf,
  type BacklogService,
  type GetEntry,
  type ItemMetadata,
} from '../service/backlog-service.js';
import { updatedMsOf } from '../service/item-store.js';
import { sortItems } from '../service/list-sort.js';
import {
  listOptionsSchema,
  parseSearchOptions,
  searchOptionsSchema,
  toBacklogError,
  type ListOptionsInput,
  type SearchOptions,
  type SearchOptionsInput,
} from '../service/options.js';
import type { ListResponse, SearchResponse } from '../service/responses.js';
import type { ItemSummary } from '../service/summary.js';
import type { DiagnosticsReport } from '../service/diagnostics.js';
import type { BacklogItem, TaskState } from '../storage/types.js';
import { parseQualified, projectSlug, qualify } from './ids.js';
import {
  collapseVersions,
  mergeRanked,
  outsideStats,
  rankList,
  workspaceBound,
  type Collapsed,
  type Ranked,
  type WorkspaceFusion,
  type WorkspaceVersions,
} from './merge.js';
import type { OutsideStats } from '../search/score.js';
import type {
  ProjectOption,
  ProjectProblem,
  WithProject,
  WorkspaceProject,
  WorkspaceScope,
} from './types.js';
import { eachProject, eachProjectSync } from './each-project.js';
import { WorkspaceWrites } from './writes.js';

export type { ProjectOption, ProjectProblem, WithProject, WorkspaceProject };

const SEARCH_KEYS = [...Object.keys(searchOptionsSchema.shape), 'project'];
const LIST_KEYS = [...Object.keys(listOptionsSchema.shape), 'project'];

/** Per-backlog page size of a merged search (the schema's most). */
const PAGE = 100;

/**
 * For each project of a scope of several: whether another project in scope has a term. A query word one
 * backlog has is no typo: the others do not complete or typo-expand it (SearchRequest.knownElsewhere), as
 * one index over all the files would not. Each term is looked up once per search.
 */
function knownElsewhere(scope: WorkspaceProject[]): Map<WorkspaceProject, (term: string) => boolean> {
  if (scope.length < 2) return new Map();
  const holders = new Map<string, WorkspaceProject[]>();
  const holdersOf = (term: string) => {
    let list = holders.get(term);
    if (!list) holders.set(term, (list = scope.filter((p) => p.service.index.hasTerm(term))));
    return list;
  };
  return new Map(scope.map((p) => [p, (term: string) => holdersOf(term).some((q) => q !== p)]));
}

export class Workspace implements WorkspaceScope {
  readonly writes: WorkspaceWrites;
  /** Replaced, never changed in place: a call that took the list keeps a consistent one (add/remove). */
  #projects: readonly WorkspaceProject[];
  #listeners = new Set<() => void>();

  constructor(
    projects: readonly WorkspaceProject[],
    readonly problems: readonly ProjectProblem[] = [],
    readonly fusion: WorkspaceFusion = 'bound',
    /** Versions of one document in several projects: one result (`once`, the default; merge.ts), or each (`apart`). */
    readonly versions: WorkspaceVersions = 'once',
  ) {
    this.#projects = [...projects];
    this.writes = new WorkspaceWrites(this);
  }

  /** A workspace of one backlog (the MCP server over one BacklogService): every call is the service's own. */
  static of(service: BacklogService): Workspace {
    return new Workspace([{ name: projectSlug(service.projectName), dir: service.dir, service }]);
  }

  get projects(): readonly WorkspaceProject[] {
    return this.#projects;
  }

  /**
   * Adds an open backlog (the MCP server's roots, src/mcp/roots.ts). Its name must be free: uniqueName
   * gives one. Listeners (onProjectsChange) are told.
   */
  add(project: WorkspaceProject): void {
    if (this.byName(project.name))
      throw errors.invalidFilter(
        'project',
        `a project is already named "${project.name}"`,
        'Pick a free name.',
      );
    this.#projects = [...this.#projects, project];
    this.#changed();
  }

  /** Takes a project out (the caller closes its service); undefined when no project has that name. */
  remove(name: string): WorkspaceProject | undefined {
    const p = this.byName(name);
    if (!p) return undefined;
    this.#projects = this.#projects.filter((x) => x !== p);
    this.#changed();
    return p;
  }

  /** `wanted`, or `wanted-2`, `wanted-3`, ... : a name no open project has. */
  uniqueName(wanted: string): string {
    let name = wanted;
    for (let i = 2; this.byName(name); i++) name = `${wanted}-${i}`;
    return name;
  }

  /** Called after every add or remove; returns the unsubscribe function. */
  onProjectsChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  /** More than one backlog open: ids are qualified and answers carry `project`. */
  get multi(): boolean {
    return this.projects.length > 1;
  }

  names(): string[] {
    return this.projects.map((p) => p.name);
  }

  byName(name: string): WorkspaceProject | undefined {
    const lower = name.toLowerCase();
    return this.projects.find((p) => p.name === lower);
  }

  /** The projects a request names (all when it names none); INVALID_FILTER for an unknown name. */
  scope(project: string | string[] | undefined): WorkspaceProject[] {
    if (project === undefined) return [...this.projects];
    const names = (Array.isArray(project) ? project : String(project).split(','))
      .map((s) => String(s).trim())
      .filter(Boolean);
    if (names.length === 0 || names.includes('*')) return [...this.projects];
    const out: WorkspaceProject[] = [];
    for (const name of names) {
      const p = this.byName(name);
      if (!p) {
        const failed = this.problems.find((f) => f.name === name.toLowerCase());
        throw errors.invalidFilter(
          'project',
          failed
            ? `project "${name}" could not be opened (${failed.code}: ${failed.message})`
            : `no project "${name}"`,
          `Use one or more of: ${this.names().join(', ')}, or * for all.`,
        );
      }
      if (!out.includes(p)) out.push(p);
    }
    return out;
  }

  // ----- Ids

  /** A project's id as this workspace returns it: qualified when several backlogs are open. */
  idOf(p: WorkspaceProject, id: string): string {
    return this.multi ? qualify(p.name, id) : id;
  }

  /**
   * Where a reference points: a qualified one in its project, a bare one in every project of `scope`
   * that has it (one: there; several: AMBIGUOUS_ID; none: NOT_FOUND).
   */
  locate(ref: string, scope: WorkspaceProject[] = [...this.projects]): { p: WorkspaceProject; id: string } {
    const parsed = parseQualified(ref, (name) => this.byName(name) !== undefined);
    const candidates = parsed.project ? [this.byName(parsed.project)!] : scope;
    const found = candidates
      .map((p) => ({ p, id: p.service.resolve(parsed.ref) }))
      .filter((c): c is { p: WorkspaceProject; id: string } => c.id !== undefined);
    if (found.length === 1) return found[0];
    if (found.length > 1)
      throw errors.ambiguousId(
        ref,
        found.map((c) => qualify(c.p.name, c.id)),
      );
    const examples = candidates.flatMap((p) =>
      p.service
        .vocabulary()
        .example_ids.slice(0, 1)
        .map((id) => this.idOf(p, id)),
    );
    throw errors.notFound(ref, examples);
  }

  /** `resolve` as BacklogService has it: the id as returned (qualified when several are open), or undefined. */
  resolve(ref: string): string | undefined {
    if (!this.multi) return this.projects[0]?.service.resolve(ref);
    try {
      const { p, id } = this.locate(ref);
      return this.idOf(p, id);
    } catch (err) {
      if (isBacklogError(err) && (err.code === 'NOT_FOUND' || err.code === 'AMBIGUOUS_ID')) return undefined;
      throw err;
    }
  }

  // ----- Reads

  /** BacklogService.searchUnified over the projects in scope, merged (merge.ts). */
  async searchUnified(
    query: string,
    options: Omit<SearchOptionsInput, 'query'> & ProjectOption = {},
  ): Promise<SearchResponse> {
    const started = performance.now();
    const { project, ...rest } = options;
    const scope = this.scope(project);
    // The merge numbers projects by their place in this list: taken once, as add/remove replace it.
    const all = this.projects;
    if (scope.length === 1) {
      const p = scope[0];
      const res = await p.service.searchUnified(query, this.onlyIn(p, rest));
      return this.multi ? this.tagSearch(p, res) : res;
    }
    const opts = parseSearchOptions({ ...rest, query }, SEARCH_KEYS);
    const outside = this.outsideOf(scope);
    const known = knownElsewhere(scope);
    const fast = await this.rankFirst(query, rest, opts, scope, all, started, outside, known);
    if (fast) return fast;
    const want = opts.offset + opts.limit;
    const answers = await eachProject(scope, async (p) => {
      const local = this.localFilters(p, rest);
      if (!local) return null;
      // One vector share for every backlog (the fixed one): each backlog's own per-query share would put
      // their hybrid scores on different scales (docs/workspace.md).
      const first = await p.service.searchUnified(
        query,
        { ...local, offset: 0, limit: Math.min(PAGE, want), include_scores: true },
        { outside: outside.get(p), fixedShare: true, knownElsewhere: known.get(p) },
      );
      for (let at = PAGE; first.results.length < want && first.next_offset !== undefined; at += PAGE) {
        const more = await p.service.searchUnified(
          query,
          {
            ...local,
            offset: at,
            limit: Math.min(PAGE, want - at),
            include_scores: true,
            group_by: undefined,
            include_related: false,
          },
          { outside: outside.get(p), fixedShare: true, knownElsewhere: known.get(p) },
        );
        first.results.push(...more.results);
        first.next_offset = more.next_offset;
      }
      return first;
    });
    const rankOf = (p: WorkspaceProject, res: SearchResponse, list: SearchResult[]) =>
      this.rank(all, p, list, opts, res.search_mode === 'bm25', outside.get(p));
    const ranked = mergeRanked(answers.map(([p, res]) => rankOf(p, res, res.results)));
    const merged = this.collapse(ranked, all);
    const page = merged.slice(opts.offset, want);
    const total = answers.reduce((n, [, res]) => n + res.total, 0) - (ranked.length - merged.length);
    const strip = (r: SearchResult) => {
      if (opts.include_scores) return r;
      const { score: _s, scores: _ss, ...kept } = r;
      return kept as SearchResult;
    };
    const shape = (x: Collapsed<SearchResult>) =>
      this.withVersions(all, x, this.tagResult(all[x.project], strip(x.result)));
    if (opts.include_content) this.checkContent(page.map((x) => x.result));
    const modes = new Set(answers.map(([, res]) => res.search_mode));
    const response: SearchResponse = {
      results: page.map(shape),
      total,
      query: opts.query.trim(),
      search_mode: answers[0]?.[1].search_mode ?? 'bm25',
      took_ms: 0,
    };
    if (opts.offset + page.length < total) response.next_offset = opts.offset + page.length;
    const weight = answers.find(([, res]) => res.vector_weight !== undefined)?.[1].vector_weight;
    if (weight !== undefined) response.vector_weight = weight;
    const warnings = new Set<string>();
    for (const [p, res] of answers)
      for (const w of res.warnings ?? [])
        if (total === 0 || !w.startsWith('nothing matched'))
          warnings.add(scope.length > 1 && !w.startsWith('nothing matched') ? `${p.name}: ${w}` : w);
    for (const f of answers.failed) warnings.add(`left out, failed: ${f}`);
    if (modes.size > 1)
      warnings.add(
        `the projects ran in different modes: ${answers.map(([p, res]) => `${p.name} ${res.search_mode}`).join(', ')}`,
      );
    const suggestions = [...new Set(answers.flatMap(([, res]) => res.suggestions ?? []))];
    if (total === 0 && suggestions.length) response.suggestions = suggestions;
    if (opts.group_by) {
      const keys = [...new Set(answers.flatMap(([, res]) => (res.groups ?? []).map((g) => g.key)))];
      response.groups = keys.map((key): ResultGroup => {
        const lists = answers.map(([p, res]) => {
          const g = res.groups?.find((x) => x.key === key);
          return g ? rankOf(p, res, g.results) : [];
        });
        const count = answers.reduce(
          (n, [, res]) => n + (res.groups?.find((g) => g.key === key)?.count ?? 0),
          0,
        );
        return { key, count, results: mergeRanked(lists).slice(0, opts.limit).map(shape) };
      });
    }
    if (opts.include_related) {
      const onPage = new Set(page.map((x) => `${x.project}\u0000${x.result.id}`));
      const related: RelatedResult[] = [];
      for (const [p, res] of answers)
        for (const r of res.related ?? [])
          if (onPage.has(`${all.indexOf(p)}\u0000${r.source}`))
            related.push({
              ...(this.tagResult(p, strip(r)) as RelatedResult),
              source: this.idOf(p, r.source),
              via: this.idOf(p, r.via),
            });
      response.related = related.slice(0, Math.max(opts.limit, 10));
    }
    if (warnings.size) response.warnings = [...warnings];
    response.took_ms = Number((performance.now() - started).toFixed(2));
    return response;
  }

  /**
   * `shared` fusion: for each project of a scope of several, the other projects' corpus statistics (its
   * idf counts every backlog in scope; merge.ts). Empty for one project or another fusion.
   */
  private outsideOf(scope: WorkspaceProject[]): Map<WorkspaceProject, OutsideStats> {
    if (this.fusion !== 'shared' || scope.length < 2) return new Map();
    return new Map(
      scope.map((p) => [p, outsideStats(scope.filter((x) => x !== p).map((x) => x.service.index))]),
    );
  }

  /** One project's list with the keys the merge orders by (merge.ts). */
  private rank<T extends { id: string; score?: number }>(
    all: readonly WorkspaceProject[],
    p: WorkspaceProject,
    list: T[],
    opts: SearchOptions,
    bm25: boolean,
    outside?: OutsideStats,
  ): Ranked<T>[] {
    const positive = opts.match_mode === 'raw' ? positiveText(parseRawQuery(opts.query)) : opts.query;
    return rankList(all.indexOf(p), list, this.fusion, {
      upperBound: bm25 ? workspaceBound(p.service.index, positive, outside) : 0,
      routed: p.service.index.resolveId(opts.query),
      recentMs: opts.sort === 'recent' ? (id) => updatedMsOf(p.service.get(id) as BacklogItem) : undefined,
    });
  }

  /**
   * The common bm25 search (no groups, no related items), in two steps: every project ranks without
   * snippets (the lexical index alone, as searchUnified's bm25 does), the lists are merged, then only the
   * projects on the page build their results, for the ranks shown. Building snippets for every project's
   * top-K and dropping most of them was most of a merged search's time. Null: take the general path
   * (which also gives the errors and "did you mean" of a search that finds nothing).
   */
  private async rankFirst(
    query: string,
    rest: Omit<SearchOptionsInput, 'query'>,
    opts: SearchOptions,
    scope: WorkspaceProject[],
    all: readonly WorkspaceProject[],
    started: number,
    outside: Map<WorkspaceProject, OutsideStats>,
    known: Map<WorkspaceProject, (term: string) => boolean>,
  ): Promise<SearchResponse | null> {
    const bm25 =
      opts.mode === 'bm25' ||
      (opts.mode === undefined && scope.every((p) => p.service.index.defaultMode() === 'bm25'));
    if (!bm25 || opts.group_by || opts.include_related) return null;
    const want = opts.offset + opts.limit;
    const locals = new Map<WorkspaceProject, Omit<SearchOptionsInput, 'query'>>();
    const filters = filtersOf(opts);
    let total = 0;
    let merged: Collapsed<SearchHit>[] = [];
    // Versions of one document collapsed into one place can leave the page short: look deeper while a
    // project's list was cut.
    for (let depth = want, cut = true; cut && merged.length < want; depth *= 2) {
      const lists: Ranked<SearchHit>[][] = [];
      [total, cut] = [0, false];
      try {
        for (const p of scope) {
          const local = this.localFilters(p, rest);
          if (!local) continue;
          const found = p.service.index.search({
            query: opts.query.trim(),
            // localFilters gives a new object only for a parent_id, already a list of this project's ids.
            filters: local === rest ? filters : { ...filters, parent_id: local.parent_id as string[] },
            sort: opts.sort,
            conjunctive: opts.conjunctive,
            matchMode: opts.match_mode,
            limit: depth,
            offset: 0,
            outside: outside.get(p),
            knownElsewhere: known.get(p),
          });
          total += found.total;
          cut ||= found.total > found.hits.length;
          locals.set(p, local);
          lists.push(this.rank(all, p, found.hits, opts, true, outside.get(p)));
        }
      } catch {
        return null;
      }
      const ranked = mergeRanked(lists);
      merged = this.collapse(ranked, all);
      total -= ranked.length - merged.length;
    }
    if (total === 0) return null;
    const page = merged.slice(opts.offset, want);
    // Each project on the page (in the order it first appears) builds the results of its hits there.
    const onPage = new Map<WorkspaceProject, SearchHit[]>();
    for (const x of page) {
      const p = all[x.project];
      const hits = onPage.get(p);
      if (hits) hits.push(x.result);
      else onPage.set(p, [x.result]);
    }
    const answers = eachProjectSync([...onPage.keys()], (p) => {
      const local = locals.get(p)!;
      if (local === rest) return p.service.resultsFor(opts, onPage.get(p)!);
      // localFilters gave a new object only for a parent_id: read as the schema reads it.
      return p.service.resultsFor(parseSearchOptions({ ...local, query }, SEARCH_KEYS), onPage.get(p)!);
    });
    const built = new Map(answers.map(([p, res]) => [p, res.results]));
    const results: SearchResult[] = [];
    const taken = new Map<WorkspaceProject, number>();
    for (const x of page) {
      const p = all[x.project];
      const at = taken.get(p) ?? 0;
      taken.set(p, at + 1);
      const r = built.get(p)?.[at];
      if (r) results.push(this.withVersions(all, x, this.tagResult(p, r)));
    }
    if (opts.include_content) this.checkContent(results);
    const response: SearchResponse = {
      results,
      total,
      query: opts.query.trim(),
      search_mode: 'bm25',
      took_ms: 0,
    };
    if (opts.offset + results.length < total) response.next_offset = opts.offset + results.length;
    const warnings = new Set<string>();
    for (const [p, res] of answers) for (const w of res.warnings) warnings.add(`${p.name}: ${w}`);
    for (const f of answers.failed) warnings.add(`left out, failed: ${f}`);
    if (warnings.size) response.warnings = [...warnings];
    response.took_ms = Number((performance.now() - started).toFixed(2));
    return response;
  }

  /**
   * One document in several projects takes one place (merge.ts collapseVersions): results of the same
   * type and title whose bodies are equal, or one the beginning of the other (a copy cut short, or the
   * copy the other grew from), shown as the fuller one (of equal ones, the first project's).
   */
  private collapse<T extends { id: string }>(
    ranked: Ranked<T>[],
    all: readonly WorkspaceProject[],
  ): Collapsed<T>[] {
    if (this.versions === 'apart' || ranked.length < 2) return ranked;
    const item = (x: Ranked<T>) => all[x.project].service.get(x.result.id);
    return collapseVersions(
      ranked,
      (x) => {
        const it = item(x);
        return `${it.type}\u0000${it.title}`;
      },
      (a, b) => {
        const [x, y] = [item(a).body.trim(), item(b).body.trim()];
        // Two items with a title and no text are not known to be one.
        if (!x || !y) return null;
        if (x === y) return a.project < b.project ? 'a' : 'b';
        if (y.startsWith(x)) return 'b';
        return x.startsWith(y) ? 'a' : null;
      },
    );
  }

  /** A result standing for versions in other projects names them (`also_in`, qualified ids). */
  private withVersions<T extends SearchResult>(
    all: readonly WorkspaceProject[],
    x: Collapsed<unknown>,
    r: T,
  ): T {
    if (!x.also?.length) return r;
    return { ...r, also_in: x.also.map((a) => this.idOf(all[a.project], (a.result as { id: string }).id)) };
  }

  /** BacklogService.list over the projects in scope, in one order. */
  list(input: ListOptionsInput & ProjectOption = {}): ListResponse {
    const { project, ...rest } = input;
    const scope = this.scope(project);
    if (scope.length === 1) {
      const p = scope[0];
      const res = p.service.list(this.onlyIn(p, rest));
      return this.multi ? { ...res, results: res.results.map((r) => this.tagSummary(p, r)) } : res;
    }
    const parsed = listOptionsSchema.safeParse(rest);
    if (!parsed.success) throw toBacklogError(parsed.error, LIST_KEYS);
    const opts = parsed.data;
    const answers = eachProjectSync(scope, (p) => {
      const local = this.localFilters(p, rest);
      if (!local) return null;
      const pages: ListResponse[] = [];
      for (let offset = 0; ;) {
        const res = p.service.list({ ...local, sort: 'updated', offset, limit: 1000 });
        pages.push(res);
        if (res.next_offset === undefined) break;
        offset = res.next_offset;
      }
      return pages;
    });
    const owner = new Map<BacklogItem, [WorkspaceProject, ItemSummary]>();
    const statuses: string[] = [];
    const counts: Record<string, number> = {};
    const hidden: Partial<Record<TaskState, number>> = {};
    for (const [p, pages] of answers) {
      for (const s of pages[0].statuses) if (!statuses.includes(s)) statuses.push(s);
      for (const [k, n] of Object.entries(pages[0].counts_by_status)) counts[k] = (counts[k] ?? 0) + n;
      for (const [k, n] of Object.entries(pages[0].not_shown ?? {}))
        hidden[k as TaskState] = (hidden[k as TaskState] ?? 0) + (n ?? 0);
      for (const res of pages)
        for (const r of res.results) owner.set(p.service.get(r.id) as BacklogItem, [p, r]);
    }
    const byUpdated = [...owner.keys()].sort((a, b) => updatedMsOf(b) - updatedMsOf(a));
    const items = sortItems(byUpdated, opts.sort, statuses);
    const page = items.slice(opts.offset, opts.offset + opts.limit);
    const response: ListResponse = {
      results: page.map((item) => this.tagSummary(...owner.get(item)!)),
      total: items.length,
      counts_by_status: counts,
      statuses,
    };
    if (opts.offset + page.length < items.length) response.next_offset = opts.offset + page.length;
    if (Object.keys(hidden).length) response.not_shown = hidden;
    return response;
  }

  /** One item (NOT_FOUND, AMBIGUOUS_ID), or a batch where each reference gets its own entry. */
  get(ref: string, options?: ProjectOption): WithProject<BacklogItem>;
  get(refs: string[], options?: ProjectOption): GetEntry[];
  get(refs: string | string[], options: ProjectOption = {}): WithProject<BacklogItem> | GetEntry[] {
    const scope = this.scope(options.project);
    if (!Array.isArray(refs)) {
      if (!this.multi) return this.projects[0].service.get(refs);
      const { p, id } = this.locate(refs, scope);
      return this.tagItem(p, p.service.get(id));
    }
    if (!this.multi) return this.projects[0].service.get(refs);
    const budget = Math.min(...this.projects.map((p) => p.service.limits.maxIdsPerGet));
    if (refs.length > budget)
      throw errors.inputTooLarge(
        'ids',
        `${refs.length} ids, over the budget of ${budget} (limits.maxIdsPerGet)`,
        `Ask for at most ${budget} ids at a time.`,
        { limit: budget },
      );
    return refs.map((ref): GetEntry => {
      try {
        return { id: ref, status: 'ok', item: this.get(ref, options) };
      } catch (err) {
        // A dropped cache fails the whole call: the command is run again from the files (cacheDropped).
        if (!isBacklogError(err) || droppedCacheReason(err) !== undefined) throw err;
        return { id: ref, status: 'error', error: { code: err.code, message: err.message, hint: err.hint } };
      }
    });
  }

  getMetadata(ref: string, options: ProjectOption = {}): WithProject<ItemMetadata> {
    const scope = this.scope(options.project);
    if (!this.multi) return this.projects[0].service.getMetadata(ref);
    const { p, id } = this.locate(ref, scope);
    const m = p.service.getMetadata(id);
    const q = (x: string) => this.idOf(p, x);
    return {
      ...m,
      id: q(m.id),
      project: p.name,
      links: { ...m.links, parent: m.links.parent && q(m.links.parent), children: m.links.children.map(q) },
    };
  }

  /** Each project's diagnostics, and the backlogs that could not be opened. */
  diagnostics(): {
    projects: Array<{ project: string; dir: string } & DiagnosticsReport>;
    problems: ProjectProblem[];
  } {
    return {
      projects: this.projects.map((p) => ({ project: p.name, dir: p.dir, ...p.service.diagnostics() })),
      problems: [...this.problems],
    };
  }

  /** Number of items in every open backlog. */
  get size(): number {
    return this.projects.reduce((n, p) => n + p.service.size, 0);
  }

  // ----- Writes (writes.ts)

  create: WorkspaceWrites['create'] = (input) => this.writes.create(input);
  update: WorkspaceWrites['update'] = (input) => this.writes.update(input);
  delete: WorkspaceWrites['delete'] = (input) => this.writes.delete(input);
  writeResource: WorkspaceWrites['writeResource'] = (input) => this.writes.writeResource(input);

  // ----- Shaping

  tagItem(p: WorkspaceProject, item: BacklogItem): WithProject<BacklogItem> {
    if (!this.multi) return item;
    return {
      ...item,
      id: this.idOf(p, item.id),
      parent_id: this.qualifyRef(p, item.parent_id),
      project: p.name,
    };
  }

  tagSummary(p: WorkspaceProject, s: ItemSummary): WithProject<ItemSummary> {
    if (!this.multi) return s;
    return { ...s, id: this.idOf(p, s.id), parent_id: this.qualifyRef(p, s.parent_id), project: p.name };
  }

  private tagResult(p: WorkspaceProject, r: SearchResult): WithProject<SearchResult> {
    if (!this.multi) return r;
    return { ...r, id: this.idOf(p, r.id), parent_id: this.qualifyRef(p, r.parent_id), project: p.name };
  }

  private tagSearch(p: WorkspaceProject, res: SearchResponse): SearchResponse {
    const related = res.related?.map((r) => ({
      ...(this.tagResult(p, r) as RelatedResult),
      source: this.idOf(p, r.source),
      via: this.idOf(p, r.via),
    }));
    return {
      ...res,
      results: res.results.map((r) => this.tagResult(p, r)),
      ...(res.groups
        ? { groups: res.groups.map((g) => ({ ...g, results: g.results.map((r) => this.tagResult(p, r)) })) }
        : {}),
      ...(related ? { related } : {}),
    };
  }

  private qualifyRef(p: WorkspaceProject, ref: string | null): string | null {
    return ref === null ? null : this.idOf(p, ref);
  }

  // ----- Helpers

  /**
   * The filters of a request as one project reads them: `parent_id` keeps the bare ids and those qualified
   * with this project; null when every parent named is another project's (this project has no match).
   */
  private localFilters<T extends { parent_id?: string | string[] }>(p: WorkspaceProject, opts: T): T | null {
    if (opts.parent_id === undefined || !this.multi) return opts;
    const values = Array.isArray(opts.parent_id) ? opts.parent_id : String(opts.parent_id).split(',');
    const mine: string[] = [];
    for (const v of values) {
      const parsed = parseQualified(v, (name) => this.byName(name) !== undefined);
      if (!parsed.project || parsed.project === p.name) mine.push(parsed.ref);
    }
    return mine.length ? { ...opts, parent_id: mine } : null;
  }

  /** The filters for the one project in scope; a parent of another project is an error there. */
  private onlyIn<T extends { parent_id?: string | string[] }>(p: WorkspaceProject, opts: T): T {
    const local = this.localFilters(p, opts);
    if (!local)
      throw errors.invalidFilter(
        'parent_id',
        `every parent named is in another project than ${p.name}`,
        `Name a parent of ${p.name}, or widen project.`,
      );
    return local;
  }

  /** include_content over several projects: the page's content within the smallest answer budget. */
  private checkContent(results: SearchResult[]): void {
    const budget = Math.min(...this.projects.map((p) => p.service.limits.maxResponseChars));
    const chars = results.reduce((n, r) => n + (r.content?.length ?? 0), 0);
    if (chars > budget)
      throw errors.inputTooLarge(
        'include_content',
        `the page's content is ${chars} characters, over the budget of ${budget} (limits.maxResponseChars)`,
        'Ask for fewer results (limit), or read the items you need with get.',
        { limit: budget },
      );
  }
}
