/**
 * The k best of a stream in O(n log k): a bounded min-heap, the worst kept item on top. Ranking a page of
 * results needs only the page, not a sort of every match.
 */
export class TopK<T> {
  private readonly heap: T[] = [];

  /** `worse(a, b)`: a ranks below b. It must order every pair of distinct items (break ties). */
  constructor(
    private readonly k: number,
    private readonly worse: (a: T, b: T) => boolean,
  ) {}

  /** Whether k items are kept: a new one is kept only if it beats `worst`. */
  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** The worst item kept (undefined while empty). */
  get worst(): T | undefined {
    return this.heap[0];
  }

  offer(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      for (let c = h.length - 1; c > 0;) {
        const p = (c - 1) >> 1;
        if (!this.worse(h[c], h[p])) break;
        [h[c], h[p]] = [h[p], h[c]];
        c = p;
      }
    } else if (this.k > 0 && this.worse(h[0], item)) {
      h[0] = item;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.worse(h[l], h[m])) m = l;
        if (r < h.length && this.worse(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
  }

  /** The items kept, best first. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => (this.worse(a, b) ? 1 : this.worse(b, a) ? -1 : 0));
  }
}

/** The heap of topKIndices, reused: a typed array costs microseconds to allocate, a query calls it twice. */
let heapScratch = new Int32Array(256);

/**
 * Indices of the `k` best scores, best first (ties: the lower internal id first, as the full sort
 * orders them): a bounded min-heap in typed arrays, O(n log k), and a match that cannot beat the
 * heap's worst is dismissed with one comparison.
 */
export function topKIndices(
  scores: ArrayLike<number>,
  docs: ArrayLike<number>,
  k: number,
  /** Only the first `length` entries count. */
  length = scores.length,
): number[] {
  if (k <= 0) return [];
  if (heapScratch.length < Math.min(k, length)) heapScratch = new Int32Array(Math.min(k, length) * 2);
  const heap = heapScratch;
  const capacity = Math.min(k, length);
  let size = 0;
  // `a` ranks below `b`.
  const worse = (a: number, b: number) =>
    scores[a] < scores[b] || (scores[a] === scores[b] && docs[a] > docs[b]);
  const siftDown = (j: number) => {
    const item = heap[j];
    for (;;) {
      const l = 2 * j + 1;
      if (l >= size) break;
      const r = l + 1;
      const m = r < size && worse(heap[r], heap[l]) ? r : l;
      if (!worse(heap[m], item)) break;
      heap[j] = heap[m];
      j = m;
    }
    heap[j] = item;
  };
  for (let i = 0; i < length; i++) {
    if (size < capacity) {
      let c = size++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!worse(i, heap[p])) break;
        heap[c] = heap[p];
        c = p;
      }
      heap[c] = i;
      continue;
    }
    const top = heap[0];
    if (scores[i] < scores[top] || !worse(top, i)) continue;
    heap[0] = i;
    siftDown(0);
  }
  // Popping the worst off the heap fills the answer from its end: best first, no comparison sort.
  const out = new Array<number>(size);
  for (let n = size; n > 0;) {
    out[--n] = heap[0];
    size--;
    if (size > 0) {
      heap[0] = heap[size];
      siftDown(0);
    }
  }
  return out;
}

/** The matches a caller needs when it shows a page of `best`: see topKWithin. */
export interface Keep {
  /** The best this many. */
  best: number;
  /** And every match within this factor of the best-th: a bonus of up to it may lift one into the page (1: none). */
  slack: number;
  /** At most this many in all (at least `best`). */
  atMost: number;
}

/**
 * The best `best` of the first `length` scores, best first, then every other one within a factor
 * `slack` of the best-th, in no order; when those are more than `atMost` in all, the best `atMost`
 * instead, best first. A bonus of up to `slack` applied afterwards (the proximity bonus) can lift only
 * these into the best `best`, and most queries have far fewer of them than a fixed number of
 * candidates: selecting 20 and listing the few within reach costs a third of selecting 100.
 */
export function topKWithin(
  scores: ArrayLike<number>,
  docs: ArrayLike<number>,
  length: number,
  keep: Keep,
): number[] {
  const top = topKIndices(scores, docs, Math.min(keep.best, length), length);
  // Nothing past the best `best` to add: no slack, every match kept already, or no room for more.
  if (keep.slack <= 1 || top.length === 0 || top.length === length || top.length >= keep.atMost) return top;
  // A hair below the exact factor: what the bonus could lift is never left out by rounding.
  const last = top[top.length - 1];
  const floor = (scores[last] / keep.slack) * (1 - 1e-9);
  // The ones the best `best` do not hold: below the best-th (ties: a higher id), above the floor.
  const below = (i: number) =>
    scores[i] < scores[last] || (scores[i] === scores[last] && docs[i] > docs[last]);
  let within = top.length;
  for (let i = 0; i < length; i++) if (scores[i] >= floor && below(i)) within++;
  if (within > keep.atMost) return topKIndices(scores, docs, keep.atMost, length);
  for (let i = 0; i < length && top.length < within; i++) if (scores[i] >= floor && below(i)) top.push(i);
  return top;
}
