/**
 * Markdown bodies to DOM: marked renders, raw HTML in the file is shown as text (escaped, never
 * parsed), and DOMPurify cleans the result (javascript: links, anything marked let through). The one
 * form control kept is a task list's checkbox (`- [x]`), read-only: checked or not, always disabled.
 */
import DOMPurify from 'dompurify';
import { markdownToHtml } from './markdown-html.js';

export { markdownToHtml };

let hooked = false;
function addHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    }
    if (node.tagName === 'INPUT') {
      // A task list's checkbox keeps its state and nothing else; renderMarkdown drops any other input.
      for (const name of node.getAttributeNames())
        if (name !== 'type' && name !== 'checked') node.removeAttribute(name);
      node.setAttribute('disabled', '');
    }
    if (node.tagName === 'IMG') {
      node.setAttribute('loading', 'lazy');
      node.setAttribute('referrerpolicy', 'no-referrer');
    }
  });
}

/** Markdown to a sanitized fragment, ready to append. */
export function renderMarkdown(markdown: string): DocumentFragment {
  addHooks();
  const frag = DOMPurify.sanitize(markdownToHtml(markdown), {
    RETURN_DOM_FRAGMENT: true,
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'button', 'textarea', 'select', 'iframe'],
    FORBID_ATTR: ['style'],
  });
  for (const input of Array.from(frag.querySelectorAll('input'))) {
    if (input.type !== 'checkbox') {
      input.remove();
      continue;
    }
    // Named by its item's text, as a <label> around it would.
    const text = (input.parentElement?.textContent ?? '').trim().replace(/\s+/g, ' ');
    input.setAttribute('aria-label', text.length > 120 ? `${text.slice(0, 119)}…` : text || 'Task');
  }
  return frag;
}

/** Plain text (JSON, YAML, text files) as a fragment: one <pre> filled through textContent. */
export function renderPlain(text: string, fileType: string): DocumentFragment {
  let shown = text;
  if (fileType === 'json') {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Shown as written.
    }
  }
  const frag = document.createDocumentFragment();
  const pre = document.createElement('pre');
  pre.className = 'plain';
  const code = document.createElement('code');
  code.textContent = shown;
  pre.append(code);
  frag.append(pre);
  return frag;
}

/**
 * Links inside a rendered body that point at backlog items become viewer links: relative links to
 * files of the backlog, and ids written in the text (`TASK-0042`, `back-634`) that name an item.
 */
export function linkItems(
  root: ParentNode,
  itemPath: string,
  resolve: (ref: string) => string | undefined,
  hrefFor: (ref: string) => string,
): void {
  const folder = itemPath.includes('/') ? itemPath.slice(0, itemPath.lastIndexOf('/')) : '';
  for (const a of Array.from(root.querySelectorAll('a[href]'))) {
    const href = a.getAttribute('href') ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) continue;
    const path = joinPath(folder, href.split('#')[0]);
    const ref = resolve(path);
    if (ref) {
      a.setAttribute('href', hrefFor(ref));
      a.setAttribute('data-item', ref);
    }
  }
  const walker = document.createTreeWalker(root as Node, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) =>
      n.parentElement?.closest('a, code, pre') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const texts: Text[] = [];
  while (walker.nextNode()) texts.push(walker.currentNode as Text);
  const idPattern = /\b[A-Za-z][A-Za-z0-9]*-\d+(?:\.\d+)*\b/g;
  for (const text of texts) {
    const value = text.data;
    if (!idPattern.test(value)) continue;
    idPattern.lastIndex = 0;
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of value.matchAll(idPattern)) {
      const ref = resolve(m[0]);
      if (!ref) continue;
      frag.append(value.slice(last, m.index));
      const a = document.createElement('a');
      a.href = hrefFor(ref);
      a.dataset.item = ref;
      a.className = 'id-link';
      a.textContent = m[0];
      frag.append(a);
      last = m.index + m[0].length;
    }
    if (last === 0) continue;
    frag.append(value.slice(last));
    text.replaceWith(frag);
  }
}

function joinPath(folder: string, rel: string): string {
  const parts = folder ? folder.split('/') : [];
  for (const part of rel.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
