/**
 * Every answer of one checkout, written to a file, so two checkouts can be compared byte for byte (a
 * change meant to be faster must not change an answer): 1,500 queries of 2-6 words drawn from the
 * Backlog.md folder's titles and bodies (seeded), each asked four ways (page 1, page 3 of 10,
 * `conjunctive`, `group_by`), lexical, with scores; ids, final scores, snippets and totals are kept.
 *
 *   npx tsx bench/answers.ts --checkout ../wt-before --out /tmp/before.json
 *   npx tsx bench/answers.ts --out /tmp/after.json && cmp /tmp/before.json /tmp/after.json
 *
 * `--cached`: answer as a restarted process does, from a copy of the folder opened once before (its
 * `.cache/` written), not from the files (the same answers are expected either way).
 */
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BACKLOG_MD, ROOT, rng } from './common.js';

const { values: args } = parseArgs({
  options: {
    checkout: { type: 'string', default: ROOT },
    out: { type: 'string' },
    cached: { type: 'boolean', default: false },
    dir: {
      type: 'string',
      default: BACKLOG_MD,
    },
  },
});
if (!args.out) throw new Error('--out <file> is required');

const { openBacklog, closeBacklog } = await import(
  join(resolve(args.checkout), 'src/service/open-backlog.ts')
);
let dir = args.dir;
let copy: string | undefined;
if (args.cached) {
  copy = mkdtempSync(join(tmpdir(), 'answers-'));
  dir = join(copy, 'backlog');
  cpSync(args.dir, dir, { recursive: true });
  rmSync(join(dir, '.cache'), { recursive: true, force: true });
  await closeBacklog(await openBacklog({ dir, embeddings: 'none', watch: false }));
  if (!existsSync(join(dir, '.cache', 'index.bin'))) throw new Error('--cached: no .cache/index.bin written');
}
const service = await openBacklog(
  args.cached ? { dir, embeddings: 'none', watch: false } : { dir, cacheDir: false, embeddings: 'none' },
);
const items = (service.ids() as string[]).map((id) => service.get(id) as { title: string; body?: string });
const rand = rng(5);
const queries: string[] = [];
while (queries.length < 1500) {
  const item = items[Math.floor(rand() * items.length)];
  const source = rand() < 0.5 ? item.title : (item.body ?? item.title);
  const words = String(source)
    .split(/\s+/)
    .filter((w) => w.length > 1);
  if (words.length < 2) continue;
  const len = Math.min(words.length, 2 + Math.floor(rand() * 5));
  const at = Math.floor(rand() * (words.length - len + 1));
  queries.push(words.slice(at, at + len).join(' '));
}
const ways = [
  { limit: 20 },
  { limit: 10, offset: 30 },
  { limit: 5, conjunctive: true },
  { limit: 20, group_by: 'type' },
];
const out: unknown[] = [];
for (const q of queries)
  for (const way of ways) {
    try {
      const r = await service.searchUnified(q, { ...way, include_scores: true });
      out.push([
        q,
        r.total,
        r.results.map((x: { id: string; score?: number; scores?: { final: number }; snippet: unknown }) => [
          x.id,
          x.scores?.final ?? x.score,
          x.snippet,
        ]),
      ]);
    } catch (e) {
      out.push([q, String((e as { code?: string }).code)]);
    }
  }
writeFileSync(args.out, JSON.stringify(out));
await closeBacklog(service);
if (copy) rmSync(copy, { recursive: true, force: true });
process.stderr.write(`answers: ${out.length} written to ${args.out}\n`);
