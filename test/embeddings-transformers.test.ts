import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EmbeddingPool } from '../src/embeddings/pool.js';
import { resolveEmbedder } from '../src/embeddings/resolve.js';
import {
  createTransformersEmbedder,
  locateTransformersModel,
  modelDefaults,
} from '../src/embeddings/transformers.js';
import type { Embedder } from '../src/embeddings/types.js';
import { dot } from '../src/embeddings/vector.js';
import { writeTinyBertModel } from './embeddings-tiny-model.js';

const MODEL = 'test-org/tiny-bert';
let root: string;
let tiny: Embedder;

const norm = (v: Float32Array) => Math.sqrt(dot(v, v));
const maxDiff = (a: Float32Array, b: Float32Array) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

/** A stand-in for the bundled model, so these tests load only the tiny one. */
const fakeBundled = async (): Promise<Embedder> => ({
  id: 'fake-bundled',
  dims: 4,
  embed: async (texts) => texts.map(() => Float32Array.of(1, 0, 0, 0)),
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bs-tiny-models-'));
  await writeTinyBertModel(root, MODEL);
  await writeTinyBertModel(root, 'test-org/tiny-bert-q', { dims: 8, quantizedCopy: true });
  await writeTinyBertModel(root, 'test-org/broken-bert', { corruptOnnx: true });
  await writeTinyBertModel(root, 'test-org/tiny-multilingual-e5');
  await writeTinyBertModel(root, 'test-org/bge-tiny-en');
  tiny = await createTransformersEmbedder({ model: MODEL, localModelPath: root });
});

afterAll(async () => {
  await tiny?.close?.();
  await rm(root, { recursive: true, force: true });
});

describe('transformers provider on a generated tiny BERT, offline', () => {
  test('loads from localModelPath and reports its shape', () => {
    expect(tiny.dims).toBe(16);
    expect(tiny.maxTokens).toBe(512);
    expect(tiny.id).toMatch(/^transformers:test-org\/tiny-bert:fp32:mean:\d+$/);
  });

  test('vectors: one per text, dims long, unit length, deterministic, distinct per text', async () => {
    const texts = ['user cannot log in', 'invoice totals in the billing export', 'user cannot log in'];
    const v = await tiny.embed(texts);
    expect(v).toHaveLength(3);
    for (const x of v) {
      expect(x).toBeInstanceOf(Float32Array);
      expect(x.length).toBe(16);
      expect(norm(x)).toBeCloseTo(1, 5);
    }
    expect(Array.from(v[2])).toEqual(Array.from(v[0]));
    expect(dot(v[0], v[1])).toBeLessThan(0.99);
    // Same text alone (no padding) and in a batch with a longer one: same vector.
    const [alone] = await tiny.embed(['user cannot log in']);
    expect(maxDiff(alone, v[0])).toBeLessThan(1e-5);
    const again = await tiny.embed(texts);
    expect(Array.from(again[1])).toEqual(Array.from(v[1]));
  });

  test('a blank text embeds to the zero vector without reaching the model', async () => {
    const [a, b] = await tiny.embed(['', 'search task']);
    expect(Array.from(a).every((x) => x === 0)).toBe(true);
    expect(norm(b)).toBeCloseTo(1, 5);
    expect(await tiny.embed([])).toEqual([]);
  });

  test('dtype auto prefers onnx/model_quantized.onnx when present', async () => {
    const where = await locateTransformersModel({ model: 'test-org/tiny-bert-q', localModelPath: root });
    expect(where).toMatchObject({ available: true, source: 'local', dtype: 'q8' });
    const e = await createTransformersEmbedder({ model: 'test-org/tiny-bert-q', localModelPath: root });
    expect(e.dims).toBe(8);
    expect(e.id).toContain(':q8:');
    await e.close?.();
  });

  test('an absolute model folder works without localModelPath', async () => {
    const e = await createTransformersEmbedder({ model: join(root, MODEL), dtype: 'fp32' });
    const [a] = await e.embed(['find fast search']);
    const [b] = await tiny.embed(['find fast search']);
    expect(maxDiff(a, b)).toBeLessThan(1e-6);
    await e.close?.();
  });

  test('model families get their pooling and prefixes; e5 query and passage differ', async () => {
    expect(modelDefaults('Xenova/bge-small-en-v1.5')).toMatchObject({ pooling: 'cls' });
    expect(modelDefaults('Xenova/multilingual-e5-small')).toEqual({
      pooling: 'mean',
      queryPrefix: 'query: ',
      passagePrefix: 'passage: ',
    });
    expect(modelDefaults('Xenova/all-MiniLM-L6-v2')).toEqual({
      pooling: 'mean',
      queryPrefix: '',
      passagePrefix: '',
    });
    const e5 = await createTransformersEmbedder({
      model: 'test-org/tiny-multilingual-e5',
      localModelPath: root,
    });
    const [q] = await e5.embed(['search task'], 'query');
    const [p] = await e5.embed(['search task'], 'passage');
    expect(dot(q, p)).toBeLessThan(0.9999);
    expect(e5.id).not.toBe(tiny.id.replace('tiny-bert', 'tiny-multilingual-e5'));
    const bge = await createTransformersEmbedder({ model: 'test-org/bge-tiny-en', localModelPath: root });
    expect(bge.id).toContain(':cls');
    await Promise.all([e5.close?.(), bge.close?.()]);
  });

  test('a missing model is reported at once with the folder it looked in', async () => {
    const t = performance.now();
    const where = await locateTransformersModel({ model: 'nobody/nothing', localModelPath: root });
    expect(where.available).toBe(false);
    expect(where.reason).toContain(join(root, 'nobody/nothing'));
    await expect(
      createTransformersEmbedder({ model: 'nobody/nothing', localModelPath: root }),
    ).rejects.toThrow(/not found locally/);
    expect(performance.now() - t).toBeLessThan(1000);
  });

  test('remote allowed but the hub unreachable or silent: unavailable within the time limit, no hang', async () => {
    // A refused connection (a port nobody listens on) ...
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await locateTransformersModel({
      model: 'nobody/nothing',
      localModelPath: root,
      allowRemote: true,
      remoteHost: `http://127.0.0.1:${port}`,
    });
    expect(refused).toMatchObject({ available: false, source: 'remote' });
    expect(refused.reason).toMatch(/unreachable/);
    // ... and a server that never answers.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const t = performance.now();
    const slow = await locateTransformersModel({
      model: 'nobody/nothing',
      localModelPath: root,
      allowRemote: true,
      remoteTimeoutMs: 300,
      remoteHost: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
    });
    expect(slow.available).toBe(false);
    expect(performance.now() - t).toBeLessThan(2000);
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
  });
});

describe('resolveEmbedder with transformers', () => {
  test('auto picks transformers when its model is on disk', async () => {
    const r = await resolveEmbedder('auto', { transformers: { model: MODEL, localModelPath: root } });
    expect(r.provider).toBe('transformers');
    expect(r.warnings).toEqual([]);
    expect(r.embedder?.dims).toBe(16);
    await r.embedder?.close?.();
  });

  test('a model that fails to load falls back with a warning, never throws', async () => {
    const r = await resolveEmbedder('transformers', {
      transformers: { model: 'test-org/broken-bert', localModelPath: root },
      loaders: { bundled: fakeBundled },
    });
    expect(r.provider).toBe('bundled');
    expect(r.embedder?.id).toBe('fake-bundled');
    expect(r.warnings.join('\n')).toMatch(/transformers provider failed to load/);
  });
});

describe('transformers in worker threads', () => {
  test('two workers load the tiny model themselves and give the same vectors as this thread', async () => {
    const {
      embedder: pool,
      provider,
      warnings,
    } = await EmbeddingPool.start({
      provider: 'transformers',
      workers: 2,
      transformers: { model: MODEL, localModelPath: root },
    });
    try {
      expect(warnings).toEqual([]);
      expect(provider).toBe('transformers');
      expect(pool?.workerCount).toBe(2);
      expect(pool?.id).toBe(tiny.id);
      const texts = Array.from(
        { length: 40 },
        (_, i) => `task ${i} ${'search '.repeat(i % 7)}user login error`,
      );
      const viaPool = await pool!.embedAll(texts);
      const here = await tiny.embed(texts);
      viaPool.forEach((v, i) => expect(maxDiff(v, here[i])).toBeLessThan(1e-5));
    } finally {
      await pool?.close();
    }
  });

  test('a worker stuck on a batch is replaced and the batch retried once, then rejected: no hang', async () => {
    const { embedder: pool } = await EmbeddingPool.start({
      provider: 'transformers',
      workers: 1,
      batchTimeoutMs: 1, // every batch "hangs": it takes far longer than 1 ms
      maxBatchChars: 1e7,
      transformers: { model: MODEL, localModelPath: root },
    });
    try {
      const long = Array.from(
        { length: 16 },
        (_, i) => `${i} ${'user login error after password reset '.repeat(1000)}`,
      );
      await expect(pool!.embedAll(long)).rejects.toThrow(/failed twice/);
    } finally {
      await pool?.close();
    }
  });
});
