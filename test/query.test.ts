import { closeEnough, correctWords, swapDistance, type SuggestVocabulary } from '../src/search/suggest.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseRawQuery, positiveText, MAX_DEPTH } from '../src/search/query-parser.js';
import { termGroup, prefixGroup, type Vocabulary } from '../src/search/expand.js';
import { LinkGraph, findRelated } from '../src/search/related.js';
import { openBacklog, type BacklogService, type BacklogItem } from '../src/index.js';
import { BacklogError } from '../src/errors.js';
import { DEMO_DIR } from './helpers.js';

function syntaxError(q: string): BacklogError {
  try {
    parseRawQuery(q);
  } catch (err) {
    expect(err).toBeInstanceOf(BacklogError);
    expect((err as BacklogError).code).toBe('QUERY_SYNTAX');
    return err as BacklogError;
  }
  throw new Error(`"${q}" parsed`);
}

describe('parseRawQuery', () => {
  it('parses words, phrases, prefixes, fields and negation', () => {
    expect(parseRawQuery('login')).toEqual({ kind: 'term', text: 'login', position: 0 });
    expect(parseRawQuery('"exact phrase" auth*')).toEqual({
      kind: 'implicit',
      children: [
        { kind: 'phrase', text: 'exact phrase', position: 0 },
        { kind: 'prefix', text: 'auth', position: 15 },
      ],
    });
    expect(parseRawQuery('title:login -draft')).toEqual({
      kind: 'implicit',
      children: [
        { kind: 'term', text: 'login', field: 'title', position: 6 },
        { kind: 'not', child: { kind: 'term', text: 'draft', position: 13 } },
      ],
    });
    expect(parseRawQuery('tag:(a OR b)')).toEqual({
      kind: 'or',
      children: [
        { kind: 'term', text: 'a', field: 'tags', position: 5 },
        { kind: 'term', text: 'b', field: 'tags', position: 10 },
      ],
    });
  });

  it('gives AND precedence over adjacency, and adjacency over OR', () => {
    const ast = parseRawQuery('a b AND c OR d');
    expect(ast).toMatchObject({
      kind: 'or',
      children: [
        {
          kind: 'implicit',
          children: [{ text: 'a' }, { kind: 'and', children: [{ text: 'b' }, { text: 'c' }] }],
        },
        { text: 'd' },
      ],
    });
  });

  it('treats lower-case operators, unknown fields and symbols as words', () => {
    expect(parseRawQuery('and')).toMatchObject({ kind: 'term', text: 'and' });
    expect(parseRawQuery('http://x.y')).toMatchObject({ kind: 'term', text: 'http://x.y' });
    expect(parseRawQuery('C++ 50%')).toMatchObject({
      kind: 'implicit',
      children: [{ text: 'C++' }, { text: '50%' }],
    });
    expect(parseRawQuery('a-b')).toMatchObject({ kind: 'term', text: 'a-b' });
  });

  it('reports invalid syntax with the position and a hint', () => {
    expect(syntaxError('(a OR b').details.position).toBe(0);
    expect(syntaxError('a OR').details.position).toBe(4);
    expect(syntaxError('say "hello').details.position).toBe(4);
    expect(syntaxError('title:').message).toMatch(/title: needs a value/);
    expect(syntaxError('AND a').details.position).toBe(0);
    expect(syntaxError('a ) b').details.position).toBe(2);
    expect(syntaxError('*').hint).toMatch(/letter before \*/);
    expect(syntaxError('()').details.position).toBe(0);
    expect(syntaxError('('.repeat(MAX_DEPTH + 2) + 'a' + ')'.repeat(MAX_DEPTH + 2)).message).toMatch(/deep/);
    expect(syntaxError('NOT '.repeat(100) + 'a').message).toMatch(/deep/);
  });

  it('positiveText keeps what snippets should highlight', () => {
    expect(positiveText(parseRawQuery('login -draft status:open "rate limit"'))).toBe('login   rate limit');
  });
});

/** True when one insertion, deletion or substitution turns a into b. */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
}

describe('term expansion', () => {
  const words = ['automat', 'alic', 'session', 'sync', 'implement', '56', '596'];
  const vocab: Vocabulary = {
    has: (t) => words.includes(t),
    docFreq: () => 1,
    startingWith: (p) => words.filter((w) => w.startsWith(p)),
    withinOneEdit: (t) => words.filter((w) => w !== t && oneEditApart(w, t)),
  };
  it('no typo or completion for a single CJK character; no typos in unspaced scripts at all', () => {
    const cjk: Vocabulary = {
      has: (t) => ['データベース', '同步'].includes(t),
      docFreq: () => 1,
      startingWith: (p) => ['データベース', '同步'].filter((w) => w.startsWith(p)),
      withinOneEdit: (t) => ['データベース'].filter((w) => w !== t && oneEditApart(w, t)),
    };
    const group = (term: string, script: 'han' | 'kana' | 'latin') =>
      termGroup({ term, surface: term, script }, undefined, 0, cjk).alternatives.map((a) => a.term);
    // データベーヌ is one edit from データベース: a typo in Latin terms would count, here it does not.
    expect(group('データベーヌ', 'kana')).toEqual(['データベーヌ']);
    expect(group('同', 'han')).toEqual(['同']);
    expect(group('同步', 'han')).toEqual(['同步']);
  });

  const alts = (t: string, surface?: string) =>
    termGroup({ term: t, surface }, undefined, 0b110, vocab).alternatives;

  it('a whole word counts fully; a partial tag/author match counts less, only in those fields', () => {
    expect(alts('auto')).toEqual([
      { term: 'auto', weight: 1, fields: undefined },
      { term: 'automat', weight: 0.5, fields: 0b110 },
    ]);
  });
  it('completes an unfinished word and its stem', () => {
    expect(alts('implementa', 'implementa').map((a) => a.term)).toEqual(['implementa', 'implement']);
  });
  it('corrects one typo in words of 5+ letters, never in numbers', () => {
    expect(alts('sesion').map((a) => a.term)).toContain('session');
    expect(alts('syn').map((a) => a.term)).toEqual(['syn', 'sync']); // completion, not a typo
    expect(alts('59').map((a) => a.term)).toEqual(['59']);
    expect(alts('5961').map((a) => a.term)).toEqual(['5961']);
  });
  it('prefix* counts every completion fully', () => {
    expect(prefixGroup('sy', undefined, vocab)?.alternatives).toEqual([
      { term: 'sync', weight: 1, fields: undefined },
    ]);
    expect(prefixGroup('zz', undefined, vocab)).toBeNull();
  });
});

describe('related items', () => {
  const item = (id: string, parent: string | null, references: string[] = [], body = ''): BacklogItem =>
    ({ id, parent_id: parent, references, body }) as BacklogItem;
  const items = [
    item('EPIC-1', null),
    item('TASK-1', 'EPIC-1', ['TASK-3']),
    item('TASK-2', 'TASK-1'),
    item('TASK-3', null, [], 'see TASK-4'),
    item('TASK-4', null),
  ];
  const graph = new LinkGraph(items, (r) => items.find((i) => i.id.toLowerCase() === r.toLowerCase())?.id);
  const all = new Set(['parent', 'children', 'references'] as const);

  it('follows parent, children and references (frontmatter and mentions) up to max_hops, no duplicates', () => {
    const one = findRelated([{ id: 'TASK-1', score: 4 }], graph, 1, all);
    expect(one.map((r) => [r.id, r.distance, r.relation, r.score])).toEqual([
      ['EPIC-1', 1, 'parent', 2],
      ['TASK-2', 1, 'children', 2],
      ['TASK-3', 1, 'references', 2],
    ]);
    const two = findRelated([{ id: 'TASK-1', score: 4 }], graph, 2, all);
    expect(two.find((r) => r.id === 'TASK-4')).toMatchObject({
      distance: 2,
      via: 'TASK-3',
      source: 'TASK-1',
      score: 4 / 3,
    });
    expect(new Set(two.map((r) => r.id)).size).toBe(two.length);
  });

  it('never returns a hit as related, and keeps the best score', () => {
    const r = findRelated(
      [
        { id: 'TASK-1', score: 4 },
        { id: 'TASK-2', score: 1 },
      ],
      graph,
      1,
      all,
    );
    expect(r.map((x) => x.id)).not.toContain('TASK-2');
    expect(r.find((x) => x.id === 'EPIC-1')?.source).toBe('TASK-1');
  });

  it('relations restrict the links followed', () => {
    expect(
      findRelated([{ id: 'TASK-1', score: 1 }], graph, 3, new Set(['parent'] as const)).map((r) => r.id),
    ).toEqual(['EPIC-1']);
  });
});

describe('searchUnified with the query features', () => {
  let service: BacklogService;
  beforeAll(async () => {
    service = await openBacklog({ dir: DEMO_DIR });
  });
  const search = (q: string, o = {}) => service.searchUnified(q, o);
  const ids = async (q: string, o = {}) =>
    (await service.searchUnified(q, { limit: 100, ...o })).results.map((r) => r.id);

  it('raw syntax errors surface as QUERY_SYNTAX with the position', async () => {
    try {
      await service.searchUnified('(sync', { match_mode: 'raw' });
      throw new Error('no error');
    } catch (err) {
      expect((err as BacklogError).toJSON()).toMatchObject({ code: 'QUERY_SYNTAX', position: 0 });
    }
  });

  it('the same characters are literal in simple mode', async () => {
    await expect(service.searchUnified('(sync "AND', {})).resolves.toBeDefined();
    expect(await ids('(sync')).toEqual(await ids('sync'));
  });

  it('phrases need the words in order; NOT alone lists everything else', async () => {
    expect(await ids('"rate limit"', { match_mode: 'raw' })).toContain('TASK-0001');
    expect(await ids('"limit rate"', { match_mode: 'raw' })).toEqual([]);
    const notSync = await ids('NOT sync', { match_mode: 'raw' });
    expect(notSync.length).toBeGreaterThan(10);
    expect(notSync).not.toContain('EPIC-0002');
  });

  it('conjunctive in raw mode turns adjacency into AND', async () => {
    const loose = await ids('laptop zapier', { match_mode: 'raw' });
    expect(loose).toEqual(expect.arrayContaining(['TASK-0011', 'TASK-0034']));
    expect(await ids('laptop zapier', { match_mode: 'raw', conjunctive: true })).toEqual([]);
  });

  it('filters apply to raw queries too', async () => {
    for (const id of await ids('sync OR billing', { match_mode: 'raw', types: 'epic' }))
      expect(id).toMatch(/^EPIC-/);
  });

  it('whole words rank above partial and typo matches', async () => {
    const res = (await search('session', { include_scores: true, limit: 50 })).results;
    const exact = res.find((r) => r.id === 'TASK-0006')!;
    const typo = (await search('sesion', { include_scores: true, limit: 50 })).results.find(
      (r) => r.id === 'TASK-0006',
    )!;
    expect(typo.score!).toBeLessThan(exact.score!);
  });

  it('group_by type counts every match and ranks inside each group', async () => {
    const res = await search('sync', { group_by: 'type', limit: 3 });
    const counts = Object.fromEntries(res.groups!.map((g) => [g.key, g.count]));
    expect(counts.task + counts.epic + counts.resource).toBe(res.total);
    for (const g of res.groups!) expect(g.results.length).toBe(Math.min(3, g.count));
    expect(res.groups![0].results[0].id).toBe(res.results[0].id);
  });

  it('include_scores gives lexical, vector and final', async () => {
    const r = (await search('sync', { include_scores: true })).results[0];
    expect(r.scores).toEqual({ lexical: r.score, vector: null, final: r.score });
  });

  it('include_related returns linked items with distance, via and a score below their source', async () => {
    const res = await search('Retry-After', { include_related: true, limit: 1 });
    expect(res.results[0].id).toBe('TASK-0002');
    const parent = res.related!.find((r) => r.id === 'TASK-0001')!;
    expect(parent).toMatchObject({ distance: 1, via: 'TASK-0002', source: 'TASK-0002', relation: 'parent' });
    await expect(service.searchUnified('sync', { include_related: true, max_hops: 4 })).rejects.toThrow(
      /max_hops/,
    );
  });
});

describe('did you mean: corrections from the vocabulary', () => {
  const words = ['database', 'failov', 'dialog', 'count', 'kanban', 'median'];
  const vocab: SuggestVocabulary = {
    has: (t) => words.includes(t),
    docFreq: (t) => (t === 'dialog' || t === 'count' ? 9 : 1),
    startingWith: (p) => words.filter((w) => w.startsWith(p)),
    withinEdits: (t, k) => words.filter((w) => w !== t && swapDistance(w, t) <= k),
  };
  const correct = (...ws: string[]) =>
    correctWords(
      ws.map((w) => ({ term: w, alternatives: [w], surface: w, script: 'latin' as const })),
      vocab,
    ).map((c) => c.term);

  it('a swap of two letters is one edit; fewer edits beat more documents', () => {
    expect(swapDistance('fialov', 'failov')).toBe(1);
    expect(swapDistance('fialov', 'dialog')).toBe(2);
    expect(correct('fialov', 'dtaabase', 'kanbna')).toEqual(['failov', 'database', 'kanban']);
  });

  it('one edit in a short word, a second only with the first letter kept; known words untouched', () => {
    expect(correct('account')).toEqual([null]); // count: two edits, and the first letter changed
    expect(correct('kanbn')).toEqual(['kanban']);
    expect(correct('medn')).toEqual([null]); // two edits in a four-letter word
    expect(correct('database', '2024', 'ab')).toEqual([]);
    expect(closeEnough('medicine', 'median')).toBe(false);
  });
});
