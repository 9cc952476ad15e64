/**
 * Related items: the links between items (parent, children, references written in front matter, ids
 * mentioned in the body) and a breadth-first walk from the hits over them. Pure: built from items and a
 * resolver, no file or index access.
 */
import type { BacklogItem } from '../storage/types.js';
import type { Neighbor, Neighbors, Relation } from './types.js';

/** Ids written in text: `TASK-0042`, `task-12`, `back-4.1` (resolved against the backlog, so only real ids count). */
// Made on first use, as the other Unicode property escapes (search/tokenizer.ts: compiled when first evaluated).
let mention: RegExp | undefined;
const MENTION = () => (mention ??= /(?<![\p{L}\p{N}])[A-Za-z]{2,}-\d+(?:\.\d+)*(?![\p{L}\p{N}])/gu);

export interface RelatedItem {
  id: string;
  /** Links between the hit and this item (1-3). */
  distance: number;
  /** The item this one was reached from (the hit itself at distance 1). */
  via: string;
  /** The search hit it is related to. */
  source: string;
  /** The kind of the last link followed. */
  relation: Relation;
  /** The source hit's score times 1 / (1 + distance). */
  score: number;
}

/** The backlog's links: parent_id, frontmatter `references`, and ids mentioned in the body. */
export class LinkGraph implements Neighbors {
  private readonly parent = new Map<string, string>();
  private readonly children = new Map<string, string[]>();
  private readonly refs = new Map<string, Set<string>>();
  private readonly refBy = new Map<string, Set<string>>();

  constructor(
    items: Iterable<Pick<BacklogItem, 'id' | 'parent_id' | 'references' | 'body'>>,
    resolve: (ref: string) => string | undefined,
  ) {
    const link = (map: Map<string, Set<string>>, from: string, to: string) => {
      let set = map.get(from);
      if (!set) map.set(from, (set = new Set()));
      set.add(to);
    };
    for (const item of items) {
      const parent = item.parent_id ? resolve(item.parent_id) : undefined;
      if (parent && parent !== item.id) {
        this.parent.set(item.id, parent);
        this.children.set(parent, [...(this.children.get(parent) ?? []), item.id]);
      }
      const written = [...item.references, ...(item.body.match(MENTION()) ?? [])];
      for (const ref of written) {
        const to = resolve(ref);
        if (to && to !== item.id) {
          link(this.refs, item.id, to);
          link(this.refBy, to, item.id);
        }
      }
    }
  }

  neighbors(id: string, relations: ReadonlySet<Relation>): Neighbor[] {
    const out: Neighbor[] = [];
    const parent = this.parent.get(id);
    if (parent && relations.has('parent')) out.push({ id: parent, relation: 'parent' });
    if (relations.has('children'))
      for (const c of this.children.get(id) ?? []) out.push({ id: c, relation: 'children' });
    if (relations.has('references')) {
      for (const r of this.refs.get(id) ?? []) out.push({ id: r, relation: 'references' });
      for (const r of this.refBy.get(id) ?? []) out.push({ id: r, relation: 'references' });
    }
    return out;
  }
}

/**
 * Items reachable from the hits within `maxHops` links (breadth-first from each hit, best hits first),
 * excluding the hits themselves; an item reached several ways keeps its best score.
 */
export function findRelated(
  hits: { id: string; score: number }[],
  graph: Neighbors,
  maxHops: number,
  relations: ReadonlySet<Relation>,
): RelatedItem[] {
  const hitIds = new Set(hits.map((h) => h.id));
  const best = new Map<string, RelatedItem>();
  for (const hit of hits) {
    const seen = new Set([hit.id]);
    let frontier = [hit.id];
    for (let distance = 1; distance <= maxHops && frontier.length; distance++) {
      const next: string[] = [];
      for (const from of frontier) {
        for (const n of graph.neighbors(from, relations)) {
          if (seen.has(n.id)) continue;
          seen.add(n.id);
          next.push(n.id);
          if (hitIds.has(n.id)) continue;
          const score = hit.score / (1 + distance);
          const cur = best.get(n.id);
          if (!cur || score > cur.score)
            best.set(n.id, { id: n.id, distance, via: from, source: hit.id, relation: n.relation, score });
        }
      }
      frontier = next;
    }
  }
  return [...best.values()].sort(
    (a, b) => b.score - a.score || a.distance - b.distance || (a.id < b.id ? -1 : 1),
  );
}
