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
