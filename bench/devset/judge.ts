/**
 * Records grades into qrels/dev.tsv (`npx tsx bench/devset/judge.ts <grades-file>`): the judge reads
 * `show.ts`, which numbers each query's pooled documents in pool.tsv order, and writes one line per query:
 *
 *     nav-01: 31=3 7=1          (document 31 of nav-01's pool is graded 3, document 7 graded 1)
 *     abt-11<TAB>docs/doc-001 - Testing-Style-Guide.md<TAB>3   (a document outside the pool, by path)
 *
 * Every pooled document of a query that has a line and no grade yet is recorded as 0 (judged, not
 * relevant); grades already in qrels/dev.tsv are kept unless a line changes them. Paths must exist in the
 * backlog folder.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEVSET_DIR, DEVSET_SPLIT, backlogSourceDir, loadDevset } from './corpus.js';

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx bench/devset/judge.ts <grades-file>');
  const { queries, qrels } = await loadDevset();
  const known = new Set(queries.map((q) => q.id));
  const pool = new Map<string, string[]>();
  for (const line of (await readFile(join(DEVSET_DIR, 'pool.tsv'), 'utf8')).split('\n').slice(1)) {
    const [qid, path] = line.split('\t');
    if (qid) pool.set(qid, [...(pool.get(qid) ?? []), path]);
  }
  const set = (qid: string, path: string, grade: number) => {
    if (!known.has(qid)) throw new Error(`unknown query ${qid}`);
    if (!Number.isInteger(grade) || grade < 0 || grade > 3)
      throw new Error(`${qid}: grade ${grade} is not 0-3`);
    if (!existsSync(join(backlogSourceDir(), path))) throw new Error(`${qid}: no file ${path}`);
    if (!qrels.has(qid)) qrels.set(qid, new Map());
    qrels.get(qid)!.set(path, grade);
  };
  for (const raw of (await readFile(file, 'utf8')).split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const cols = raw.split('\t');
    if (cols.length === 3) {
      set(cols[0].trim(), cols[1], Number(cols[2]));
      continue;
    }
    const m = /^([\w-]+):\s*(.*)$/.exec(line);
    if (!m) throw new Error(`cannot read: ${line}`);
    const [, qid, rest] = m;
    const paths = pool.get(qid) ?? [];
    const given = new Map<number, number>();
    for (const pair of rest.split(/\s+/).filter(Boolean)) {
      const [n, g] = pair.split('=').map(Number);
      if (!paths[n - 1]) throw new Error(`${qid}: no document ${n} in its pool`);
      given.set(n, g);
    }
    paths.forEach((path, i) => {
      const grade = given.get(i + 1);
      if (grade !== undefined) set(qid, path, grade);
      else if (!qrels.get(qid)?.has(path)) set(qid, path, 0);
    });
  }
  const rows = ['query-id\tcorpus-id\tscore'];
  for (const q of queries)
    for (const [path, grade] of [...(qrels.get(q.id) ?? [])].sort(
      (a, b) => b[1] - a[1] || a[0].localeCompare(b[0]),
    ))
      rows.push(`${q.id}\t${path}\t${grade}`);
  await writeFile(join(DEVSET_DIR, 'qrels', `${DEVSET_SPLIT}.tsv`), rows.join('\n') + '\n');
  console.log(`qrels/${DEVSET_SPLIT}.tsv: ${rows.length - 1} judgments`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
