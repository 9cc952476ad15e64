/**
 * Server-side snippets: the window of a document's plain text that holds the most distinct query
 * terms. A document's text is prepared once (SnippetText: where each word run is and its terms as ids),
 * so a query only compares integers; tokenizing bodies per result was most of a search's cost.
 */
import { popcount } from './bits.js';
import type { Language, TextAnalyzer } from './tokenizer.js';
import type { Snippet, TextField } from './types.js';
import { removeMarkdown } from './remove-markdown.js';
import { firstAtOrAfter, grownUint32 } from './typed-arrays.js';

export type { Snippet };

export const SNIPPET_CHARS = 120;

/** Word occurrences of a prepared text sorted by a single numeric key (a longer text sorts with a comparator). */
const OCCURRENCES = 2 ** 21;

/** Markdown to one line of plain text: formatting, links and code fences removed, whitespace collapsed. */
export function toPlainText(markdown: string): string {
  // Without a fence the expression cannot match (it was a tenth of a cold snippet's time).
  const fenced = markdown.includes('```') || markdown.includes('~~~');
  const unfenced = fenced ? markdown.replace(/^\s*(```|~~~).*$/gm, '') : markdown;
  const text = removeMarkdown(unfenced);
  return text.replace(/\s+/g, ' ').trim();
}

/** Blank lines, headings and HTML comments (Backlog.md's `<!-- SECTION:... -->` markers). */
const LEADING_LINE = /^(?:[ \t]*|[ \t]{0,3}#{1,6}[ \t].*|[ \t]*<!--.*-->[ \t]*)$/;

/**
 * A body as snippets read it: its plain text, and `lead`, where the text after the body's leading
 * headings begins (`## Description` in every Backlog.md task): a snippet from the start of the body
 * starts there, not with the heading's words. 0 when the body does not start with a heading, or is
 * nothing else.
 */
export function plainBody(markdown: string): { text: string; lead: number } {
  const text = toPlainText(markdown);
  const lines = markdown.split('\n');
  let n = 0;
  let headings = 0;
  for (; n < lines.length && LEADING_LINE.test(lines[n]); n++) if (/^[ \t]{0,3}#/.test(lines[n])) headings++;
  if (headings === 0 || n === lines.length) return { text, lead: 0 };
  const heading = toPlainText(lines.slice(0, n).join('\n'));
  if (!heading || !text.startsWith(heading) || text.length <= heading.length + 1) return { text, lead: 0 };
  return { text, lead: text[heading.length] === ' ' ? heading.length + 1 : heading.length };
}

/** The best window of a text for a query. */
export interface SnippetWindow {
  /** The window, cut at word boundaries, with `…` where the text goes on. */
  text: string;
  /** Distinct query terms in it (0: none matched; the window is the text's start). */
  hits: number;
  /** Where the window's first matched word begins in the text. */
  at: number;
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
  private marks: Uint32Array = new Uint32Array(1024);

  /** Every term by its id (saved-snippets.ts writes the terms of the ids it saves). */
  terms(): string[] {
    const out = new Array<string>(this.ids.size);
    for (const [term, id] of this.ids) out[id] = term;
    return out;
  }

  /** The id of `term`, made on first sight. */
  id(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      this.ids.set(term, (id = this.ids.size));
      this.marks = grownUint32(this.marks, id + 1);
    }
    return id;
  }

  /**
   * Runs `fn` with the query's terms marked, each with its bit in a match mask, then clears them: one
   * array for every query, so `fn` must not await. Up to 31 distinct terms are told apart in a window;
   * a longer query's extra terms still match. Each term gets its id here, even one no text prepared so
   * far has: a body prepared inside `fn` must see it (otherwise a snippet would depend on which bodies
   * happened to be prepared before, e.g. on how long the embedding model took to load). So pass only
   * terms some text may hold (ResultStore passes the index's), or the ids grow with every query.
   */
  withQuery<T>(terms: Iterable<string>, fn: (bits: QueryBits) => T): T {
    const marked: number[] = [];
    for (const term of terms) {
      const id = this.id(term);
      if (this.marks[id] !== 0) continue;
      this.marks[id] = 1 << Math.min(marked.length, 30);
      marked.push(id);
    }
    try {
      // A text prepared inside `fn` may grow `marks`: its new ids (no query term) are past this array's end, read as no bit.
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
    /** Where a window from the text's start begins: past the body's leading headings (plainBody). */
    private readonly lead: number,
    private readonly starts: Uint32Array,
    private readonly ends: Uint32Array,
    /** Every (term, run) occurrence, ordered by term id then run: the term ids ... */
    private readonly termIds: Uint32Array,
    /** ... and their runs. */
    private readonly termRuns: Uint32Array,
  ) {}

  /** `language`: the document's (its terms must be those the index holds for it); `lead`: see plainBody. */
  static prepare(
    text: string,
    analyzer: TextAnalyzer,
    ids: TermIds,
    language?: Language,
    lead = 0,
  ): SnippetText {
    // Into buffers shared by every prepare (grown as needed), then copied at their size: an array per
    // run (`runs`) and `Uint32Array.from` were most of a body's preparation once its words were cached.
    let runs = 0;
    let total = 0;
    analyzer.eachRun(text, language, (start, end, terms) => {
      if (runs >= prep.starts.length) {
        prep.starts = grownUint32(prep.starts, runs + 1);
        prep.ends = grownUint32(prep.ends, runs + 1);
      }
      prep.starts[runs] = start;
      prep.ends[runs] = end;
      if (total + terms.length > prep.ids.length) {
        prep.ids = grownUint32(prep.ids, total + terms.length);
        prep.runs = grownUint32(prep.runs, total + terms.length);
      }
      for (const term of terms) {
        prep.ids[total] = ids.id(term);
        prep.runs[total++] = runs;
      }
      runs++;
    });
    const starts = prep.starts.slice(0, runs);
    const ends = prep.ends.slice(0, runs);
    const occurrenceIds = prep.ids.subarray(0, total);
    const occurrenceRuns = prep.runs.subarray(0, total);
    if (total >= OCCURRENCES) {
      const order = new Uint32Array(total).map((_, i) => i);
      order.sort((a, b) => occurrenceIds[a] - occurrenceIds[b] || a - b);
      const runsOf = order.map((i) => occurrenceRuns[i]);
      return new SnippetText(
        text,
        lead,
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
    const termIds = new Uint32Array(total);
    const termRuns = new Uint32Array(total);
    for (let i = 0; i < total; i++) {
      const at = keys[i] % OCCURRENCES;
      termIds[i] = (keys[i] - at) / OCCURRENCES;
      termRuns[i] = occurrenceRuns[at];
    }
    return new SnippetText(text, lead, starts, ends, termIds, termRuns);
  }

  /** A prepared text from its parts (saved-snippets.ts: read back from the persisted index, checked there). */
  static of(
    text: string,
    lead: number,
    starts: Uint32Array,
    ends: Uint32Array,
    termIds: Uint32Array,
    termRuns: Uint32Array,
  ): SnippetText {
    return new SnippetText(text, lead, starts, ends, termIds, termRuns);
  }

  /** The parts `of` takes (saved-snippets.ts writes them). */
  parts(): {
    text: string;
    lead: number;
    starts: Uint32Array;
    ends: Uint32Array;
    termIds: Uint32Array;
    termRuns: Uint32Array;
  } {
    const { text, lead, starts, ends, termIds, termRuns } = this;
    return { text, lead, starts, ends, termIds, termRuns };
  }

  /** Bytes of the prepared arrays (the text is shared with the document). */
  get memoryBytes(): number {
    return this.starts.byteLength * 2 + this.termIds.byteLength + this.termRuns.byteLength;
  }

  /**
   * The window of at most `width` characters holding the most distinct query terms (ties: the
   * earliest), widened to whole words. `bits` comes from TermIds.withQuery. Deterministic.
   */
  window(bits: QueryBits, width = SNIPPET_CHARS): SnippetWindow {
    // Each query term's runs, in text order: [from, to) of termRuns (its slice of the term-sorted arrays).
    const { termIds, termRuns } = this;
    const k = bits.ids.length;
    const at = (scratch.at = grownUint32(scratch.at, k));
    const to = (scratch.to = grownUint32(scratch.to, k));
    let count = 0;
    for (let t = 0; t < k; t++) {
      const id = bits.ids[t];
      at[t] = firstAtOrAfter(termIds, id);
      to[t] = firstAtOrAfter(termIds, id + 1);
      count += to[t] - at[t];
    }
    // Merged into one match per run, in text order, with the bits of the terms the run holds.
    const starts = (scratch.starts = grownUint32(scratch.starts, count));
    const ends = (scratch.ends = grownUint32(scratch.ends, count));
    const masks = (scratch.masks = grownUint32(scratch.masks, count));
    let matches = 0;
    let lastRun = -1;
    for (;;) {
      let next = -1;
      for (let t = 0; t < k; t++)
        if (at[t] < to[t] && (next < 0 || termRuns[at[t]] < termRuns[at[next]])) next = t;
      if (next < 0) break;
      const r = termRuns[at[next]++];
      const mask = bits.marks[bits.ids[next]];
      if (r === lastRun) masks[matches - 1] |= mask;
      else {
        starts[matches] = this.starts[r];
        ends[matches] = this.ends[r];
        masks[matches++] = mask;
        lastRun = r;
      }
    }
    // Each match begins a window holding the matches that end within `width` of its start; the ends
    // only grow, so the window's far edge moves forward only (per-bit counts give the window's terms).
    const perBit = scratch.perBit.fill(0);
    let inWindow = 0;
    let j = 0;
    let bestStart = this.lead; // no match: the start of the text, past its leading headings
    let bestHits = 0;
    for (let i = 0; i < matches && bestHits < bits.size; i++) {
      if (j < i) j = i;
      for (; j < matches && ends[j] - starts[i] <= width; j++)
        inWindow = addBits(perBit, inWindow, masks[j], 1);
      const hits = popcount(inWindow);
      if (hits > bestHits) {
        bestHits = hits;
        bestStart = starts[i];
      }
      if (j > i) inWindow = addBits(perBit, inWindow, masks[i], -1);
    }
    return { text: this.cut(bestStart, width), hits: bestHits, at: bestStart };
  }

  /**
   * `width` characters of the text from a little before `at`, cut where words begin and end (so never
   * inside a word or a character cluster, in scripts with or without spaces), with `…` where cut.
   */
  private cut(at: number, width: number): string {
    const { text, starts, ends } = this;
    // Nothing before the body's leading headings, unless the match is in them.
    const from = at >= this.lead ? this.lead : 0;
    if (text.length - from <= width) return text.slice(from);
    // Some context before the first match: the first word that starts in it.
    let start = Math.max(from, at - Math.floor(width / 4));
    if (start > from) {
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
    return `${start > from ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
  }
}

let graphemes: Intl.Segmenter | undefined;

/** The last boundary between user-perceived characters at or before `i` (never inside a cluster or a surrogate pair). */
export function graphemeBoundaryAtOrBefore(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const from = Math.max(0, i - 32);
  let last = from;
  // Made on first use: the first Intl object of a process loads ICU's locale list (~25 ms of every start).
  graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  for (const g of graphemes.segment(text.slice(from, i + 32))) {
    const at = from + g.index;
    if (at > i) break;
    last = at;
  }
  return last;
}

/** Buffers for `SnippetText.prepare`, grown as needed: each body's arrays are copied out of them. */
const prep: Record<'starts' | 'ends' | 'ids' | 'runs', Uint32Array> = {
  starts: new Uint32Array(1024),
  ends: new Uint32Array(1024),
  ids: new Uint32Array(1024),
  runs: new Uint32Array(1024),
};

/** Buffers for `window`, grown as needed: one search asks for a window per result. */
const scratch: Record<'at' | 'to' | 'starts' | 'ends' | 'masks', Uint32Array> & { perBit: Int32Array } = {
  at: new Uint32Array(32),
  to: new Uint32Array(32),
  starts: new Uint32Array(256),
  ends: new Uint32Array(256),
  masks: new Uint32Array(256),
  perBit: new Int32Array(32),
};

/** Counts each bit of `mask` once more (`by` 1) or once less (-1); returns the bits counted at least once. */
function addBits(perBit: Int32Array, present: number, mask: number, by: 1 | -1): number {
  for (let m = mask; m !== 0; m &= m - 1) {
    const bit = 31 - Math.clz32(m & -m);
    perBit[bit] += by;
    if (perBit[bit] === 0) present &= ~(1 << bit);
    else present |= 1 << bit;
  }
  return present;
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
): SnippetWindow {
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
