import { describe, expect, it, vi } from 'vitest';
import { markedDataset, markedSets } from '../bench/plain-folding.js';
import { oramaServiceRetriever, runEval } from '../src/eval/run-eval.js';
import { OramaSearchService } from '../src/search/orama-search-service.js';

// Short documents written for issue #24 in languages whose marks tell words apart.
const sets = markedSets();
// Each index asks the language detector in a worker thread: seconds under load.
vi.setConfig({ testTimeout: 180_000 });

async function indexOf(language: string): Promise<OramaSearchService> {
  const svc = new OramaSearchService();
  await svc.build(sets[language].docs.map((d) => ({ id: d.id, title: d.title, body: d.text })));
  await svc.languagesSettled();
  return svc;
}
const ids = (svc: OramaSearchService, query: string) =>
  svc.search({ query, limit: 10 }).hits.map((h) => h.id);

describe('languages the analyzer has no rules for', () => {
  it.each(['vietnamese', 'czech', 'polish'])(
    '%s: detected as itself (no other language’s stemmer or stop-words), and at least as good as plain case folding',
    async (language) => {
      const svc = await indexOf(language);
      expect(svc.analyzer.languages.state().fallback.latin).toBe(language);
      for (const unmarked of [false, true]) {
        const data = markedDataset(language, sets[language], unmarked);
        const ours = await runEval(data, oramaServiceRetriever(), { warmup: 0 });
        const plain = await runEval(data, oramaServiceRetriever({ tokenizer: { caseFoldingOnly: true } }), {
          warmup: 0,
        });
        expect(ours.ndcg_at_10).toBeGreaterThanOrEqual(plain.ndcg_at_10);
      }
    },
  );

  it('words that differ only by their marks stay apart; a query typed without marks still finds them, after the word itself', async () => {
    const vi = await indexOf('vietnamese');
    expect(ids(vi, 'bán')).toEqual(['vi-1']); // sells: not bàn (table), bạn (friend) or ban (board)
    expect(ids(vi, 'bạn')).toEqual(['vi-3']);
    const ban = ids(vi, 'ban');
    expect(ban[0]).toBe('vi-2'); // the word `ban` itself first
    expect(ban).toEqual(expect.arrayContaining(['vi-1', 'vi-3', 'vi-4']));
    expect(ids(vi, 'loi dang nhap')[0]).toBe('vi-7');
    const cs = await indexOf('czech');
    expect(ids(cs, 'být')).toEqual(['cs-2']);
    expect(ids(cs, 'byt')[0]).toBe('cs-1');
    expect(ids(cs, 'práva')).toEqual(['cs-11']);
    expect(ids(cs, 'pravá')).toEqual(['cs-10']);
    const pl = await indexOf('polish');
    expect(ids(pl, 'kąt')).toEqual(['pl-2']);
    expect(ids(pl, 'sąd')).toEqual(['pl-6']);
  });

  it('a document that says its language is analyzed in it, and snippets find the words typed without marks', async () => {
    const svc = new OramaSearchService();
    await svc.build([
      { id: 'A', title: 'Họp', body: 'Ban quản lý họp vào thứ hai.', language: 'vi' },
      {
        id: 'B',
        title: 'Bán hàng',
        body: 'Cửa hàng bán bàn gỗ và ghế nhựa với giá rẻ mỗi ngày.',
        language: 'vi',
      },
    ]);
    expect(ids(svc, 'bàn')).toEqual(['B']);
    const res = await svc.query({
      text: 'gia re',
      matchMode: 'simple',
      filters: {},
      sort: 'relevant',
      conjunctive: false,
      limit: 5,
      offset: 0,
      includeScores: false,
    });
    expect(res.results.map((r) => r.id)).toEqual(['B']);
    expect(res.results[0].snippet.text).toContain('giá rẻ');
  });
});

describe('prefixes and marks', () => {
  it('a prefix with a mark completes words written so; one without also completes words with marks', async () => {
    const svc = new OramaSearchService();
    await svc.build([
      { id: 'A', title: 'Café opening', body: 'The café opens at nine.' },
      { id: 'B', title: 'Cafeteria menu', body: 'Lunch in the cafeteria.' },
    ]);
    const prefix = (query: string) =>
      svc
        .search({ query, limit: 5, matchMode: 'raw' })
        .hits.map((h) => h.id)
        .sort();
    expect(prefix('café*')).toEqual(['A']);
    expect(prefix('cafe*')).toEqual(['A', 'B']);
  });
});

describe('languages with rules keep the marks that tell words apart', () => {
  it('Turkish: çam (pine) and cam (glass), şiş and sis', async () => {
    const tr = await indexOf('turkish');
    expect(tr.analyzer.languages.state().fallback.latin).toBe('turkish');
    expect(ids(tr, 'çam')).toEqual(['tr-2']);
    expect(ids(tr, 'cam')[0]).toBe('tr-3');
    expect(ids(tr, 'şiş')).toEqual(['tr-5']);
    expect(ids(tr, 'sis')[0]).toBe('tr-4');
  });

  it('Romanian: a word whose folded form is a stop-word is still a word (pește, fish; peste, over)', async () => {
    const ro = await indexOf('romanian');
    expect(ids(ro, 'pește')).toEqual(['ro-4']);
    expect(ids(ro, 'fața')).toEqual(['ro-2']);
    expect(ids(ro, 'parola gresita')).toEqual(['ro-5']);
  });

  it('Lithuanian: šuo is not taken for a stop-word', async () => {
    const lt = await indexOf('lithuanian');
    expect(ids(lt, 'šuo')).toEqual(['lt-1']);
  });
});
