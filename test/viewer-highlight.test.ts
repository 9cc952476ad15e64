/** The viewer's escaping, highlighting and markdown rendering (pure parts, run in Node). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, highlightHtml, highlightTerms } from '../viewer/src/highlight.js';
import { markdownToHtml } from '../viewer/src/markdown-html.js';
import { DEFAULT_TYPES, parseState, serializeState } from '../viewer/src/state-url.js';
import {
  NATIVE_VOCABULARY,
  parentLabel,
  selectedKinds,
  spotlightKinds,
  toggleKind,
  vocabularyOf,
} from '../viewer/src/vocabulary.js';

const stripMarks = (html: string) => html.replace(/<mark class="hl">|<\/mark>/g, '');

describe('highlightHtml', () => {
  it('escapes first, then marks the query words', () => {
    const html = highlightHtml('<img src=x onerror=alert(1)> rate-limit the login', 'login rate limit');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('<mark class="hl">rate-limit</mark>');
    expect(html).toContain('<mark class="hl">login</mark>');
  });

  it('marks inflected forms through a stem-like prefix', () => {
    expect(highlightTerms('limiting failed sync')).toEqual(['limit', 'fail', 'sync']);
    expect(highlightHtml('The limiter limits', 'limiting')).toBe(
      'The <mark class="hl">limiter</mark> <mark class="hl">limits</mark>',
    );
  });

  it('marks words in other scripts', () => {
    expect(highlightHtml('Синхронизация заметок', 'синхронизации')).toBe(
      '<mark class="hl">Синхронизация</mark> заметок',
    );
  });

  it('marks whole words in Chinese and Thai, never part of a word or of a character cluster', () => {
    // 同步 is a word of the text; 同 alone inside 同学 is not the query word.
    expect(highlightHtml('离线同步在登录后失败', '同步')).toBe(
      '离线<mark class="hl">同步</mark>在登录后失败',
    );
    expect(highlightHtml('同学们', '同步')).toBe('同学们');
    expect(highlightHtml('北京大学的用户', '北京')).toBe('<mark class="hl">北京</mark>大学的用户');
    // Thai: ข้อมูล (data) is marked whole, with its vowel and tone marks; มูล inside it is not a word.
    expect(highlightHtml('การซิงค์ข้อมูลล้มเหลว', 'ข้อมูล')).toBe('การซิงค์<mark class="hl">ข้อมูล</mark>ล้มเหลว');
    expect(highlightHtml('การซิงค์ข้อมูลล้มเหลว', 'มูล')).toBe('การซิงค์ข้อมูลล้มเหลว');
    expect(highlightTerms('ข้อมูล 同步 hindi')).toEqual(['ข้อมูล', 'hind', '同步']);
  });

  it('never splits an entity of the escaped text', () => {
    expect(highlightHtml('say "limit" & <go>', 'limit')).toBe(
      'say <mark class="hl">&quot;limit&quot;</mark> &amp; &lt;go&gt;',
    );
    expect(highlightHtml('a < b', 'lt')).toBe('a &lt; b');
  });

  it('property: the only markup added is <mark>, and the text stays escaped and whole', () => {
    const word = fc.constantFrom(
      'lt',
      'gt',
      'amp',
      'quot',
      'limit',
      'img',
      'mark',
      'hl',
      '39',
      'x',
      'Sync',
      'кот',
    );
    const text = fc
      .array(
        fc.oneof(
          word,
          fc.constantFrom('<', '>', '&', '"', "'", ' ', '-', ';', '#', '<mark class="hl">'),
          fc.string(),
        ),
        {
          maxLength: 30,
        },
      )
      .map((parts) => parts.join(''));
    const query = fc
      .array(fc.oneof(word, fc.string({ maxLength: 6 })), { maxLength: 4 })
      .map((w) => w.join(' '));
    fc.assert(
      fc.property(text, query, (t, q) => {
        const html = highlightHtml(t, q);
        expect(stripMarks(html)).toBe(escapeHtml(t));
        const tags = html.match(/<[^>]*>/g) ?? [];
        expect(tags.every((tag) => tag === '<mark class="hl">' || tag === '</mark>')).toBe(true);
        // Balanced, not nested.
        let open = 0;
        for (const tag of tags) {
          open += tag === '</mark>' ? -1 : 1;
          expect(open === 0 || open === 1).toBe(true);
        }
        expect(open).toBe(0);
        // No entity cut by a tag: every & starts a whole entity.
        for (const m of stripMarks(html).matchAll(/&/g))
          expect(stripMarks(html).slice(m.index)).toMatch(/^&(amp|lt|gt|quot|#39);/);
        expect(html).not.toMatch(/&[#a-z0-9]*<\/?mark/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('markdownToHtml', () => {
  it('shows raw HTML of the file as text', () => {
    const html = markdownToHtml(
      '# Title <img src=x onerror=alert(1)>\n\nText <b>bold</b> <img src=x onerror=alert(1)>\n\n<div onclick="x()">block</div>\n',
    );
    expect(html).not.toMatch(/<img|<b>|<div/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&lt;div onclick=&quot;x()&quot;&gt;block&lt;/div&gt;');
    expect(html).toContain('<h1>');
  });

  it('hides HTML comments standing alone (Backlog.md section markers), escapes them in mixed HTML', () => {
    const html = markdownToHtml(
      '<!-- SECTION:DESCRIPTION:BEGIN -->\nText\n<!-- SECTION:DESCRIPTION:END -->\n',
    );
    expect(html).not.toContain('SECTION');
    expect(html).toContain('Text');
    expect(markdownToHtml('<!-- note --><img src=x onerror=alert(1)>\n')).toContain('&lt;img');
  });

  it('renders markdown: headings, lists, code, tables, links', () => {
    const html = markdownToHtml(
      '## H\n\n- a\n- b\n\n```js\nx < 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[x](https://e.com)',
    );
    expect(html).toContain('<h2>H</h2>');
    expect(html).toContain('<li>a</li>');
    expect(html).toContain('x &lt; 1');
    expect(html).toContain('<table>');
    expect(html).toContain('<a href="https://e.com">x</a>');
  });
});

describe('URL state', () => {
  it('round-trips every field and leaves defaults out of the URL', () => {
    const state = parseState(
      '?view=board&types=task,document&state=archived&status=open&parent=EPIC-0001&tag=auth&item=TASK-0001&q=login&qtypes=epic&qsort=recent',
    );
    expect(state).toEqual({
      view: 'board',
      types: ['task', 'document'],
      state: 'archived',
      status: 'open',
      parent: 'EPIC-0001',
      tag: 'auth',
      item: 'TASK-0001',
      q: 'login',
      qtypes: ['epic'],
      qsort: 'recent',
    });
    expect(parseState(serializeState(state, '/'))).toEqual(state);
    expect(serializeState(parseState(''), '/')).toBe('/');
    expect(parseState('?types=all').types).toEqual([]);
    expect(parseState('?view=nope&types=bogus').view).toBe('list');
  });

  it('reads older links (`epic=`) and keeps only known states, `all` winning', () => {
    expect(parseState('?epic=EPIC-0002').parent).toBe('EPIC-0002');
    expect(serializeState(parseState('?epic=EPIC-0002'), '/')).toBe('?parent=EPIC-0002');
    expect(parseState('?state=completed,bogus,draft').state).toBe('draft,completed');
    expect(parseState('?state=archived,all').state).toBe('all');
    expect(parseState('?state=bogus').state).toBe('');
    expect(parseState('').state).toBe('');
  });
});

describe('vocabulary', () => {
  const backlogMd = vocabularyOf({
    project: 'Backlog.md',
    format: 'backlog-md',
    kinds: [
      { type: 'task', label: 'Task', plural: 'Tasks' },
      { type: 'document', label: 'Document', plural: 'Documents' },
      { type: 'decision', label: 'Decision', plural: 'Decisions' },
      { type: 'milestone', label: 'Milestone', plural: 'Milestones' },
      { type: 'resource', label: 'File', plural: 'Other files' },
    ],
    states: ['active', 'draft', 'completed', 'archived'],
    parent: 'parent task',
    example_ids: ['BACK-1'],
  });

  it("falls back to the native format's words for a server without a vocabulary", () => {
    expect(vocabularyOf(undefined)).toEqual(NATIVE_VOCABULARY);
    expect(parentLabel(NATIVE_VOCABULARY)).toBe('Epic');
    expect(parentLabel(backlogMd)).toBe('Parent task');
  });

  it('turns kinds on and off: tasks by default, every kind is "all", never none', () => {
    expect(selectedKinds(backlogMd, DEFAULT_TYPES)).toEqual(['task']);
    expect(toggleKind(backlogMd, DEFAULT_TYPES, 'document')).toEqual(['task', 'document']);
    expect(toggleKind(backlogMd, ['task', 'document'], 'document')).toEqual(DEFAULT_TYPES);
    expect(toggleKind(backlogMd, DEFAULT_TYPES, 'task')).toEqual(DEFAULT_TYPES);
    expect(toggleKind(backlogMd, ['task', 'document', 'decision', 'milestone'], 'resource')).toEqual([]);
    expect(toggleKind(NATIVE_VOCABULARY, [], 'resource')).toEqual(DEFAULT_TYPES);
    expect(toggleKind(NATIVE_VOCABULARY, DEFAULT_TYPES, 'epic')).toEqual(['task']);
  });

  it("leaves `resource` out of the spotlight's chips where documents are kinds of their own", () => {
    expect(spotlightKinds(backlogMd).map((k) => k.type)).toEqual([
      'task',
      'document',
      'decision',
      'milestone',
    ]);
    expect(spotlightKinds(NATIVE_VOCABULARY).map((k) => k.type)).toEqual(['task', 'epic', 'resource']);
  });
});
