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

  it('folds ё to е and Latin accents', () => {
    expect(analyzer.queryTerms('ёлка')).toEqual(analyzer.queryTerms('елка'));
    expect(analyzer.queryTerms('café')).toEqual(['cafe']);
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
