/**
 * Server-side snippets: the window of a document's plain text that holds the most distinct query
 * terms. A document's text is prepared once (SnippetText: where each word run is and its terms as ids),
 * so a query only compares integers; tokenizing bodies per result was most of a search's cost.
 */
import removeMarkdown from 'remove-markdown';
import type { Language, TextAnalyzer } from './tokenizer.js';
import type { Snippet, TextField } from './types.js';

export type { Snippet };

export const SNIPPET_CHARS = 120;

/** Word occurrences of a prepared text sorted by a single numeric key (a longer text sorts with a comparator). */
const OCCURRENCES = 2 ** 21;

/** Markdown to one line of plain text: formatting, links and code fences removed, whitespace collapsed. */
export function toPlainText(markdown: string): string {
  const text = removeMarkdown(markdown.replace(/^\s*(```|~~~).*$/gm, ''), { gfm: true, useImgAltText: true });
  return text.replace(/\s+/g, ' ').trim();
}

/** A query's terms as bits per term id (see TermIds.withQuery); a term no text has gets no bit. */
export interface QueryBits {
  /** Bit of each term id, 0 for terms not in the query. */
  readonly marks: Uint32Array;
  /** Distinct query terms found. */
  readonly size: number;
  /** Their ids. */
  readonly ids: readonly number[];
}

/** Ids for terms, shared by every prepared text of one index (a query looks its terms up once). */
export class TermIds {
  private readonly ids = new Map<string, number>();
  private marks = new Uint32Array(1024);

  /** The id of `term`, made on first sight. */
  id(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      this.ids.set(term, (id = this.ids.size));
      if (id >= this.marks.length) {
        const grown = new Uint32Array(this.marks.length * 2);
        grown.set(this.marks);
        this.marks = grown;
      }
    }
    return id;
  }

  /**
   * Runs `fn` with the query's terms marked, each with its bit in a match mask, then clears them: one
   * array for every query, so `fn` must not await. Up to 31 distinct terms are told apart in a window;
   * a longer query's extra terms still match.
   */
  withQuery<T>(terms: Iterable<string>, fn: (bits: QueryBits) => T): T {
    const marked: number[] = [];
    for (const term of terms) {
      const id = this.ids.get(term);
      if (id === undefined || this.marks[id] !== 0) continue;
      this.marks[id] = 1 << Math.min(marked.length, 30);
      marked.push(id);
    }
    try {
      // A text prepared inside `fn` may grow `marks`: its new ids are past this array's end, read as no bit.
      return fn({ marks: this.marks, size: marked.length, ids: marked });
    } finally {
      for (const id of marked) this.marks[id] = 0;
    }
  }
}

/**
 * A plain text prepared for snippets: each word run's offsets, and the runs of each term id (sorted by
 * term, then run), so a query finds its words by binary search instead of reading the whole text.
 */
export class SnippetText {
  private constructor(
    readonly text: string,
    private readonly starts: Uint32Array,
    private readonly ends: Uint32Array,
    /** Every (term, run) occurrence, ordered by term id then run: the term ids ... */
    private readonly termIds: Uint32Array,
    /** ... and their runs. */
    private readonly termRuns: Uint32Array,
  ) {}

  /** `language`: the document's (its terms must be those the index holds for it). */
  static prepare(text: string, analyzer: TextAnalyzer, ids: TermIds, language?: Language): SnippetText {
    const runs = analyzer.runs(text, language);
    const starts = new Uint32Array(runs.length);
    const ends = new Uint32Array(runs.length);
    let total = 0;
    for (const run of runs) total += run.terms.length;
    const occurrenceIds = new Uint32Array(total);
    const occurrenceRuns = new Uint32Array(total);
    let t = 0;
    runs.forEach((run, r) => {
      starts[r] = run.start;
      ends[r] = run.end;
      for (const term of run.terms) {
        occurrenceIds[t] = ids.id(term);
        occurrenceRuns[t++] = r;
      }
    });
    if (total >= OCCURRENCES) {
      const order = new Uint32Array(total).map((_, i) => i);
      order.sort((a, b) => occurrenceIds[a] - occurrenceIds[b] || a - b);
      const runsOf = order.map((i) => occurrenceRuns[i]);
      return new SnippetText(
        text,
        starts,
        ends,
        order.map((i) => occurrenceIds[i]),
        runsOf,
      );
    }
    // (term id, occurrence) as one number, so a numeric sort orders them by term, then text order.
    const keys = new Float64Array(total);
    for (let i = 0; i < total; i++) keys[i] = occurrenceIds[i] * OCCURRENCES + i;
    keys.sort();
    for (let i = 0; i < total; i++) {
      const at = keys[i] % OCCURRENCES;
      occurrenceIds[i] = (keys[i] - at) / OCCURRENCES;
      keys[i] = occurrenceRuns[at];
    }
    return new SnippetText(text, starts, ends, occurrenceIds, Uint32Array.from(keys));
  }

  /** Bytes of the prepared arrays (the text is shared with the document). */
  get memoryBytes(): number {
    return this.starts.byteLength * 2 + this.termIds.byteLength + this.termRuns.byteLength;
  }

  /**
   * The window of at most `width` characters holding the most distinct query terms (ties: the
   * earliest), widened to whole words. `bits` comes from TermIds.withQuery. Deterministic.
   */
  window(bits: QueryBits, width = SNIPPET_CHARS): { text: string; hits: number } {
    const matchStart: number[] = [];
    const matchEnd: number[] = [];
    const matchMask: number[] = [];
    // The runs holding a query term, in text order, each with the bits of the terms it holds.
    const { termIds, termRuns } = this;
    const ranges: number[] = [];
    let count = 0;
    for (const id of bits.ids) {
      const from = firstAtOrAfter(termIds, id);
      let to = from;
      while (to < termIds.length && termIds[to] === id) to++;
      if (to > from) ranges.push(id, from, to);
      count += to - from;
    }
    // run * 32 + bit number: a numeric sort puts them in text order.
    const found = new Array<number>(count);
    let n = 0;
    for (let k = 0; k < ranges.length; k += 3) {
      const bit = Math.clz32(1) - Math.clz32(bits.marks[ranges[k]]);
      for (let i = ranges[k + 1]; i < ranges[k + 2]; i++) found[n++] = termRuns[i] * 32 + bit;
    }
    if (ranges.length > 3) found.sort((a, b) => a - b);
    for (let i = 0; i < found.length; i++) {
      const r = Math.floor(found[i] / 32);
      const mask = 1 << (found[i] % 32);
      if (i > 0 && Math.floor(found[i - 1] / 32) === r) matchMask[matchMask.length - 1] |= mask;
      else {
        matchStart.push(this.starts[r]);
        matchEnd.push(this.ends[r]);
        matchMask.push(mask);
      }
    }
    let bestStart = 0;
    let bestHits = 0;
    for (let i = 0; i < matchStart.length; i++) {
      let mask = 0;
      for (let j = i; j < matchStart.length && matchEnd[j] - matchStart[i] <= width; j++)
        mask |= matchMask[j];
      const hits = popcount(mask);
      if (hits > bestHits) {
        bestHits = hits;
        bestStart = matchStart[i];
      }
    }
    return { text: this.cut(bestStart, width), hits: bestHits };
  }

  /**
   * `width` characters of the text from a little before `at`, cut where words begin and end (so never
   * inside a word or a character cluster, in scripts with or without spaces), with `…` where cut.
   */
  private cut(at: number, width: number): string {
    const { text, starts, ends } = this;
    if (text.length <= width) return text;
    // Some context before the first match: the first word that starts in it.
    let start = Math.max(0, at - Math.floor(width / 4));
    if (start > 0) {
      const r = firstAtOrAfter(starts, start);
      start = r < starts.length && starts[r] <= at ? starts[r] : at;
    }
    let end = Math.min(text.length, start + width);
    if (end < text.length) {
      // The last word that ends inside the window, with the punctuation right after it.
      const r = firstAtOrAfter(ends, end + 1) - 1;
      if (r >= 0 && ends[r] > start + width / 2) {
        end = ends[r];
        while (end < start + width && end < text.length && /[^\s\p{L}\p{N}]/u.test(text[end])) end++;
      } else end = graphemeBoundaryAtOrBefore(text, end);
    }
    return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
  }
}

/** Index of the first value >= x in a sorted array (its length when none). */
function firstAtOrAfter(sorted: Uint32Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The last boundary between user-perceived characters at or before `i` (never inside a cluster or a surrogate pair). */
export function graphemeBoundaryAtOrBefore(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const from = Math.max(0, i - 32);
  let last = from;
  for (const g of graphemes.segment(text.slice(from, i + 32))) {
    const at = from + g.index;
    if (at > i) break;
    last = at;
  }
  return last;
}

function popcount(n: number): number {
  let count = 0;
  for (let v = n >>> 0; v; v &= v - 1) count++;
  return count;
}

/**
 * The window of `text` holding the most distinct query terms (ties: the earliest), widened to whole
 * words. Prepares the text on the spot: for a text searched once; an index keeps SnippetTexts.
 */
export function bestWindow(
  text: string,
  analyzer: TextAnalyzer,
  queryTerms: ReadonlySet<string>,
  width = SNIPPET_CHARS,
): { text: string; hits: number } {
  const ids = new TermIds();
  const prepared = SnippetText.prepare(text, analyzer, ids);
  return ids.withQuery(queryTerms, (bits) => prepared.window(bits, width));
}

/**
 * The snippet of one result: the best window of the body when the body matched, else of another
 * matched field (tags, author: short, prepared on the spot), else the start of the body (the title is
 * shown anyway), else the title.
 */
export function snippetOf(
  body: SnippetText,
  bits: QueryBits,
  fields: Partial<Record<TextField, string>>,
  analyzer: TextAnalyzer,
  queryTerms: ReadonlySet<string>,
  matchedFields: TextField[],
): Snippet {
  const win = body.window(bits);
  if (win.hits > 0) return { field: 'body', text: win.text, matched_fields: matchedFields };
  for (const f of matchedFields) {
    if (f === 'body' || f === 'title' || !fields[f]) continue;
    const other = bestWindow(fields[f]!.replace(/\s+/g, ' ').trim(), analyzer, queryTerms);
    if (other.hits > 0) return { field: f, text: other.text, matched_fields: matchedFields };
  }
  if (body.text) return { field: 'body', text: win.text, matched_fields: matchedFields };
  const title = fields.title ?? '';
  return {
    field: 'title',
    text: title.slice(0, graphemeBoundaryAtOrBefore(title, SNIPPET_CHARS)),
    matched_fields: matchedFields,
  };
}

/** `snippetOf` for fields given as strings (`fields.body` already plain text, see toPlainText). */
export function buildSnippet(
  fields: Partial<Record<TextField, string>>,
  analyzer: TextAnalyzer,
  queryTerms: ReadonlySet<string>,
  matchedFields: TextField[],
): Snippet {
  const ids = new TermIds();
  const body = SnippetText.prepare(fields.body ?? '', analyzer, ids);
  return ids.withQuery(queryTerms, (bits) =>
    snippetOf(body, bits, fields, analyzer, queryTerms, matchedFields),
  );
}
