/**
 * The gibberish gate's centroid is kept between processes (src/embeddings/gibberish.ts): embedded once
 * per model, read back after, and embedded again when the kept file is not sound. A stand-in embedder
 * (deterministic vectors) counts the calls; the files are real, in a config folder of the test's own.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gibberishCentroid, keptCentroidPath, keptGibberishCentroid } from '../src/embeddings/gibberish.js';

const DIMS = 8;
let calls = 0;
/** Unit vectors made from each text's characters: the same text, the same vector. */
async function embedQueries(texts: string[]): Promise<Float32Array[]> {
  calls++;
  return texts.map((t) => {
    const v = new Float32Array(DIMS);
    for (let i = 0; i < t.length; i++) v[i % DIMS] += t.charCodeAt(i) / 100;
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

let config: string;
const saved = process.env.XDG_CONFIG_HOME;
beforeAll(async () => {
  config = await mkdtemp(join(tmpdir(), 'bs-gibberish-'));
  process.env.XDG_CONFIG_HOME = config;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = saved;
  await rm(config, { recursive: true, force: true });
});

describe('the kept gibberish centroid', () => {
  it('is embedded once per model, then read back equal', async () => {
    const expected = await gibberishCentroid(embedQueries);
    calls = 0;
    const first = await keptGibberishCentroid('test:model-a', DIMS, embedQueries);
    expect(calls).toBe(1);
    expect(keptCentroidPath('test:model-a').startsWith(join(config, 'backlog-search', 'gibberish'))).toBe(
      true,
    );
    const again = await keptGibberishCentroid('test:model-a', DIMS, embedQueries);
    expect(calls).toBe(1);
    expect(Array.from(again)).toEqual(Array.from(first));
    expect(Array.from(first)).toEqual(Array.from(expected));
    // Another model has a file of its own.
    await keptGibberishCentroid('test:model-b', DIMS, embedQueries);
    expect(calls).toBe(2);
    expect(keptCentroidPath('test:model-b')).not.toBe(keptCentroidPath('test:model-a'));
  });

  it('is embedded again when the kept file is corrupt, cut, of other dims, or not of unit length', async () => {
    const path = keptCentroidPath('test:model-c');
    await keptGibberishCentroid('test:model-c', DIMS, embedQueries);
    const good = await readFile(path);
    const flipped = Buffer.from(good);
    flipped[12] ^= 0xff;
    // A checksum that matches a vector of length 2 (not unit): only the norm check refuses it.
    const { createHash } = await import('node:crypto');
    const body = Buffer.from(good.subarray(0, good.length - 32));
    for (let i = 8; i < body.length; i += 4) body.writeFloatLE(body.readFloatLE(i) * 2, i);
    const doubled = Buffer.concat([body, createHash('sha256').update(body).digest()]);
    for (const bad of [flipped, good.subarray(0, good.length - 5), Buffer.from('not ours'), doubled]) {
      await writeFile(path, bad);
      calls = 0;
      const v = await keptGibberishCentroid('test:model-c', DIMS, embedQueries);
      expect(calls).toBe(1);
      expect(Array.from(v)).toEqual(Array.from(await gibberishCentroid(embedQueries)));
      expect(await readFile(path)).toEqual(good);
    }
    calls = 0;
    await keptGibberishCentroid('test:model-c', DIMS * 2, embedQueries).catch(() => undefined);
    expect(calls).toBe(1);
  });
});
