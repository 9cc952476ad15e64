/**
 * The main thread's longest stretch while the embedding cache saves (issue #23: a query arriving during a
 * save waits for it), this tree's EmbeddingCache against the one at `--base-ref`, in one process, taking
 * turns: `--rows` chunks of 512 dims (the Backlog.md folder has 5,692), then 100 more before each of 4
 * saves (one after a `retain` that drops every 7th row). A 1 ms timer probes the event loop during each
 * save. Also checks that both write byte-identical files and give identical vectors.
 *
 *   nice -n 10 npx tsx bench/cache-save.ts --base-ref 9d81d8b
 *   nice -n 10 npx tsx bench/cache-save.ts --base-ref 9d81d8b --encoding f32 --rows 5692
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { EmbeddingCache, hashText } from '../src/embeddings/cache.js';
import { ROOT } from './common.js';

const { values: args } = parseArgs({
  options: {
    'base-ref': { type: 'string', default: 'HEAD' },
    rows: { type: 'string', default: '5692' },
    encoding: { type: 'string', default: 'i8' },
  },
});
const tmp = mkdtempSync(join(tmpdir(), 'bs-cache-save-'));
try {
  mkdirSync(join(tmp, 'src'));
  const old = join(tmp, 'src', 'cache.ts');
  writeFileSync(
    old,
    execFileSync('git', ['-C', ROOT, 'show', `${args['base-ref']}:src/embeddings/cache.ts`]),
  );
  const Base = ((await import(pathToFileURL(old).href)) as { EmbeddingCache: typeof EmbeddingCache })
    .EmbeddingCache;
  const d = 512;
  const encoding = args.encoding as 'i8' | 'f32';
  const caches = [
    await EmbeddingCache.open(join(tmp, 'this'), 'm', d, { encoding }),
    await Base.open(join(tmp, 'base'), 'm', d, { encoding }),
  ];
  const hashes: string[] = [];
  let seed = 1;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
  const add = (n: number, tag: string) => {
    for (let i = 0; i < n; i++) {
      const v = new Float32Array(d).map(rnd);
      const h = hashText(tag + i);
      hashes.push(h);
      for (const c of caches) c.put([h], [v]);
    }
  };
  add(Number(args.rows), 'a');
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let k = 0; k < 4; k++) {
    add(100, `b${k}`);
    const keep = k === 2 ? hashes.filter((_, i) => i % 7 !== 3) : hashes;
    const longest: number[] = [];
    for (const c of caches) {
      c.retain(keep);
      let worst = 0;
      let last = performance.now();
      const probe = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last - 1);
        last = now;
      }, 1);
      await sleep(5);
      await c.save();
      await sleep(5);
      clearInterval(probe);
      longest.push(worst);
    }
    const same = readFileSync(caches[0].path).equals(readFileSync(caches[1].path));
    const [a, b] = caches.map((c) => c.get(hashes).vectors);
    const vectorsSame = a.every((v, i) =>
      v && b[i]
        ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).equals(
            Buffer.from(b[i].buffer, b[i].byteOffset, b[i].byteLength),
          )
        : v === b[i],
    );
    console.log(
      `${encoding}, ${caches[0].size} rows${k === 2 ? ' (after a retain that dropped rows)' : ''}: longest event-loop stall during save: this ${longest[0].toFixed(1)} ms, base ${longest[1].toFixed(1)} ms; file identical: ${same}; vectors identical: ${vectorsSame}`,
    );
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
