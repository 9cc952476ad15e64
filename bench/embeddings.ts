/**
 * `npx tsx bench/embeddings.ts [--quick] [--backlog] [--skip-embed] [--skip-vector]`: the numbers in
 * docs/embeddings.md, printed as markdown.
 *
 * - texts/s of the bundled model (and of a transformers model when one is on disk: `--model ID` and
 *   `--model-path DIR`, else `$BACKLOG_SEARCH_MODELS`), in this thread and in a pool of 1 and 2 workers,
 *   on short texts (XQuAD questions), 70-word and 200-word chunks (SciFact abstracts);
 * - a single query's embedding latency (p50/p95), uncached and cached;
 * - exact vector search over 1K/10K/50K documents of 3 chunks, 384 and 512 dims;
 * - the binary cache: save and load time, size;
 * - `--backlog`: the Backlog.md folder through SemanticIndex with the pool and the cache, cold then warm.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { EmbeddingPool } from '../src/embeddings/pool.js';
import { SemanticIndex } from '../src/embeddings/semantic-index.js';
import { locateTransformersModel } from '../src/embeddings/transformers.js';
import type { EmbeddingProvider } from '../src/embeddings/types.js';
import { l2normalize } from '../src/embeddings/vector.js';
import { VectorIndex } from '../src/embeddings/vector-index.js';
import { loadBacklog } from '../src/storage/backlog-store.js';
import { EVAL_DIR, argValue } from './common.js';

const has = (flag: string) => process.argv.includes(flag);
const QUICK = has('--quick');
const out = (s = '') => process.stdout.write(`${s}\n`);
const log = (s: string) => process.stderr.write(`${s}\n`);
const rssMb = () => Math.round(process.memoryUsage().rss / 1e6);

function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const fmt = (n: number, d = 1) => n.toFixed(d);

function jsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function textSets() {
  const questions = jsonl<{ text: string }>(join(EVAL_DIR, 'xquad-en', 'queries.jsonl')).map((q) => q.text);
  const abstracts = jsonl<{ text: string }>(join(EVAL_DIR, 'scifact', 'corpus.jsonl')).map((d) => d.text);
  const words = abstracts.slice(0, 600).join(' ').split(/\s+/);
  const windows = (n: number, size: number) =>
    Array.from({ length: n }, (_, i) => words.slice(i * size, (i + 1) * size).join(' '));
  const n = QUICK ? 0.5 : 1;
  return {
    short: questions.slice(0, Math.round(240 * n)),
    chunk70: windows(Math.round(96 * n), 70),
    chunk200: windows(Math.round(48 * n), 200),
    queries: questions.slice(300, 300 + Math.round(120 * n)),
  };
}

async function embedSpeeds(provider: EmbeddingProvider, options: Parameters<typeof EmbeddingPool.start>[0]) {
  const sets = textSets();
  out(`\n### ${provider}: texts per second\n`);
  out(
    'texts/s by wall clock (texts per CPU-second of the whole process in brackets: robust to other load)\n',
  );
  out('| mode | short (~10 words) | 70-word chunks | 200-word chunks | RSS after, MB | load average |');
  out('|---|---|---|---|---|---|');
  const latency: string[] = [];
  for (const workers of [0, 1, 2]) {
    const { embedder: pool, warnings } = await EmbeddingPool.start({ ...options, provider, workers });
    if (!pool) {
      out(`| (${provider} not available: ${warnings.join('; ')}) | | | | |`);
      return;
    }
    await pool.embedAll(sets.short.slice(0, 8));
    const cells: string[] = [];
    for (const name of ['short', 'chunk70', 'chunk200'] as const) {
      const texts = sets[name];
      // A first pass warms the WebAssembly tiers up; the second is measured.
      await pool.embedAll(texts.slice(0, Math.ceil(texts.length / 4)).map((t) => `${t} .`));
      const cpu0 = process.cpuUsage();
      const t = performance.now();
      await pool.embedAll(texts);
      const s = (performance.now() - t) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const cpuS = (cpu.user + cpu.system) / 1e6;
      cells.push(`${fmt(texts.length / s)} (${fmt(texts.length / cpuS)})`);
      log(
        `${provider} workers=${workers} ${name}: ${fmt(texts.length / s)} texts/s, ${fmt(texts.length / cpuS)}/CPU-s`,
      );
    }
    const mode =
      workers === 0 ? 'this thread (blocks it)' : `pool, ${workers} worker${workers > 1 ? 's' : ''}`;
    out(`| ${mode} | ${cells.join(' | ')} | ${rssMb()} | ${os.loadavg()[0].toFixed(1)} |`);

    // One query at a time, as a search does: uncached, then the same queries again (cached).
    const cold: number[] = [];
    for (const q of sets.queries) {
      const t = performance.now();
      await pool.embedQuery(q);
      cold.push(performance.now() - t);
    }
    const warm: number[] = [];
    for (const q of sets.queries) {
      const t = performance.now();
      await pool.embedQuery(q);
      warm.push(performance.now() - t);
    }
    latency.push(
      `| ${mode} | ${fmt(percentile(cold, 50))} | ${fmt(percentile(cold, 95))} | ${fmt(percentile(warm, 50), 3)} |`,
    );
    await pool.close();
  }
  out(`\n### ${provider}: one query's embedding, ms (${sets.queries.length} XQuAD questions)\n`);
  out('| mode | p50 | p95 | repeated query (LRU) p50 |');
  out('|---|---|---|---|');
  latency.forEach((l) => out(l));
}

function randomUnit(dims: number, next: () => number): Float32Array {
  return l2normalize(Float32Array.from({ length: dims }, () => next() - 0.5));
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function vectorSearch() {
  out('\n### Vector search (exact scan, best chunk per document, top 20), ms\n');
  out(
    '| documents x 3 chunks | dims | build ms | p50 | p95 | p50 with a filter (half the docs) | matrix MB |',
  );
  out('|---|---|---|---|---|---|---|');
  const sizes = QUICK ? [1000, 10000] : [1000, 10000, 50000];
  for (const dims of [384, 512]) {
    for (const n of sizes) {
      const next = rng(n + dims);
      const index = new VectorIndex(dims);
      const t0 = performance.now();
      // Slightly perturbed copies of a few hundred base vectors: cheap to make, realistic enough for timing.
      const base = Array.from({ length: 257 }, () => randomUnit(dims, next));
      for (let d = 0; d < n; d++) {
        const vs = [0, 1, 2].map((c) => {
          const v = Float32Array.from(base[(d * 3 + c) % base.length]);
          v[(d + c) % dims] += 0.5;
          return l2normalize(v);
        });
        index.upsert(`doc-${d}`, vs);
      }
      const build = performance.now() - t0;
      const queries = Array.from({ length: 60 }, () => randomUnit(dims, next));
      for (const q of queries.slice(0, 5)) index.search(q, 20);
      const times: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        index.search(q, 20);
        times.push(performance.now() - t);
      }
      const filtered: number[] = [];
      const even = (id: string) => id.charCodeAt(id.length - 1) % 2 === 0;
      for (const q of queries) {
        const t = performance.now();
        index.search(q, 20, { filter: even });
        filtered.push(performance.now() - t);
      }
      out(
        `| ${n.toLocaleString('en-US')} | ${dims} | ${fmt(build, 0)} | ${fmt(percentile(times, 50), 2)} | ${fmt(percentile(times, 95), 2)} | ${fmt(percentile(filtered, 50), 2)} | ${fmt(index.memoryBytes / 1e6, 0)} |`,
      );
      log(`vector ${n} x ${dims}: p50 ${fmt(percentile(times, 50), 2)} ms`);
    }
  }
}

async function cacheSpeed() {
  out('\n### Binary cache (save = compact + write temp + fsync + rename; load = read + verify SHA-1)\n');
  out('| vectors | dims | encoding | file MB | save ms | load ms | worst cosine error |');
  out('|---|---|---|---|---|---|---|');
  for (const [count, dims, encoding] of [
    [6000, 512, 'f32'],
    [6000, 512, 'i8'],
    [30000, 512, 'f32'],
    [30000, 512, 'i8'],
    [150000, 384, 'f32'],
  ] as const) {
    if (QUICK && count > 30000) continue;
    const dir = await mkdtemp(join(os.tmpdir(), 'bs-emb-bench-'));
    try {
      const cache = await EmbeddingCache.open(dir, 'bench', dims, { encoding });
      const next = rng(count);
      const hashes = Array.from({ length: count }, (_, i) => hashText(`chunk ${i}`));
      const vectors = hashes.map(() => randomUnit(dims, next));
      cache.put(hashes, vectors);
      let t = performance.now();
      await cache.save();
      const save = performance.now() - t;
      t = performance.now();
      const again = await EmbeddingCache.open(dir, 'bench', dims, { encoding });
      const load = performance.now() - t;
      if (again.size !== count) throw new Error('cache lost entries');
      // Error of the cosine between a stored vector and fresh queries, worst over a sample.
      let worst = 0;
      const back = again.get(hashes.slice(0, 200)).vectors;
      for (let i = 0; i < 200; i++) {
        const q = randomUnit(dims, next);
        let a = 0;
        let b = 0;
        for (let j = 0; j < dims; j++) {
          a += vectors[i][j] * q[j];
          b += back[i]![j] * q[j];
        }
        worst = Math.max(worst, Math.abs(a - b));
      }
      out(
        `| ${count.toLocaleString('en-US')} | ${dims} | ${encoding} | ${fmt((await again.sizeOnDisk()) / 1e6)} | ${fmt(save, 0)} | ${fmt(load, 0)} | ${worst.toExponential(1)} |`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

async function backlog() {
  const dir = join(EVAL_DIR, 'backlog-md');
  const { items } = await loadBacklog(dir);
  const docs = items.map((i) => ({ id: i.id, title: i.title, body: i.body }));
  const textBytes = docs.reduce((n, d) => n + Buffer.byteLength(d.title) + Buffer.byteLength(d.body), 0);
  const cacheDir = await mkdtemp(join(os.tmpdir(), 'bs-emb-backlog-'));
  out(
    `\n### Backlog.md folder (${docs.length} files, ${fmt(textBytes / 1e6, 2)} MB of text), bundled model, 2 workers\n`,
  );
  out('| run | chunks | embedded | seconds | chunks/s | RSS MB | cache MB |');
  out('|---|---|---|---|---|---|---|');
  try {
    for (const run of ['cold (empty cache)', 'warm (restart, cache on disk)']) {
      const t0 = performance.now();
      const { embedder: pool } = await EmbeddingPool.start({ provider: 'bundled', workers: 2 });
      if (!pool) throw new Error('bundled model did not load');
      const cache = await EmbeddingCache.open(cacheDir, pool.id, pool.dims);
      const index = new SemanticIndex({ embedder: pool, cache });
      let lastLog = 0;
      const r = await index.upsert(docs, {
        onProgress: (done, total) => {
          if (performance.now() - lastLog > 10_000) {
            lastLog = performance.now();
            log(`  ${done}/${total} chunks, ${fmt((performance.now() - t0) / 1000, 0)} s`);
          }
        },
      });
      index.pruneCache();
      await cache.save();
      const s = (performance.now() - t0) / 1000;
      const rss = rssMb();
      out(
        `| ${run} | ${r.chunks} | ${r.embedded} | ${fmt(s)} | ${fmt(r.embedded / s)} | ${rss} | ${fmt((await cache.sizeOnDisk()) / 1e6, 2)} |`,
      );
      const hits = await index.search('user cannot log in', 5);
      log(`  top hits for "user cannot log in": ${hits.map((h) => h.docId).join(', ')}`);
      await pool.close();
    }
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

async function main() {
  out(`Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}.`);
  if (!has('--skip-embed')) {
    await embedSpeeds('bundled', {});
    const model = argValue('--model');
    const localModelPath = argValue('--model-path');
    const where = await locateTransformersModel({ model, localModelPath });
    if (where.available) await embedSpeeds('transformers', { transformers: { model, localModelPath } });
    else out(`\n(transformers: skipped, ${where.reason})`);
  }
  if (!has('--skip-vector')) {
    vectorSearch();
    await cacheSpeed();
  }
  if (has('--backlog')) await backlog();
}

await main();
