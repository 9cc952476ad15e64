/**
 * The judge's view of the pool (`npx tsx bench/devset/show.ts [query-id ...] [--unjudged] [--compact]
 * [--body N] [--passages N]`):
 * for each query, every pooled document with a number, the systems that retrieved it, its title, status,
 * labels and front matter id, the opening of its body, and the passages around each query word. The
 * grades are written by a person (or an agent) who reads this and, where it is not enough, the file itself.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEVSET_DIR, loadDevset, matchesFilters, readDocs, type DevsetDoc } from './corpus.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const num = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const VALUED = ['--body', '--passages'];
const ids = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && VALUED.includes(args[i - 1])));

const plain = (s: string) =>
  s
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** Up to `max` passages of `text` around words of the query (3+ letters, or any number). */
function passages(text: string, query: string, max: number, width = 90): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_+.\-/<>$]+/gu) ?? [])].filter(
    (w) => w.length >= 3 || /\d/.test(w),
  );
  const lower = text.toLowerCase();
  const out: string[] = [];
  let last = -Infinity;
  const hits: number[] = [];
  for (const w of words) {
    for (let i = lower.indexOf(w); i >= 0 && hits.length < 200; i = lower.indexOf(w, i + 1)) hits.push(i);
  }
  hits.sort((a, b) => a - b);
  for (const i of hits) {
    if (i - last < width * 2) continue;
    last = i;
    out.push('…' + text.slice(Math.max(0, i - width), i + width) + '…');
    if (out.length >= max) break;
  }
  return out;
}

async function main(): Promise<void> {
  const bodyChars = num('--body', 300);
  const passageCount = num('--passages', 3);
  const compact = flag('--compact');
  const { queries, qrels } = await loadDevset();
  const docs = new Map<string, DevsetDoc>((await readDocs()).map((d) => [d.path, d]));
  const pool = new Map<string, [string, string][]>();
  for (const line of (await readFile(join(DEVSET_DIR, 'pool.tsv'), 'utf8')).split('\n').slice(1)) {
    const [qid, path, systems] = line.split('\t');
    if (!qid) continue;
    pool.set(qid, [...(pool.get(qid) ?? []), [path, systems]]);
  }
  for (const q of queries) {
    if (ids.length && !ids.includes(q.id)) continue;
    const entries = pool.get(q.id) ?? [];
    const out = [
      `=== ${q.id} [${q.class}] ${JSON.stringify(q.text)}${q.options ? ' ' + JSON.stringify(q.options) : ''}`,
    ];
    entries.forEach(([path, systems], i) => {
      const judged = qrels.get(q.id)?.get(path);
      if (flag('--unjudged') && judged !== undefined) return;
      const d = docs.get(path);
      const mark =
        (judged !== undefined ? ` judged ${judged}` : '') +
        (q.options && !matchesFilters(d ?? ({} as DevsetDoc), q.options) ? ' [FAILS FILTER]' : '');
      if (!d) return void out.push(`[${i + 1}] ${path} (not in the folder)`);
      const facts = `${d.fmId || '-'} | ${d.status ?? '-'} | ${d.tags.join(',') || '-'}`;
      const body = plain(d.body);
      if (compact) {
        const folder = path.slice(0, path.lastIndexOf('/') + 1);
        out.push(`[${i + 1}] ${folder} ${d.title} | ${facts} (${systems})${mark}`);
        if (bodyChars) out.push(`    B: ${body.slice(0, bodyChars)}`);
        for (const p of passages(body, q.text, passageCount, 70)) out.push(`    M: ${p}`);
        return;
      }
      out.push(`[${i + 1}] ${path}   (${systems})${mark}`);
      out.push(`    T: ${d.title} | ${facts} | ${d.kind}`);
      out.push(`    B: ${body.slice(0, bodyChars)}`);
      for (const p of passages(body, q.text, passageCount)) out.push(`    M: ${p}`);
    });
    console.log(out.join('\n'));
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
