/**
 * The gibberish gate: a query of made-up words ("narwhalbyte", "asdfghjkl") has no meaning a sentence
 * encoder can read, yet the encoder still maps it somewhere, and the nearest chunks come back with
 * cosines as high as real paraphrases get (0.3-0.45 with the bundled model). What such queries share is
 * where they land: close to one another. So the gate embeds a fixed panel of pseudo-words once per model,
 * and a query whose vector is near their centroid gets no results by meaning (it keeps its word matches).
 * Measured on the dev sets' real questions and on other pseudo-words (docs/search.md; the script,
 * bench/semantic-floor.ts, is retired: docs/ablation.md).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { userConfigDir } from '../storage/user-config.js';
import { writeFileAtomic } from '../storage/write-file.js';

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

/** The panel: made-up words the gate's centroid is the mean of. */
const PANEL = pseudoWords(40);

/** The unit-length mean of the panel's query vectors. */
export async function gibberishCentroid(
  embedQueries: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array> {
  const vectors = await embedQueries(PANEL);
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

const MAGIC = Buffer.from('BLSGIB01');
const SUM_BYTES = 32;

/**
 * Where a model's centroid is kept: it depends on the model and the panel only, so it sits outside every
 * backlog (`~/.config/backlog-search/gibberish/`), named by a hash of both.
 */
export function keptCentroidPath(modelId: string): string {
  const name = createHash('sha256')
    .update(`${modelId}\n${PANEL.join('\n')}`)
    .digest('hex')
    .slice(0, 32);
  return join(userConfigDir(), 'gibberish', `${name}.bin`);
}

/**
 * The model's centroid as kept by an earlier process, else embedded now (about 40 short queries: 0.3-0.6 s
 * of the bundled model, most of a one-shot hybrid search's query) and kept for the next. A kept file is
 * used only when whole and sound (magic, checksum, `dims` finite values of unit length); a file that
 * cannot be written costs the next process the panel again, nothing more.
 */
export async function keptGibberishCentroid(
  modelId: string,
  dims: number,
  embedQueries: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Float32Array> {
  const path = keptCentroidPath(modelId);
  const kept = readCentroid(await readFile(path).catch(() => null), dims);
  if (kept) return kept;
  const centroid = await gibberishCentroid(embedQueries);
  const body = Buffer.concat([MAGIC, Buffer.from(centroid.buffer, centroid.byteOffset, centroid.byteLength)]);
  await writeFileAtomic(path, Buffer.concat([body, createHash('sha256').update(body).digest()])).catch(
    () => undefined,
  );
  return centroid;
}

function readCentroid(bytes: Buffer | null, dims: number): Float32Array | undefined {
  if (!bytes || bytes.length !== MAGIC.length + dims * 4 + SUM_BYTES) return undefined;
  const body = bytes.subarray(0, bytes.length - SUM_BYTES);
  if (!body.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!createHash('sha256').update(body).digest().equals(bytes.subarray(body.length))) return undefined;
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = body.readFloatLE(MAGIC.length + i * 4);
  let norm = 0;
  for (const x of v) norm += x * x;
  return Number.isFinite(norm) && Math.abs(norm - 1) < 1e-3 ? v : undefined;
}
