/** Markdown to an HTML string with marked; raw HTML in the file becomes escaped text (no DOM needed). */
import { Marked } from 'marked';
import { escapeHtml } from './highlight.js';

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    // `<img src=x onerror=...>` in a file is text to show, not markup to run. HTML comments alone
    // (Backlog.md's `<!-- SECTION:DESCRIPTION:BEGIN -->` markers) are notes for tools: not shown.
    html: ({ text }) => (/^\s*(<!--[\s\S]*?-->\s*)+$/.test(text) ? '' : escapeHtml(text)),
  },
});

/** Markdown to an HTML string in which no markup of the file survives as markup. */
export function markdownToHtml(markdown: string): string {
  return marked.parse(markdown, { async: false });
}
