/**
 * The systems ranked on the dev set: this project through `searchUnified` (bm25, hybrid, semantic) on a
 * copy of the backlog, and off-the-shelf baselines (MiniSearch, Orama) over the same files. Every system
 * answers with paths relative to the backlog folder, best first.
 */
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama';
import MiniSearch from 'minisearch';
import type { BacklogService } from '../../src/index.js';
import { engineQuery } from '../../src/eval/run-eval.js';
import type { SearchDocument, SearchEngine } from '../../src/search/types.js';
import { matchesFilters, type DevsetDoc, type DevsetQuery } from './corpus.js';

export interface DevsetSystem {
  name: string;
  /** Up to `k` paths for the query, best first, its filters applied. */
  search(q: DevsetQuery, k: number): Promise<string[]>;
}

/**
 * This project: `searchUnified(text, { ...options, mode, limit })`, the path of each result. The filters go
 * as they are: whatever today's service makes of them is what is measured.
 */
export function ourSystem(
  name: string,
  backlog: BacklogService,
  mode: 'bm25' | 'hybrid' | 'semantic',
): DevsetSystem {
  return {
    name,
    async search(q, k) {
      const res = await backlog.searchUnified(q.text, { ...(q.options ?? {}), mode, limit: k });
      // A query the model gate keeps from an English-only model runs bm25, as it does for users.
      const gated =
        res.search_mode === 'bm25' && (res.warnings ?? []).some((w) => w.includes('English-only'));
      if (res.search_mode !== mode && !gated)
        throw new Error(
          `${name}: asked for ${mode}, ran ${res.search_mode} (${(res.warnings ?? []).join('; ')})`,
        );
      return res.results.map((r) => r.path);
    },
  };
}

/**
 * This project's bm25 ranking with the filters applied afterwards as a Backlog.md user means them
 * (corpus.ts, matchesFilters): for pooling filtered queries, so that documents today's filters miss are judged too.
 */
export function ourSystemIdealFilters(
  name: string,
  backlog: BacklogService,
  docs: DevsetDoc[],
): DevsetSystem {
  const byPath = new Map(docs.map((d) => [d.path, d]));
  return {
    name,
    async search(q, k) {
      const res = await backlog.searchUnified(q.text, { mode: 'bm25', limit: 100 });
      return res.results
        .map((r) => r.path)
        .filter((p) => byPath.has(p) && matchesFilters(byPath.get(p)!, q.options))
        .slice(0, k);
    },
  };
}

/** What the baselines index of each file: title, markdown body, and its keys (front matter id and labels). */
interface BaselineDoc {
  id: string;
  title: string;
  text: string;
  keys: string;
}

const baselineDocs = (docs: DevsetDoc[]): BaselineDoc[] =>
  docs.map((d) => ({ id: d.path, title: d.title, text: d.body, keys: [d.fmId, ...d.tags].join(' ') }));

/** Filters applied to a baseline's whole ranking (it has no notion of them), then cut to k. */
function filtered(ranked: string[], q: DevsetQuery, byPath: Map<string, DevsetDoc>, k: number): string[] {
  return ranked.filter((p) => matchesFilters(byPath.get(p)!, q.options)).slice(0, k);
}

/**
 * MiniSearch 7 with its default options over `fields: ['title', 'text', 'keys']`; `titleBoost` adds
 * `searchOptions: { boost: { title: titleBoost } }` (the usual first tuning of a MiniSearch integration).
 */
export function miniSearchSystem(docs: DevsetDoc[], titleBoost?: number): DevsetSystem {
  const ms = new MiniSearch<BaselineDoc>({
    fields: ['title', 'text', 'keys'],
    ...(titleBoost ? { searchOptions: { boost: { title: titleBoost } } } : {}),
  });
  ms.addAll(baselineDocs(docs));
  const byPath = new Map(docs.map((d) => [d.path, d]));
  return {
    name: titleBoost
      ? `MiniSearch 7, defaults + title boost ${titleBoost}`
      : 'MiniSearch 7, default settings',
    async search(q, k) {
      return filtered(
        ms.search(q.text).map((r) => String(r.id)),
        q,
        byPath,
        k,
      );
    },
  };
}

/** Orama 3 with default settings: `create({ schema: { title, text, keys: 'string' } })`, `search(db, { term })`. */
export async function oramaSystem(docs: DevsetDoc[]): Promise<DevsetSystem> {
  const db: AnyOrama = create({ schema: { title: 'string', text: 'string', keys: 'string' } as const });
  await insertMultiple(db, baselineDocs(docs));
  const byPath = new Map(docs.map((d) => [d.path, d]));
  return {
    name: 'Orama 3, default settings',
    async search(q, k) {
      const res = await oramaSearch(db, { term: q.text, limit: q.options ? docs.length : k });
      return filtered(
        res.hits.map((h) => String(h.id)),
        q,
        byPath,
        k,
      );
    },
  };
}

/** A dev-set file as any engine receives it through the `SearchEngine` seam. */
function engineDoc(d: DevsetDoc, seen: Set<string>): SearchDocument {
  // A duplicated id (BACK-569 in tasks/ and archive/) keeps the path as its id.
  const id = d.fmId && !seen.has(d.fmId) ? d.fmId : d.path;
  seen.add(id);
  const slash = d.path.lastIndexOf('/');
  return {
    id,
    type: d.kind === 'resource' ? 'resource' : 'task',
    state: d.kind === 'draft' ? 'draft' : d.kind === 'task' ? 'active' : null,
    title: d.title,
    body: d.body,
    tags: d.tags,
    status: d.status,
    path: d.path,
    folder: slash < 0 ? '' : d.path.slice(0, slash),
  };
}

/**
 * Any engine behind the `SearchEngine` seam (bench/engine-eval.ts): built from the files, each query sent
 * as BacklogService sends it, its filters inside the request (an engine must filter before its top-K). The
 * answer is checked against the filters as a Backlog.md user means them, as the baselines' are.
 */
export async function engineSystem(
  name: string,
  engine: SearchEngine,
  docs: DevsetDoc[],
): Promise<DevsetSystem> {
  // Ids as the backlog has them (BACK-72, doc-002), or the path; answers are scored by path.
  const seen = new Set<string>();
  await engine.build(docs.map((d) => engineDoc(d, seen)));
  const byPath = new Map(docs.map((d) => [d.path, d]));
  return {
    name,
    async search(q, k) {
      const filters = {
        ...(q.options?.status ? { status: q.options.status } : {}),
        ...(q.options?.tags ? { tags: q.options.tags } : {}),
        ...(q.options?.folder ? { folder: q.options.folder } : {}),
        ...(q.options?.types ? { types: q.options.types } : {}),
      };
      const outcome = await engine.query(engineQuery(q.text, k, filters));
      return filtered(
        outcome.results.map((r) => r.path),
        q,
        byPath,
        k,
      );
    },
  };
}
