import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stemmer as russianStemmer } from '@orama/stemmers/russian';
import { stopwords as englishStopWords } from '@orama/stopwords/english';
import { stopwords as russianStopWords } from '@orama/stopwords/russian';
import { idKey, normalizeId } from '../storage/ids.js';

export { idKey, normalizeId };

export const LANGUAGES = ['english', 'russian'] as const;
export type Language = (typeof LANGUAGES)[number];

export interface TokenizerSettings {
  /**
   * Languages whose stemmer and stop-words apply. Each word picks its language by script:
   * Cyrillic words use Russian, every other word English. A language left out is only lower-cased.
   * Default: both.
   */
  languages: Language[];
  /** Reduce words to their stem (`failures` -> `failur`, `переводы` -> `перевод`). Default true. */
  stemming: boolean;
  /** `true`: the built-in lists of `languages`; a list: exactly these words; `false`: keep every word. */
  stopWords: boolean | string[];
}

export const DEFAULT_TOKENIZER_SETTINGS: TokenizerSettings = {
  languages: ['english', 'russian'],
  stemming: true,
  stopWords: true,
};

/** A run of text that forms one word or one compound (`FeatureStore`, `sync_queue`, `TASK-0042`). */
export interface WordRun {
  start: number;
  end: number;
  /** Normalized terms the run indexes as (parts, and the joined compound / the whole id). */
  terms: string[];
  /** Word positions the run takes in a query-side sequence (its parts; 1 for an id). */
  span: number;
}

interface CompoundTerms {
  terms: string[];
  span: number;
}

/**
 * One regex finds every run, left to right:
 * 1. an id: letters, a hyphen, digits (`TASK-0042`, `task-12.01`), kept whole;
 * 2. a word or a compound joined by `-` or `_` (`rate-limit`, `sync_queue`, `FeatureStore`).
 */
const RUN = /([A-Za-z]{2,})-(\d+(?:\.\d+)*)(?![\p{L}\p{N}])|[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*/gu;
/** Parts of a compound: upper-case acronyms, capitalized or lower-case words, digit runs. */
const PART = /\p{Lu}+(?!\p{Ll})|\p{Lu}?[\p{Ll}\p{M}]+|\p{N}+|\p{L}+/gu;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const COMBINING_MARKS = /\p{M}/gu;
const CACHE_LIMIT = 200_000;

/**
 * The analyzer shared by indexing, querying and snippets. It is plain functions over settings,
 * with a bounded cache of word -> term because stemming dominates indexing time.
 */
export class TextAnalyzer {
  readonly settings: TokenizerSettings;
  private readonly stopWordSet: Set<string>;
  private readonly cache = new Map<string, string>();
  private readonly runCache = new Map<string, CompoundTerms>();
  private readonly queryRunCache = new Map<string, CompoundTerms>();

  constructor(settings: Partial<TokenizerSettings> = {}) {
    this.settings = { ...DEFAULT_TOKENIZER_SETTINGS, ...settings };
    this.stopWordSet = new Set(this.resolveStopWords());
  }

  private resolveStopWords(): string[] {
    const { stopWords, languages } = this.settings;
    if (stopWords === false) return [];
    if (Array.isArray(stopWords)) return stopWords.map((w) => w.toLowerCase());
    const lists: string[] = [];
    if (languages.includes('english')) lists.push(...englishStopWords);
    if (languages.includes('russian')) lists.push(...russianStopWords);
    return lists;
  }

  /** One word -> its term: lower-case, accents folded (Latin only), stop-word removed (''), stemmed. */
  normalizeWord(word: string): string {
    const cached = this.cache.get(word);
    if (cached !== undefined) return cached;
    const term = this.computeTerm(word);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(word, term);
    return term;
  }

  /** Lower-case, `ё` -> `е` for Cyrillic, accents folded for the rest: a word as indexed, before stemming. */
  fold(word: string): string {
    const w = word.toLowerCase();
    return CYRILLIC.test(w) ? w.replace(/ё/g, 'е') : w.normalize('NFKD').replace(COMBINING_MARKS, '');
  }

  private computeTerm(word: string): string {
    const w = this.fold(word);
    const cyrillic = CYRILLIC.test(w);
    if (this.stopWordSet.has(w)) return '';
    if (!this.settings.stemming || /^\p{N}+$/u.test(w)) return w;
    const language: Language = cyrillic ? 'russian' : 'english';
    if (!this.settings.languages.includes(language)) return w;
    return language === 'russian' ? russianStemmer(w) : englishStemmer(w);
  }

  /**
   * Every run of `text` with the terms it is indexed under. A compound indexes its parts and its
   * joined form, so `FeatureStore`, `feature-store` and `feature store` find each other.
   */
  runs(text: string, forQuery = false): WordRun[] {
    const out: WordRun[] = [];
    for (const m of text.matchAll(RUN)) {
      const start = m.index ?? 0;
      const end = start + m[0].length;
      const { terms, span } =
        m[1] !== undefined
          ? { terms: this.idTerms(m[1], m[2], forQuery), span: 1 }
          : this.cachedCompoundTerms(m[0], forQuery);
      if (terms.length > 0) out.push({ start, end, terms, span });
    }
    return out;
  }

  private idTerms(prefix: string, numbers: string, forQuery: boolean): string[] {
    const id = normalizeId(prefix, numbers);
    if (forQuery) return [id];
    // The parts too, so `covid 19` still finds `COVID-19`; the id itself stays one term.
    const terms = [id];
    const p = this.normalizeWord(prefix);
    if (p) terms.push(p);
    for (const n of numbers.split('.')) terms.push(String(Number.parseInt(n, 10)));
    return terms;
  }

  /** Runs repeat (the same words over and over), so their terms are cached like single words. */
  private cachedCompoundTerms(run: string, forQuery: boolean): CompoundTerms {
    const cache = forQuery ? this.queryRunCache : this.runCache;
    let terms = cache.get(run);
    if (terms === undefined) {
      terms = this.compoundTerms(run, forQuery);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(run, terms);
    }
    return terms;
  }

  private compoundTerms(run: string, forQuery: boolean): CompoundTerms {
    const parts = run.match(PART) ?? [];
    if (parts.length <= 1) {
      const t = this.normalizeWord(run);
      return t ? { terms: [t], span: 1 } : { terms: [], span: 0 };
    }
    const terms: string[] = [];
    for (const part of parts) {
      const t = this.normalizeWord(part);
      if (t) terms.push(t);
    }
    const span = terms.length;
    // The query side searches the parts only; the index side also keeps the joined form, which a
    // query written as one lower-case word (`featurestore`) matches.
    if (!forQuery) {
      const joined = this.normalizeWord(parts.join(''));
      if (joined) terms.push(joined);
    }
    return { terms, span };
  }

  /**
   * Terms to index with their word positions, counted as a query-side sequence counts them, so a
   * phrase's terms sit at consecutive positions. A compound's joined form and an id's parts share the
   * position of the run's first word.
   */
  indexTermsWithPositions(text: string): { terms: string[]; positions: number[] } {
    const terms: string[] = [];
    const positions: number[] = [];
    let pos = 0;
    for (const run of this.runs(text)) {
      run.terms.forEach((t, i) => {
        terms.push(t);
        positions.push(pos + (i < run.span ? i : 0));
      });
      pos += Math.max(1, run.span);
    }
    return { terms, positions };
  }

  /** Terms to index for a field, in order, duplicates kept (term frequency matters). */
  indexTerms(text: string): string[] {
    const terms: string[] = [];
    for (const run of this.runs(text)) for (const t of run.terms) terms.push(t);
    return terms;
  }

  /** Query terms in order, repeats kept: the word sequence phrases are matched against. */
  sequence(text: string): string[] {
    const terms: string[] = [];
    for (const run of this.runs(text, true)) for (const t of run.terms) terms.push(t);
    return terms;
  }

  /**
   * Distinct query terms with the folded word they came from when a run is a single word (for
   * completing a partly typed word), in order of first appearance.
   */
  queryWords(text: string): { term: string; surface?: string }[] {
    const out = new Map<string, string | undefined>();
    for (const run of this.runs(text, true)) {
      const single = run.terms.length === 1 ? this.fold(text.slice(run.start, run.end)) : undefined;
      for (const t of run.terms) if (!out.has(t)) out.set(t, single);
    }
    return [...out].map(([term, surface]) => ({ term, surface }));
  }

  /** Distinct query terms, in order of first appearance. */
  queryTerms(text: string): string[] {
    const seen = new Set<string>();
    for (const run of this.runs(text, true)) for (const t of run.terms) seen.add(t);
    return [...seen];
  }
}
