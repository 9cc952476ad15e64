/**
 * Search snippets as safe HTML: the text is HTML-escaped FIRST, then @orama/highlight wraps the
 * matched words in <mark>. Nothing from a file reaches the DOM unescaped; the only markup in the
 * result is our own <mark class="hl"> tags.
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

/**
 * The words to mark for a query: lower-cased, at least 2 characters; longer words cut to a stem-like
 * prefix (`limiting` -> `limit`, `failed` -> `fail`), since the server matches stems and inflections.
 */
export function highlightTerms(query: string): string[] {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 2 && !ENTITY_WORDS.has(w));
  const terms = words.map((w) => (w.length >= 5 ? w.slice(0, Math.max(4, w.length - 3)) : w));
  return [...new Set(terms)].sort((a, b) => b.length - a.length);
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
  // `\b` in the whole-word strategy only knows ASCII word characters; for other scripts mark the match itself.
  const ascii = terms.every((t) => /^[a-z0-9]+$/.test(t));
  const highlighter = new Highlight({
    strategy: ascii ? highlightStrategy.PARTIAL_MATCH_FULL_WORD : highlightStrategy.PARTIAL_MATCH,
    HTMLTag: 'mark',
    CSSClass: 'hl',
  });
  return keepEntitiesWhole(highlighter.highlight(escaped, terms.join(' ')).HTML);
}
