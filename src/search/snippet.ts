import removeMarkdown from 'remove-markdown';
import type { TextAnalyzer } from './tokenizer.js';
import type { TextField } from './types.js';

export interface Snippet {
  /** The field the text comes from. */
  field: TextField;
  /** About `SNIPPET_CHARS` characters of plain text around the best match. */
  text: string;
  /** Fields in which query terms matched. */
  matched_fields: TextField[];
}

export const SNIPPET_CHARS = 120;

/** Markdown to one line of plain text: formatting, links and code fences removed, whitespace collapsed. */
export function toPlainText(markdown: string): string {
  const text = removeMarkdown(markdown.replace(/^\s*(```|~~~).*$/gm, ''), { gfm: true, useImgAltText: true });
  return text.replace(/\s+/g, ' ').trim();
}

interface Match {
  start: number;
  end: number;
  terms: string[];
}

/** Characters of a query term searched for verbatim to find where it may occur. */
const PROBE_CHARS = 4;
const REGION_CHARS = 48;
const MAX_PROBE_HITS = 12;

/**
 * Runs of `text` whose terms are query terms. Tokenizing a long body for every result is the cost of
 * a snippet, so only regions around a cheap verbatim probe (the first characters of each term, which
 * the inflected word almost always starts with) are tokenized.
 */
export function findMatches(text: string, analyzer: TextAnalyzer, queryTerms: ReadonlySet<string>): Match[] {
  if (queryTerms.size === 0) return [];
  const lower = text.toLowerCase();
  const probes = new Set([...queryTerms].map((t) => t.slice(0, PROBE_CHARS)));
  const regions: [number, number][] = [];
  for (const probe of probes) {
    // A word that occurs everywhere adds regions, not information: look at its first occurrences only.
    let seen = 0;
    for (
      let at = lower.indexOf(probe);
      at >= 0 && seen++ < MAX_PROBE_HITS;
      at = lower.indexOf(probe, at + probe.length)
    ) {
      regions.push([Math.max(0, at - REGION_CHARS), Math.min(text.length, at + probe.length + REGION_CHARS)]);
    }
  }
  regions.sort((a, b) => a[0] - b[0]);
  const matches: Match[] = [];
  let covered = 0;
  for (const [from, to] of regions) {
    if (to <= covered) continue;
    // Widen to whitespace so no word is cut; start where the previous region stopped.
    let a = Math.max(from, covered);
    while (a > covered && !/\s/.test(text[a - 1])) a--;
    let b = to;
    while (b < text.length && !/\s/.test(text[b])) b++;
    for (const run of analyzer.runs(text.slice(a, b))) {
      const terms = run.terms.filter((t) => queryTerms.has(t));
      if (terms.length) matches.push({ start: a + run.start, end: a + run.end, terms });
    }
    covered = b;
  }
  return matches;
}

/**
 * The window of `text` holding the most distinct query terms (ties: the earliest), widened to whole
 * words. Deterministic: the same input gives the same snippet.
 */
export function bestWindow(
  text: string,
  analyzer: TextAnalyzer,
  queryTerms: ReadonlySet<string>,
  width = SNIPPET_CHARS,
): { text: string; hits: number } {
  const matches = findMatches(text, analyzer, queryTerms);
  let bestStart = 0;
  let bestHits = 0;
  for (let i = 0; i < matches.length; i++) {
    const distinct = new Set<string>();
    for (let j = i; j < matches.length && matches[j].end - matches[i].start <= width; j++) {
      for (const t of matches[j].terms) distinct.add(t);
    }
    if (distinct.size > bestHits) {
      bestHits = distinct.size;
      bestStart = matches[i].start;
    }
  }
  if (text.length <= width) return { text, hits: bestHits };
  // Some context before the first match, then cut at word boundaries.
  let start = Math.max(0, bestStart - Math.floor(width / 4));
  if (start > 0) {
    const space = text.indexOf(' ', start);
    start = space >= 0 && space < bestStart ? space + 1 : start;
  }
  let end = Math.min(text.length, start + width);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + width / 2) end = space;
  }
  return {
    text: `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`,
    hits: bestHits,
  };
}

/**
 * The snippet of one result (`fields.body` already plain text, see toPlainText): the best window of the body when the body matched, else of another
 * matched field (tags, author, ...), else the start of the body (the title is shown anyway), else the title.
 */
export function buildSnippet(
  fields: Partial<Record<TextField, string>>,
  analyzer: TextAnalyzer,
  queryTerms: ReadonlySet<string>,
  matchedFields: TextField[],
): Snippet {
  const body = fields.body ?? '';
  const candidates: [TextField, string][] = [['body', body]];
  for (const f of matchedFields)
    if (f !== 'body' && f !== 'title' && fields[f])
      candidates.push([f, fields[f]!.replace(/\s+/g, ' ').trim()]);
  for (const [field, text] of candidates) {
    const win = bestWindow(text, analyzer, queryTerms);
    if (win.hits > 0) return { field, text: win.text, matched_fields: matchedFields };
  }
  if (body)
    return { field: 'body', text: bestWindow(body, analyzer, new Set()).text, matched_fields: matchedFields };
  return {
    field: 'title',
    text: (fields.title ?? '').slice(0, SNIPPET_CHARS),
    matched_fields: matchedFields,
  };
}
