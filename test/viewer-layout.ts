/**
 * Layout measured in the page, for the viewer's Chromium tests: boxes, and the text of each rendered
 * line of an element. The callbacks run in the browser; this project compiles without the DOM lib, so
 * the few DOM shapes they use are declared here.
 */
import type { Locator } from 'playwright-core';

export interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}
interface TextNode {
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<TextNode>;
}
interface PageRange {
  setStart(node: TextNode, offset: number): void;
  setEnd(node: TextNode, offset: number): void;
  getClientRects(): ArrayLike<Box>;
}

export function box(locator: Locator): Promise<Box> {
  return locator.evaluate((el) => {
    const r = (el as unknown as { getBoundingClientRect(): Box }).getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height };
  });
}

/**
 * Whether the element's text is wider than its box and, if so, whether it is cut there (overflow
 * hidden, an ellipsis) rather than drawn over what comes next.
 */
export function clipping(locator: Locator): Promise<{ overflows: boolean; cut: boolean }> {
  return locator.evaluate((el) => {
    const e = el as unknown as { scrollWidth: number; clientWidth: number };
    const style = (
      globalThis as unknown as {
        getComputedStyle(el: unknown): { overflowX: string; textOverflow: string };
      }
    ).getComputedStyle(el);
    return {
      overflows: e.scrollWidth > e.clientWidth,
      cut: style.overflowX === 'hidden' && style.textOverflow === 'ellipsis',
    };
  });
}

/** True when `inner` lies inside `outer` horizontally (half a pixel of rounding allowed). */
export function within(inner: Box, outer: Box): boolean {
  return inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5;
}

/** The text of each line the element's text is rendered on, top to bottom (characters grouped by their top). */
export function textLines(locator: Locator): Promise<string[]> {
  return locator.evaluate((el) => {
    const doc = (globalThis as unknown as { document: { createRange(): PageRange } }).document;
    const lines: { top: number; text: string }[] = [];
    const visit = (node: TextNode): void => {
      if (node.nodeType !== 3) {
        for (const child of Array.from(node.childNodes)) visit(child);
        return;
      }
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = doc.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect || rect.width === 0) continue; // a space collapsed at a line break
        const line = lines.find((l) => Math.abs(l.top - rect.top) < rect.height / 2);
        if (line) line.text += text[i];
        else lines.push({ top: rect.top, text: text[i] });
      }
    };
    visit(el as unknown as TextNode);
    return lines.sort((a, b) => a.top - b.top).map((l) => l.text.trim());
  });
}

/**
 * Lines of `title` too narrow to read: shorter than 3 characters, unless it is the last line and a
 * whole word of the title (a short last word may sit alone on the last line).
 */
export function narrowLines(lines: string[], title: string): string[] {
  return lines.filter(
    (line, i) =>
      line.length < 3 && !(i === lines.length - 1 && (title === line || title.endsWith(` ${line}`))),
  );
}
