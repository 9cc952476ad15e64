/** Scales `v` in place to unit L2 norm (a zero vector stays zero) and returns it. */
export function l2normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < v.length; i++) v[i] *= inv;
  }
  return v;
}

/** Dot product of two vectors of the same length (the cosine when both are normalized). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Copies a list of numbers or a typed array into a new normalized Float32Array. */
export function toUnitVector(values: ArrayLike<number>): Float32Array {
  return l2normalize(Float32Array.from(values));
}

/**
 * Runs `embed` on the texts that have any non-space character and gives every blank text the zero vector
 * (models either fail on empty input or return noise for it).
 */
export async function embedNonEmpty(
  texts: string[],
  dims: number,
  embed: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const keep: number[] = [];
  for (let i = 0; i < texts.length; i++) if (/\S/.test(texts[i])) keep.push(i);
  const out: Float32Array[] = texts.map(() => new Float32Array(dims));
  if (keep.length === 0) return out;
  const vectors = await embed(keep.length === texts.length ? texts : keep.map((i) => texts[i]));
  if (vectors.length !== keep.length)
    throw new Error(`embedder returned ${vectors.length} vectors for ${keep.length} texts`);
  keep.forEach((i, j) => (out[i] = vectors[j]));
  return out;
}
