/**
 * The bundled model's tokenizer: SentencePiece unigram pieces, best path by summed log-probabilities. It
 * gives exactly what `@energetic-ai/embeddings`' Tokenizer gives for every text (its quirks included: an
 * unknown symbol is a piece of score 0, and the path is walked back by each piece's length in UTF-16 code
 * units), so vectors and caches are unchanged (test/embeddings-tokenizer.test.ts compares the two).
 * Why not theirs: its trie copies the path into every node and keys children in plain objects, so building
 * it for the 8,000 pieces took 40-150 ms of each model start, and its search copies the rest of the text
 * at every position (quadratic in a text's length).
 */

const SEPARATOR = '\u2581';
/** The first pieces are reserved (unknown, <s>, </s>, extra ids): never matched. */
const RESERVED = 6;

/** The text as the pieces are matched against it: NFKC, a separator before it and for every space. */
function pieceInput(text: string): string {
  const normalized = text.normalize('NFKC');
  return normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
}

export class PieceTokenizer {
  /** Every prefix of a piece: the piece's id when it is a whole piece, else -1 (the trie, flattened). */
  private readonly prefixes = new Map<string, number>();
  private readonly scores: Float64Array;
  /** Each piece's length in UTF-16 code units (the walk back uses it). */
  private readonly lengths: Int32Array;

  /**
   * `vocabulary`: [piece, log-probability] by id, as in the model's vocab.json. `only`: a text this
   * tokenizer will encode and nothing else; only the pieces found in it are indexed (the same ids for it:
   * every piece the search could match is a piece of the text), a fraction of the time of all 8,000.
   */
  constructor(
    readonly vocabulary: readonly (readonly [string, number])[],
    private readonly only?: string,
  ) {
    const within = only === undefined ? undefined : pieceInput(only);
    this.lengths = new Int32Array(vocabulary.length);
    this.scores = new Float64Array(vocabulary.length);
    for (let id = 0; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id];
      this.lengths[id] = piece.length;
      this.scores[id] = score;
      if (id < RESERVED || piece.length === 0 || (within !== undefined && !within.includes(piece))) continue;
      let prefix = '';
      for (const symbol of piece) {
        prefix += symbol;
        if (!this.prefixes.has(prefix)) this.prefixes.set(prefix, -1);
      }
      this.prefixes.set(piece, id);
    }
  }

  encode(text: string): number[] {
    if (this.only !== undefined && text !== this.only)
      throw new Error('this tokenizer was built for one text only');
    const symbols = Array.from(pieceInput(text));
    const n = symbols.length;
    // Pieces ending at each position, by start (ascending): start, score, id.
    const ending: number[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      let found = false;
      let prefix = '';
      for (let k = i; k < n; k++) {
        prefix += symbols[k];
        const id = this.prefixes.get(prefix);
        if (id === undefined) break;
        if (id >= 0) {
          ending[k + 1].push(i, this.scores[id], id);
          found = true;
        }
      }
      if (!found) ending[i + 1].push(i, 0, 0);
    }
    const best = new Array<number>(n + 1).fill(0);
    const words = new Array<number>(n + 1).fill(0);
    for (let end = 0; end <= n; end++) {
      const c = ending[end];
      for (let j = 0; j < c.length; j += 3) {
        const score = c[j + 1] + best[c[j]];
        if (best[end] === 0 || score >= best[end]) {
          best[end] = score;
          words[end] = c[j + 2];
        }
      }
    }
    const ids: number[] = [];
    for (let at = n; at > 0; at -= this.lengths[words[at]]) ids.push(words[at]);
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of ids) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  }
}
