/**
 * The gibberish gate: a query of made-up words ("narwhalbyte", "asdfghjkl") has no meaning a sentence
 * encoder can read, yet the encoder still maps it somewhere, and the nearest chunks come back with
 * cosines as high as real paraphrases get (0.3-0.45 with the bundled model). What such queries share is
 * where they land: close to one another. So the gate embeds a fixed panel of pseudo-words once per model,
 * and a query whose vector is near their centroid gets no results by meaning (it keeps its word matches).
 * Measured on the dev sets' real questions and on other pseudo-words (docs/search.md,
 * `npm run bench:semantic-floor`).
 */

/** Cosine to the pseudo-word centroid at or above which a query is unreadable to the model. */
export const GIBBERISH_GATE = 0.55;

const SYLLABLES = [
  'bl',
  'zor',
  'qui',
  'xan',
  'vel',
  'tro',
  'mip',
  'gla',
  'fen',
  'dru',
  'kex',
  'wum',
  'pry',
  'snoo',
  'ta',
  'ri',
  'ok',
  'ul',
  'za',
  'ne',
];

/** `n` pseudo-words and pairs of them, the same for every run (a seeded generator). */
export function pseudoWords(n: number, seed = 5): string[] {
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const word = () =>
    Array.from(
      { length: 2 + Math.floor(rand() * 3) },
      () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)],
    ).join('');
  return Array.from({ length: n }, () => (rand() < 0.5 ? word() : `${word()} ${word()}`));
}

/** The unit-length mean of the panel's query vectors. */
export async function gibberishCentroid(
  embedQueries: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array> {
  const vectors = await embedQueries(pseudoWords(40));
  const centroid = new Float32Array(vectors[0].length);
  for (const v of vectors) for (let i = 0; i < v.length; i++) centroid[i] += v[i];
  const norm = Math.hypot(...centroid) || 1;
  for (let i = 0; i < centroid.length; i++) centroid[i] /= norm;
  return centroid;
}

/** Cosine of a query vector (unit length, as every Embedder gives) and the centroid. */
export function gibberishScore(query: Float32Array, centroid: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i] * centroid[i];
  return dot;
}
