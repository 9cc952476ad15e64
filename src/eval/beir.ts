import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BacklogError } from '../errors.js';

/** One corpus document of a BEIR dataset. */
export interface BeirDoc {
  id: string;
  title: string;
  text: string;
}

/** One query of a BEIR dataset. */
export interface BeirQuery {
  id: string;
  text: string;
}

/**
 * A BEIR dataset loaded for one split. `queries` holds only the queries that have qrels in that split, in
 * the order of `queries.jsonl`. `qrels` maps query id -> (corpus id -> score); score > 0 means relevant,
 * rows with score <= 0 are kept as judged-not-relevant.
 */
export interface BeirDataset {
  name: string;
  split: string;
  docs: BeirDoc[];
  queries: BeirQuery[];
  qrels: Map<string, Map<string, number>>;
}

const LAYOUT =
  'Expected a BEIR folder: corpus.jsonl (one JSON object a line: _id, title, text), queries.jsonl (_id, text) ' +
  'and qrels/<split>.tsv (header row, then query-id<TAB>corpus-id<TAB>score).';

function requireFile(path: string, hint = LAYOUT): void {
  if (!existsSync(path)) throw new BacklogError('NOT_FOUND', `BEIR file not found: ${path}`, hint, { path });
}

/** Yields the non-blank lines of a text file one by one (streamed, so large corpora never sit in memory as text). */
async function* readLines(path: string): AsyncGenerator<[line: string, lineNo: number]> {
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const line of rl) {
    lineNo++;
    if (line.trim() !== '') yield [line, lineNo];
  }
}

/** Streams a jsonl file, parsing each line as a JSON object. */
async function* readJsonl(path: string): AsyncGenerator<Record<string, unknown>> {
  for await (const [line, lineNo] of readLines(path)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'object' || value === null || !('_id' in value)) {
      throw new BacklogError('INTERNAL', `${path}:${lineNo}: not a JSON object with an "_id"`, LAYOUT, {
        path,
        line: lineNo,
      });
    }
    yield value as Record<string, unknown>;
  }
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** Reads `qrels/<split>.tsv`: the header row (any first line whose score column is not a number) is skipped. */
async function readQrels(path: string): Promise<Map<string, Map<string, number>>> {
  const qrels = new Map<string, Map<string, number>>();
  for await (const [line, lineNo] of readLines(path)) {
    const [qid, docId, scoreText] = line.split('\t').map((s) => s.trim());
    const score = Number(scoreText);
    if (scoreText === undefined || scoreText === '' || Number.isNaN(score)) {
      if (lineNo === 1) continue; // header
      throw new BacklogError(
        'INTERNAL',
        `${path}:${lineNo}: expected query-id<TAB>corpus-id<TAB>score`,
        LAYOUT,
        {
          path,
          line: lineNo,
        },
      );
    }
    let rels = qrels.get(qid);
    if (!rels) qrels.set(qid, (rels = new Map()));
    rels.set(docId, score);
  }
  return qrels;
}

/**
 * Loads a BEIR-layout folder for one split (e.g. `train`, `dev`, `test`). Throws a NOT_FOUND BacklogError
 * naming the missing file and the expected layout.
 */
export async function loadBeir(dir: string, split: string): Promise<BeirDataset> {
  const root = resolve(dir);
  const corpusPath = join(root, 'corpus.jsonl');
  const queriesPath = join(root, 'queries.jsonl');
  const qrelsPath = join(root, 'qrels', `${split}.tsv`);
  requireFile(corpusPath);
  requireFile(queriesPath);
  const qrelsDir = join(root, 'qrels');
  const splits = existsSync(qrelsDir)
    ? readdirSync(qrelsDir)
        .filter((f) => f.endsWith('.tsv'))
        .map((f) => f.slice(0, -4))
    : [];
  requireFile(qrelsPath, `${LAYOUT} Splits present here: ${splits.length ? splits.join(', ') : 'none'}.`);

  const qrels = await readQrels(qrelsPath);
  const queries: BeirQuery[] = [];
  for await (const q of readJsonl(queriesPath)) {
    const id = str(q._id);
    if (qrels.has(id)) queries.push({ id, text: str(q.text) });
  }
  if (queries.length === 0) {
    throw new BacklogError(
      'NOT_FOUND',
      `No query of ${queriesPath} has qrels in ${qrelsPath}`,
      'Check that the query ids in the qrels file match the _id values in queries.jsonl.',
      { path: qrelsPath },
    );
  }
  const docs: BeirDoc[] = [];
  for await (const d of readJsonl(corpusPath))
    docs.push({ id: str(d._id), title: str(d.title), text: str(d.text) });
  return { name: basename(root), split, docs, queries, qrels };
}

/** A query with every field of its `queries.jsonl` line (e.g. a class or search options next to `_id`, `text`). */
export interface JudgedQuery extends BeirQuery {
  fields: Record<string, unknown>;
}

/**
 * Loads the queries and qrels of a BEIR-layout folder for one split, without a `corpus.jsonl`: for judged
 * sets whose corpus is a folder of files read in place (the qrels' corpus ids are then file paths).
 * `queries` holds every line of `queries.jsonl` (judged or not), in file order.
 */
export async function loadJudgedQueries(
  dir: string,
  split: string,
): Promise<{ queries: JudgedQuery[]; qrels: Map<string, Map<string, number>> }> {
  const root = resolve(dir);
  const queriesPath = join(root, 'queries.jsonl');
  const qrelsPath = join(root, 'qrels', `${split}.tsv`);
  requireFile(queriesPath);
  requireFile(qrelsPath);
  const qrels = await readQrels(qrelsPath);
  const queries: JudgedQuery[] = [];
  for await (const q of readJsonl(queriesPath))
    queries.push({ id: str(q._id), text: str(q.text), fields: q });
  return { queries, qrels };
}
