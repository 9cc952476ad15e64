import { describe, expect, it } from 'vitest';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { SNIPPET_CHARS, bestWindow, buildSnippet, toPlainText } from '../src/search/snippet.js';

const analyzer = new TextAnalyzer();
const terms = (q: string) => new Set(analyzer.queryTerms(q));

describe('snippets', () => {
  it('turns markdown into one line of plain text', () => {
    expect(
      toPlainText(
        '## Context\n\nSee **bold** and [the link](http://x.y)\n\n- item\n```ts\nconst a = 1;\n```',
      ),
    ).toBe('Context See bold and the link item const a = 1;');
  });

  it('centres the window on the densest cluster of query terms', () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(20);
    const text = `${filler} the offline sync queue drains on reconnect ${filler} sync again`;
    const win = bestWindow(text, analyzer, terms('offline sync queue'));
    expect(win.hits).toBe(3);
    expect(win.text).toContain('offline sync queue');
    expect(win.text.length).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    expect(win.text.startsWith('…')).toBe(true);
    expect(win.text.endsWith('…')).toBe(true);
  });

  it('is deterministic and short text is returned whole', () => {
    const a = bestWindow('short text about sync', analyzer, terms('sync'));
    expect(a).toEqual(bestWindow('short text about sync', analyzer, terms('sync')));
    expect(a.text).toBe('short text about sync');
  });

  it('uses the body when it matched, another matched field otherwise, else the start of the body', () => {
    const fields = {
      title: 'Login page',
      body: 'The form shows an error. '.repeat(10),
      tags: 'auth, security',
    };
    expect(buildSnippet(fields, analyzer, terms('error'), ['body']).field).toBe('body');
    const byTag = buildSnippet(fields, analyzer, terms('security'), ['tags']);
    expect(byTag).toMatchObject({ field: 'tags', text: 'auth, security', matched_fields: ['tags'] });
    const byTitle = buildSnippet(fields, analyzer, terms('login'), ['title']);
    expect(byTitle.field).toBe('body');
    expect(byTitle.text.startsWith('The form shows')).toBe(true);
    expect(
      buildSnippet({ title: 'Only a title', body: '' }, analyzer, terms('title'), ['title']),
    ).toMatchObject({ field: 'title', text: 'Only a title' });
  });
});
