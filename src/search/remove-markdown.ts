/**
 * remove-markdown 0.7.0 (MIT, Stian Grytøyr and contributors) as snippets call it (`gfm`, image alt text,
 * list leaders stripped), each expression skipped when the text lacks what it needs to match: the same
 * output (test/remove-markdown.test.ts compares it with the package). Its twenty passes over each
 * body were about a quarter of preparing a body for snippets; most bodies have no link, footnote or
 * inline code, and the link expression scanned a body without links from each `[` to its end.
 *
 * A guard tests the text as it is right before its expression: removing text never adds a character,
 * but can make two meet (`](` once a tag between them is gone).
 *
 * The expressions are remove-markdown's, under its license:
 *
 * The MIT License (MIT). Copyright (c) 2015 Stian Grytøyr. Permission is hereby granted, free of charge,
 * to any person obtaining a copy of this software and associated documentation files (the "Software"), to
 * deal in the Software without restriction, including without limitation the rights to use, copy, modify,
 * merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom
 * the Software is furnished to do so, subject to the following conditions: The above copyright notice and
 * this permission notice shall be included in all copies or substantial portions of the Software. THE
 * SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
 * LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
 * NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY,
 * WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
 * SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 */
export function removeMarkdown(md: string): string {
  // As the package does: a text the expressions cannot take (a stack overflow in one) stays as it is.
  try {
    return strip(md);
  } catch {
    return md;
  }
}

function strip(md: string): string {
  let output = md;
  // Horizontal rules (before list leaders, which would take their first dash).
  output = output.replace(/^ {0,3}((?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)/gm, '');
  output = output.replace(/^([\s\t]*)([*\-+]|\d+\.)\s+/gm, '$1');
  if (output.includes('\n==')) output = output.replace(/\n={2,}/g, '\n');
  if (output.includes('~')) output = output.replace(/~{3}.*\n/g, '').replace(/~~/g, '');
  if (output.includes('```'))
    output = output.replace(/```(?:.*)\n([\s\S]*?)```/g, (_, code: string) => code.trim());
  if (output.includes('<')) output = output.replace(/<[^>]*>/g, '');
  // No `m` flag: only a whole text of `==`/`--` (and white space) matches.
  if (/^[=-]{2}/.test(output)) output = output.replace(/^[=-]{2,}\s*$/g, '');
  if (output.includes('[^')) output = output.replace(/\[\^.+?\](: .*?$)?/g, '');
  if (output.includes(']: ')) output = output.replace(/\s{0,2}\[.*?\]: .*?$/g, '');
  if (output.includes('![')) output = output.replace(/!\[(.*?)\][[(].*?[\])]/g, '$1');
  if (/\]\s*[([]/.test(output)) output = output.replace(/\[([\s\S]*?)\]\s*[([](.*?)[)\]]/g, '$1');
  if (output.includes('>')) output = output.replace(/^(\n)?\s{0,3}>\s?/gm, '$1');
  if (output.includes(']: ')) output = output.replace(/^\s{1,2}\[(.*?)\]: (\S+)( ".*?")?\s*$/g, '');
  if (output.includes('#'))
    output = output.replace(
      /^(\n)?\s{0,}#{1,6}\s*( (.+))? +#+$|^(\n)?\s{0,}#{1,6}\s*( (.+))?$/gm,
      '$1$3$4$6',
    );
  if (output.includes('*')) output = output.replace(/([*]+)(\S)(.*?\S)??\1/g, '$2$3');
  if (output.includes('_')) output = output.replace(/(^|\W)([_]+)(\S)(.*?\S)??\2($|\W)/g, '$1$3$4$5');
  if (output.includes('```')) output = output.replace(/(`{3,})(.*?)\1/gm, '$2');
  if (output.includes('`')) output = output.replace(/`(.+?)`/g, '$1');
  if (output.includes('~')) output = output.replace(/~(.*?)~/g, '$1');
  return output;
}
