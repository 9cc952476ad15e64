/**
 * `npm run bench:scale [-- 50000]`: lexical build time and query p50/p95 of our engine alone on a
 * synthetic corpus of N documents (SciFact and XQuAD paragraphs recombined, as in bench/perf.ts), in a
 * process of its own. Used to measure the top-k selection (docs/performance.md).
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBeir } from '../src/eval/beir.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVAL_DIR = resolve(process.env.BACKLOG_EVAL_DIR ?? join(ROOT, '..', 'shared', 'eval'));

function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pool = [
  ...(await loadBeir(join(EVAL_DIR, 'scifact'), 'train')).docs,
  ...(await loadBeir(join(EVAL_DIR, 'xquad-en'), 'dev')).docs,
];
const n = Number(process.argv[2] ?? 50000);
const rand = rng(42);
const pick = () => pool[Math.floor(rand() * pool.length)];
const docs = Array.from({ length: n }, (_, i) => {
  const parts = 1 + Math.floor(rand() * 3);
  return {
    id: `doc-${i}`,
    title: pick().title,
    text: Array.from({ length: parts }, () => pick().text).join('\n\n'),
  };
});
const r2 = rng(n);
const qs: string[] = [];
while (qs.length < 300) {
  const words = docs[Math.floor(r2() * docs.length)].text.split(/\s+/).filter((w) => w.length > 3);
  if (words.length < 4) continue;
  const len = 2 + Math.floor(r2() * 3);
  const at = Math.floor(r2() * (words.length - len));
  qs.push(words.slice(at, at + len).join(' '));
}
const svc = new OramaSearchService();
const t = performance.now();
await svc.build(docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
console.log('build', (performance.now() - t).toFixed(0));
for (const q of qs.slice(0, 30)) svc.search({ query: q, limit: 10 });
const times = qs
  .map((q) => {
    const s = performance.now();
    svc.search({ query: q, limit: 10 });
    return performance.now() - s;
  })
  .sort((a, b) => a - b);
console.log(
  'p50',
  times[Math.floor(times.length * 0.5)].toFixed(2),
  'p95',
  times[Math.ceil(times.length * 0.95) - 1].toFixed(2),
);
