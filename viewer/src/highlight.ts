/**
 * Search snippets as safe HTML: the text is HTML-escaped FIRST, then the matched words are wrapped in
 * <mark>. Nothing from a file reaches the DOM unescaped; the only markup in the result is our own
 * <mark class="hl"> tags.
 *
 * An ASCII query goes through @orama/highlight (whole words by `\b`). `\b` knows no other script, and
 * its partial strategy marks any substring, which in Chinese or Thai (no spaces) is often half a word or
 * part of a longer one; every other query is marked word by word from Intl.Segmenter's word boundaries
 * (the server's own), so a mark always covers whole words, in every script.
 */
import { Highlight, highlightStrategy } from '@orama/highlight';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}

/** Entity names our escaping produces: never highlight them on their own. */
const ENTITY_WORDS = new Set(['amp', 'lt', 'gt', 'quot', '39']);

const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });
/** Scripts written without spaces: a word there is what the segmenter says, never cut to a prefix. */
const UNSPACED =
  /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/u;

/** Lower-case, accents and marks folded: how a query word and a word of the text are compared. */
function fold(word: string): string {
  return word.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
}

/**
 * The words to mark for a query: lower-cased, at least 2 characters (one in Chinese or Japanese);
 * longer words of spaced scripts cut to a stem-like prefix (`limiting` -> `limit`, `failed` -> `fail`),
 * since the server matches stems and inflections. Words of unspaced scripts stay whole.
 */
export function highlightTerms(query: string): string[] {
  const terms: string[] = [];
  for (const s of wordSegmenter.segment(query.toLowerCase())) {
    if (!s.isWordLike) continue;
    for (const w of s.segment.split(/[^\p{L}\p{M}\p{N}]+/u)) {
      const unspaced = UNSPACED.test(w);
      if (w.length < (unspaced ? 1 : 2) || ENTITY_WORDS.has(w)) continue;
      terms.push(unspaced || w.length < 5 ? w : w.slice(0, Math.max(4, w.length - 3)));
    }
  }
  return [...new Set(terms)].sort((a, b) => b.length - a.length);
}

/** `text` as HTML, each word that begins with one of `terms` (compared folded) marked whole. */
function markWords(text: string, terms: string[]): string {
  const folded = terms.map(fold);
  let html = '';
  for (const s of wordSegmenter.segment(text)) {
    const escaped = escapeHtml(s.segment);
    const word = s.isWordLike ? fold(s.segment) : '';
    html += word && folded.some((t) => word.startsWith(t)) ? `${MARK_OPEN}${escaped}${MARK_CLOSE}` : escaped;
  }
  return html;
}

const MARK_OPEN = '<mark class="hl">';
const MARK_CLOSE = '</mark>';

/**
 * A mark may start or end inside an entity of the escaped text (`&<mark>quot;word&quot</mark>;`);
 * move such boundaries outside the entity so every entity stays whole. Only our own tags are moved.
 */
function keepEntitiesWhole(html: string): string {
  return html
    .replace(/&([#a-z0-9]*)<mark class="hl">/g, `${MARK_OPEN}&$1`)
    .replace(/(&[#a-z0-9]+)<\/mark>([#a-z0-9]*;)/g, `$1$2${MARK_CLOSE}`);
}

/** `text` as HTML with the query's words in <mark class="hl">. */
export function highlightHtml(text: string, query: string): string {
  const escaped = escapeHtml(text);
  const terms = highlightTerms(query);
  if (terms.length === 0) return escaped;
  if (!terms.every((t) => /^[a-z0-9]+$/.test(t))) return markWords(text, terms);
  const highlighter = new Highlight({
    strategy: highlightStrategy.PARTIAL_MATCH_FULL_WORD,
    HTMLTag: 'mark',
    CSSClass: 'hl',
  });
  return keepEntitiesWhole(highlighter.highlight(escaped, terms.join(' ')).HTML);
}
