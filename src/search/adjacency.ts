/**
 * Which documents may hold two terms next to each other in a field: a Bloom filter over the
 * (document, term, next term) triples of the field's token sequences (field-index.ts). "No" is certain;
 * "maybe" is wrong for about 1% of absent pairs when filled (measured on the Backlog.md bodies), up to
 * about 3% when full. It costs 8 bits a pair it has room for: a field's tokens and a quarter more, about
 * 1.25 bytes a token. The proximity bonus (phrase.ts) scans a document's sequence only on a "maybe": on
 * the Backlog.md folder's title queries two scans in three found no pair, and scans were a fifth of a
 * query's time.
 *
 * Bits are only ever set: a removed document's pairs stay until the filter is made anew, which happens
 * when more pairs were added than it was sized for (stale bits only cost a scan, never an answer).
 */

/**
 * Filter bits per pair it is sized for: with 3 probes, about 3% of absent pairs read "maybe" when it
 * holds that many; 1.0% measured when just filled (it is sized for a quarter more pairs than it holds).
 */
const BITS_PER_PAIR = 8;
const PROBES = 3;

/** A 32-bit mix of three integers (murmur3's finalizer over a multiplicative combination). */
function mix(a: number, b: number, c: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca77) ^ Math.imul(c, 0xc2b2ae3d);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return h ^ (h >>> 16);
}

export class AdjacencyFilter {
  private readonly bits: Int32Array;
  /** Bits in `bits`. */
  private readonly size: number;
  private added = 0;

  /** `capacity`: the pairs it holds before `full` (BITS_PER_PAIR bits each). */
  constructor(readonly capacity: number) {
    this.bits = new Int32Array(Math.ceil(Math.min(2 ** 31, Math.max(1024, capacity * BITS_PER_PAIR)) / 32));
    this.size = this.bits.length * 32;
  }

  /** The bit of probe `i`: the 32-bit hash h1 + i * h2 scaled to the size (a multiply, no modulo). */
  private bit(h1: number, h2: number, i: number): number {
    return Math.floor((((h1 + Math.imul(i, h2)) >>> 0) * this.size) / 4294967296);
  }

  /** More pairs went in than it was sized for: build a bigger one. */
  get full(): boolean {
    return this.added > this.capacity;
  }

  /**
   * Adds the adjacent pairs of one document's tokens `seq[start, end)` (term id << 1, bit 0 set at the
   * same position as the token before; GAP_ID tokens stand for skipped positions): every token at one
   * position with every token at the next.
   */
  addSequence(doc: number, seq: Uint32Array, start: number, end: number, gapId: number): void {
    // Tokens of the previous position are [prevFrom, prevTo), of the current one [curFrom, k).
    let prevFrom = start;
    let prevTo = start;
    let curFrom = start;
    for (let k = start; k < end; k++) {
      const tok = seq[k];
      if ((tok & 1) === 0 && k > start) {
        prevFrom = curFrom;
        prevTo = k;
        curFrom = k;
      }
      const second = tok >>> 1;
      if (second === gapId) continue;
      for (let j = prevFrom; j < prevTo; j++) {
        const first = seq[j] >>> 1;
        if (first !== gapId) this.add(doc, first, second);
      }
    }
  }

  private add(doc: number, first: number, second: number): void {
    const h1 = mix(doc, first, second);
    const h2 = mix(h1, second, doc) | 1;
    for (let i = 0; i < PROBES; i++) {
      const bit = this.bit(h1, h2, i);
      this.bits[bit >>> 5] |= 1 << (bit & 31);
    }
    this.added++;
  }

  /** False when term `second` never directly follows term `first` in the document; true when it may. */
  mayHave(doc: number, first: number, second: number): boolean {
    const h1 = mix(doc, first, second);
    const h2 = mix(h1, second, doc) | 1;
    for (let i = 0; i < PROBES; i++) {
      const bit = this.bit(h1, h2, i);
      if ((this.bits[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}
