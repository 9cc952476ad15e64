import { describe, expect, it } from 'vitest';
import { TextAnalyzer, idKey, normalizeId } from '../src/search/tokenizer.js';

const analyzer = new TextAnalyzer();

describe('TextAnalyzer', () => {
  it('stems English and drops English stop-words', () => {
    expect(analyzer.queryTerms('The failures of the sync')).toEqual(['failur', 'sync']);
    expect(analyzer.queryTerms('failed')).toEqual(analyzer.queryTerms('fail'));
  });

  it('indexes Cyrillic words with the Russian stemmer, in the same index as Latin ones', () => {
    expect(analyzer.queryTerms('переводы интерфейса')).toEqual(['перевод', 'интерфейс']);
    expect(analyzer.queryTerms('перевод')).toEqual(analyzer.queryTerms('переводов'));
    expect(analyzer.indexTerms('Sync и синхронизация')).toEqual(['sync', 'синхронизац']);
  });

  it('folds ё to е; Latin words keep their marks and index their folded twin too', () => {
    expect(analyzer.queryTerms('ёлка')).toEqual(analyzer.queryTerms('елка'));
    expect(analyzer.queryTerms('café')).toEqual(['café']);
    expect(analyzer.indexTerms('café')).toEqual(['café', '~cafe']);
    // Typed without its mark, the word also matches the twin (as an expansion, below `cafe` itself).
    expect(analyzer.queryWords('cafe')[0]).toMatchObject({ alternatives: ['cafe'], folded: ['~cafe'] });
    expect(analyzer.queryWords('café')[0].folded).toBeUndefined();
  });

  it('expands camelCase, snake_case and hyphenated compounds into parts plus the joined word', () => {
    expect(analyzer.indexTerms('FeatureStore')).toEqual(['featur', 'store', 'featurestor']);
    expect(analyzer.indexTerms('sync_queue')).toEqual(['sync', 'queue', 'syncqueu']);
    expect(analyzer.indexTerms('rate-limit')).toEqual(['rate', 'limit', 'ratelimit']);
    // The query side searches the parts, so `feature store` and `FeatureStore` find each other.
    expect(analyzer.queryTerms('FeatureStore')).toEqual(analyzer.queryTerms('feature store'));
    // A query written as one word matches the joined form.
    expect(analyzer.indexTerms('FeatureStore')).toContain(analyzer.queryTerms('featurestore')[0]);
  });

  it('keeps ids whole, with one key for every spelling', () => {
    expect(analyzer.queryTerms('TASK-0042')).toEqual(['task-42']);
    expect(analyzer.indexTerms('see task-42.')).toContain('task-42');
    expect(analyzer.indexTerms('TASK-0042')).toEqual(['task-42', 'task', '42']);
    expect(normalizeId('EPIC', '007')).toBe('epic-7');
    expect(idKey('task 42')).toBe('task-42');
    expect(idKey('TASK-0042')).toBe('task-42');
    expect(idKey('mcp://backlog/Resources/A.md')).toBe('mcp://backlog/resources/a.md');
  });

  it('keeps numbers unstemmed and distinct', () => {
    expect(analyzer.queryTerms('596 56')).toEqual(['596', '56']);
  });

  it('treats syntax characters as separators, never as errors', () => {
    expect(analyzer.queryTerms('50% C++ (a_b) "quoted" *star*')).toEqual([
      '50',
      'c',
      'a',
      'b',
      'quot',
      'star',
    ]);
    expect(analyzer.queryTerms('')).toEqual([]);
    expect(analyzer.queryTerms('!!! ??? ...')).toEqual([]);
  });

  it('reports run offsets into the original text', () => {
    const text = 'Fix the WebSocket reconnect';
    const runs = analyzer.runs(text);
    expect(runs.map((r) => text.slice(r.start, r.end))).toEqual(['Fix', 'WebSocket', 'reconnect']);
  });

  it('is configurable: no stemming, custom stop-words, English only', () => {
    const plain = new TextAnalyzer({ stemming: false, stopWords: ['foo'] });
    expect(plain.queryTerms('Foo failures the')).toEqual(['failures', 'the']);
    const english = new TextAnalyzer({ languages: ['english'] });
    expect(english.queryTerms('переводы')).toEqual(['переводы']);
  });
});

describe('TextAnalyzer: every script', () => {
  const words = (text: string, language?: Parameters<TextAnalyzer['runs']>[1]) =>
    analyzer.runs(text, language).map((r) => text.slice(r.start, r.end));

  it('Han: Chinese is cut into words by the dictionary (stop-words left out)', () => {
    expect(words('我们今天去北京大学看书')).toEqual(['今天', '北京', '大学', '看书']);
    expect(analyzer.indexTerms('会话过期后同步队列停止')).toEqual(['会话', '过期', '同步', '队列', '停止']);
  });

  it('Hiragana and Katakana: Japanese words, particles dropped, half-width Katakana made full-width', () => {
    expect(words('同期処理の問題を修正する', 'japanese')).toEqual(['同期', '処理', '問題', '修正']);
    expect(words('ログイン画面', 'japanese')).toEqual(['ログイン', '画面']);
    expect(analyzer.indexTerms('ﾃｽﾄ')).toEqual(analyzer.indexTerms('テスト'));
  });

  it('Hangul: words by spaces, particles and 하다 endings cut', () => {
    expect(analyzer.indexTerms('동기화를 수정했습니다', 'korean')).toEqual(['동기화', '수정']);
    expect(analyzer.queryTerms('서버가')).toEqual(analyzer.queryTerms('서버로'));
    // Two syllables stay whole: 아이 is not 아 + 이.
    expect(analyzer.indexTerms('아이', 'korean')).toEqual(['아이']);
  });

  it('Thai: words by the dictionary, vowel and tone marks kept inside them', () => {
    expect(words('การซิงค์ข้อมูลล้มเหลว')).toEqual(['การ', 'ซิงค์', 'ข้อมูล', 'ล้ม', 'เหลว']);
  });

  it('Devanagari: vowel signs and viramas stay in the word; Hindi stemming', () => {
    expect(words('हिन्दी भाषा में खोज')).toEqual(['हिन्दी', 'भाषा', 'में', 'खोज']);
    expect(analyzer.queryTerms('भाषाओं')).toEqual(analyzer.queryTerms('भाषा'));
    expect(analyzer.indexTerms('हिन्दी')[0]).toMatch(/^हिन्द/);
  });

  it('Arabic: diacritics and tatweel removed, letters kept, Arabic stemming', () => {
    expect(analyzer.queryTerms('الْكِتَابُ')).toEqual(analyzer.queryTerms('الكتاب'));
    expect(analyzer.queryTerms('الكـــتاب')).toEqual(analyzer.queryTerms('الكتاب'));
    expect(analyzer.queryTerms('المدرسة')).toEqual(analyzer.queryTerms('مدرسة'));
    expect(words('البحث باللغة العربية')).toEqual(['البحث', 'باللغة', 'العربية']);
  });

  it('Hebrew: words with their points kept (NFC), no stemming', () => {
    expect(words('שָׁלוֹם עולם')).toEqual(['שָׁלוֹם', 'עולם']);
    expect(analyzer.indexTerms('שָׁלוֹם')).toEqual(['שָׁלוֹם'.normalize('NFKC')]);
  });

  it('Greek: accents and final sigma folded, Greek stemming; single letters are symbols', () => {
    expect(analyzer.queryTerms('ΚΕΊΜΕΝΑ')).toEqual(analyzer.queryTerms('κείμενα'));
    expect(analyzer.queryTerms('ΟΔΟΣ')).toEqual(analyzer.queryTerms('οδός'));
    expect(analyzer.indexTerms('NF-κB')).toEqual(['nf', 'κ', 'b', 'nfκb']);
  });

  it('Latin with accents: found typed either way; German and Spanish stemmed in their documents', () => {
    expect(analyzer.queryTerms('Café DÉJÀ')).toEqual(['café', 'déjà']);
    expect(analyzer.indexTerms('Café DÉJÀ')).toEqual(['café', '~cafe', 'déjà', '~deja']);
    expect(analyzer.queryWords('cafe deja').flatMap((w) => w.folded)).toEqual(['~cafe', '~deja']);
    expect(analyzer.indexTerms('Häuser', 'german')).toEqual(analyzer.indexTerms('Haus', 'german'));
    expect(analyzer.indexTerms('canciones', 'spanish')).toEqual(analyzer.indexTerms('canción', 'spanish'));
  });

  it('mixed scripts in one sentence: each word by its own script', () => {
    const text = 'Fix 同步 in the Синхронизация of ข้อมูล and βoxidation';
    expect(words(text)).toEqual(['Fix', '同步', 'Синхронизация', 'ข้อมูล', 'βoxidation']);
    // A word of mostly Latin letters is Latin (English-stemmed), even if it starts with a Greek one.
    expect(analyzer.indexTerms('βoxidation')).toEqual(['βoxid']);
  });

  it('ids and compounds inside CJK text stay whole', () => {
    const text = '詳細はTASK-0042を参照。FeatureStoreとsync_queueを見直す';
    expect(words(text, 'japanese')).toEqual([
      '詳細',
      'TASK-0042',
      '参照',
      'FeatureStore',
      'sync_queue',
      '見直す',
    ]);
    expect(analyzer.indexTerms(text, 'japanese')).toEqual(
      expect.arrayContaining(['task-42', 'featur', 'store', 'featurestor', 'sync', 'queue', 'syncqueu']),
    );
    expect(analyzer.queryTerms('TASK-0042を参照')).toEqual(['task-42', '参照']);
  });

  it('a query word is analyzed in every language of its script that the index holds', () => {
    const mixed = new TextAnalyzer();
    mixed.languages.count('english', 1);
    mixed.languages.count('german', 1);
    expect(mixed.queryWords('Häuser')[0].alternatives).toEqual(['häuser', 'haus']);
    // A phrase is matched in one language at a time.
    expect(mixed.sequences('die Häuser')).toEqual([['die', 'häuser'], ['haus']]);
  });
});
