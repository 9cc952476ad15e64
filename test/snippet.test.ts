import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextAnalyzer } from '../src/search/tokenizer.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';
import { SNIPPET_CHARS, bestWindow, buildSnippet, plainBody, toPlainText } from '../src/search/snippet.js';
import type { SearchDocument, SearchQuery } from '../src/search/types.js';

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

describe('the best window', () => {
  /** The plain definition: every match starts a window; the most distinct terms win, the earliest on ties. */
  const reference = (text: string, query: Set<string>, width: number) => {
    const runs = analyzer.runs(text).filter((r) => r.terms.some((t) => query.has(t)));
    let best = { hits: 0, at: 0 };
    runs.forEach((r, i) => {
      const seen = new Set<string>();
      for (let j = i; j < runs.length && runs[j].end - r.start <= width; j++)
        for (const t of runs[j].terms) if (query.has(t)) seen.add(t);
      if (seen.size > best.hits) best = { hits: seen.size, at: r.start };
    });
    return best;
  };
  const vocab = [
    'sync',
    'queue',
    'offline',
    'drain',
    'retry',
    'FeatureStore',
    'lorem',
    'ipsum',
    'dolor',
    'x',
  ];

  it('is the window with the most distinct query terms, the earliest of equals', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...vocab, 'a-very-long-compound-word-that-goes-on'), { maxLength: 200 }),
        fc.array(fc.constantFrom(...vocab, 'feature', 'store', 'compound', 'missing'), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: 10, max: 140 }),
        (words, q, width) => {
          const text = words.join(' ');
          const query = terms(q.join(' '));
          const win = bestWindow(text, analyzer, query, width);
          const want = reference(text, query, width);
          expect({ hits: win.hits, at: win.hits ? win.at : 0 }).toEqual(want);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('snippets in scripts without spaces', () => {
  const wordBounds = (text: string) => {
    const bounds = new Set<number>([0, text.length]);
    for (const s of new Intl.Segmenter('en', { granularity: 'word' }).segment(text)) {
      bounds.add(s.index);
      bounds.add(s.index + s.segment.length);
    }
    return bounds;
  };
  /** The window's offsets in `text` (ellipses removed), checked to be word boundaries. */
  const expectCutAtWords = (text: string, window: string) => {
    const inner = window.replace(/^…/, '').replace(/…$/, '');
    const start = text.indexOf(inner);
    expect(start).toBeGreaterThanOrEqual(0);
    const bounds = wordBounds(text);
    expect(bounds.has(start)).toBe(true);
    expect(bounds.has(start + inner.length)).toBe(true);
    // Never a mark (a Thai vowel or tone, a virama) right after a cut.
    expect(text.slice(start + inner.length)).not.toMatch(/^\p{M}/u);
    expect(inner).not.toMatch(/^\p{M}/u);
  };

  it('Chinese: the window starts and ends between words', () => {
    const filler = '我们的系统在周末进行维护升级工作，用户可以继续浏览但是不能提交新的订单。'.repeat(4);
    const text = `${filler}离线同步队列在会话过期以后停止工作。${filler}`;
    const win = bestWindow(text, analyzer, terms('同步队列'));
    expect(win.hits).toBe(2);
    expect(win.text).toContain('同步队列');
    expect(win.text.startsWith('…') && win.text.endsWith('…')).toBe(true);
    expectCutAtWords(text, win.text);
  });

  it('Japanese: the window starts and ends between words', () => {
    const filler =
      'システムは週末にメンテナンスを行い、利用者は閲覧できるが新しい注文は送信できない。'.repeat(4);
    const text = `${filler}オフラインの同期キューはセッションが切れると止まる。${filler}`;
    const win = bestWindow(text, analyzer, terms('同期 キュー'));
    expect(win.text).toContain('同期キュー');
    expectCutAtWords(text, win.text);
  });

  it('Thai: the window never cuts a word or its vowel and tone marks', () => {
    const filler = 'ระบบจะปิดปรับปรุงในวันหยุดสุดสัปดาห์และผู้ใช้ยังคงดูข้อมูลได้แต่ไม่สามารถส่งคำสั่งซื้อใหม่ได้'.repeat(3);
    const text = `${filler}การซิงค์ข้อมูลล้มเหลวเมื่อเซสชันหมดอายุ${filler}`;
    const win = bestWindow(text, analyzer, terms('การซิงค์'));
    expect(win.hits).toBeGreaterThan(0);
    expectCutAtWords(text, win.text);
  });

  it('a title cut for want of any other text keeps its last character whole', () => {
    const title = `${'ก้'.repeat(59)}👩‍👩‍👧‍👦 and more`;
    const snippet = buildSnippet({ title, body: '' }, analyzer, terms('nothing'), ['title']);
    expect(snippet.text.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    expect(title.startsWith(snippet.text)).toBe(true);
    // Not inside the family emoji (a ZWJ sequence) nor between ก and its mark.
    const rest = title.slice(snippet.text.length);
    expect(rest).not.toMatch(/^[\p{M}\u200d\udc00-\udfff]/u);
  });
});

describe('snippets through the index', () => {
  const filler = 'The build pipeline runs every night and reports to the channel. '.repeat(4);
  // Backlog.md's shape: a section heading and its markers before the text.
  const docs: SearchDocument[] = Array.from({ length: 150 }, (_, i) => ({
    id: `TASK-${i}`,
    title: `Task ${i}`,
    body: `## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nNightly report ${i}. ${filler}The ${i % 3 ? 'linux' : 'windows'} runner ${i % 2 ? 'crashes' : 'hangs'} at step ${i}.\n<!-- SECTION:DESCRIPTION:END -->`,
    tags: ['bug', i % 3 ? 'linux' : 'windows'],
  }));
  const query = (text: string): SearchQuery => ({
    text,
    matchMode: 'simple',
    filters: {},
    sort: 'relevant',
    conjunctive: false,
    limit: 20,
    offset: 0,
    includeScores: false,
  });

  it('depend on the query, the ranking and the document, not on which bodies were prepared before', async () => {
    // The CLI's first query ran before the bodies were prepared for snippets with `--embeddings none`,
    // and after with the model loading: a query word no prepared body had yet got no mark, so a
    // body that matched showed its tags instead (BACK-74 on the Backlog.md folder).
    const cold = new OramaSearchService();
    await cold.build(docs);
    const first = await cold.query(query('windows crash'));
    const warm = new OramaSearchService();
    await warm.build(docs);
    await warm.snippetsReady();
    const later = await warm.query(query('windows crash'));
    expect(first.results.map((r) => r.id)).toEqual(later.results.map((r) => r.id));
    expect(first.results.map((r) => r.snippet)).toEqual(later.results.map((r) => r.snippet));
    for (const r of first.results) {
      expect(r.snippet.field).toBe('body');
      expect(r.snippet.text).toMatch(/windows|crashes/);
    }
  });

  it('from the start of a body, skip its leading heading; a match in the heading keeps it', async () => {
    const service = new OramaSearchService();
    await service.build(docs);
    const top = (await service.query(query('nightly report 7'))).results[0];
    expect(top.id).toBe('TASK-7');
    expect(top.snippet.text.startsWith('Nightly report 7.')).toBe(true);
    // No word matched the body: its start, past the heading.
    const byTitle = (await service.query(query('task'))).results[0];
    expect(byTitle.snippet.text).toMatch(/^Nightly report \d+\./);
    expect((await service.query(query('description'))).results[0].snippet.text).toMatch(
      /^Description Nightly/,
    );
  });

  it('plainBody: where the text after the leading headings and markers starts', () => {
    const md =
      '## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nFix the **crash**.\n<!-- SECTION:DESCRIPTION:END -->';
    const { text, lead } = plainBody(md);
    expect(text.slice(lead)).toBe('Fix the crash.');
    expect(plainBody('# Title\n### Context\nBody text').lead).toBe('Title Context '.length);
    expect(plainBody('Body first\n## Later heading\nmore').lead).toBe(0);
    expect(plainBody('## Only a heading\n').lead).toBe(0);
    expect(plainBody('#hashtag is not a heading').lead).toBe(0);
  });
});
