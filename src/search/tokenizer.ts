import { idKey, normalizeId } from '../storage/ids.js';
import { LanguageMix } from './language-mix.js';
import { firstAtOrAfter } from './typed-arrays.js';
import {
  SCRIPT_LANGUAGES,
  scriptOf,
  stemmerOf,
  stopWordsOf,
  type Language,
  type Script,
} from './languages.js';

export { idKey, normalizeId };
export { LANGUAGES, type Language } from './languages.js';

export interface TokenizerSettings {
  /**
   * `'detect'` (default): every language the analyzer knows (docs/search.md lists them); each document
   * is analyzed in its frontmatter `lang`/`language`, else by its script (Chinese, Japanese, Thai,
   * Arabic, ...), else in the language the detector finds for it. A list (`['english', 'german']`,
   * codes such as `de` work too) allows only those: a script none of them uses is only folded, and
   * two languages of one script have each document detected between them.
   */
  languages: 'detect' | string[];
  /** Reduce words to their stem (`failures` -> `failur`, `переводы` -> `перевод`). Default true. */
  stemming: boolean;
  /** `true`: each language's built-in list; a list: exactly these words; `false`: keep every word. */
  stopWords: boolean | string[];
  /**
   * Arabic: also fold alef forms (أ إ آ ٱ -> ا), alef maqsura (ى -> ي) and teh marbuta (ة -> ه) before
   * stemming. Default false: the Arabic stemmer folds alef forms itself, and folding before it cost
   * 0.017 nDCG on XQuAD-ar (docs/search.md); with `stemming: false` it helps (+0.004).
   */
  arabicLetters: boolean;
  /**
   * Plain case folding: every word only lower-cased (NFC), its marks kept, no stemming or stop-words in
   * any language. Default false; the baseline the analyzer is measured against (bench/plain-folding.ts).
   */
  caseFoldingOnly: boolean;
}

export const DEFAULT_TOKENIZER_SETTINGS: TokenizerSettings = {
  languages: 'detect',
  stemming: true,
  stopWords: true,
  arabicLetters: false,
  caseFoldingOnly: false,
};

/** A run of text that forms one word or one compound (`FeatureStore`, `sync_queue`, `TASK-0042`). */
export interface WordRun {
  start: number;
  end: number;
  /** Normalized terms the run indexes as (parts, and the joined compound / the whole id). */
  terms: readonly string[];
  /** Word positions the run takes in a query-side sequence (its parts; 1 for an id). */
  span: number;
}

/** One query word (or one part of a compound) and the terms it may be indexed as, one per language. */
export interface QueryWord {
  /** The first alternative. */
  term: string;
  /** Distinct terms of the word in each language its script has in the index. */
  alternatives: string[];
  /** The folded word as typed, when the run is a single word (for completing a partly typed word). */
  surface?: string;
  script: Script;
  /**
   * Latin alternatives typed without marks: the keys of their marked spellings' folded twins
   * (`ban` -> `~ban`, which `bán`, `bàn`, `bạn` index), matched as an expansion, below the word itself.
   */
  folded?: string[];
}

interface CompoundTerms {
  terms: string[];
  span: number;
}

/**
 * Scripts written without spaces between words: their runs are cut into words by Intl.Segmenter
 * (ICU's dictionaries for Chinese, Japanese, Thai, Lao, Khmer, Burmese).
 */
const SEGMENTED = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}`;
/** A character inside a word of a spaced script: letters, their marks (vowel signs, viramas), digits, ZWNJ/ZWJ. */
const W = String.raw`[[\p{L}\p{M}\p{N}\u200C\u200D]--[${SEGMENTED}]]`;
/** A character that starts such a word. */
const WS = String.raw`[[\p{L}\p{N}]--[${SEGMENTED}]]`;
/**
 * One regex finds every run, left to right:
 * 1. an id: letters, a hyphen, digits (`TASK-0042`, `task-12.01`), kept whole;
 * 2. a word or a compound joined by `-` or `_` (`rate-limit`, `sync_queue`, `FeatureStore`);
 * 3. a run of an unspaced script, cut into words by the segmenter.
 */
// Made on first use: a Unicode property escape is compiled when its literal is first evaluated (ICU's sets
// built then), which at a module's top level every start paid, a `get` too (issue #23).
let runPattern: RegExp | undefined;
const RUN = (): RegExp =>
  (runPattern ??= new RegExp(
    String.raw`([A-Za-z]{2,})-(\d+(?:\.\d+)*)(?!${W})|${WS}${W}*(?:[\-_]${WS}${W}*)*|([[\p{L}\p{M}\p{N}]&&[${SEGMENTED}]]+)`,
    'gv',
  ));
/**
 * RUN on ASCII text: each class of RUN restricted to ASCII (letters, digits; no mark, no unspaced script),
 * so it finds the same runs there. Compiling RUN and running it the first times cost a one-shot search
 * ~10 ms (its classes span Unicode); a text of ASCII and NOT_WORD characters never needs it.
 */
const ASCII_RUN = /([A-Za-z]{2,})-(\d+(?:\.\d+)*)(?![A-Za-z0-9])|[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*/g;
/**
 * Characters past ASCII that are no letter, mark or digit (nor ZWNJ/ZWJ), so never in a run nor what
 * decides where one ends: general punctuation (dashes, quotes), Latin-1 signs, arrows, mathematical and
 * technical signs, box drawing, shapes, dingbats, emoji. test/tokenizer-ascii.test.ts checks each one.
 */
export const NOT_WORD =
  /[\u00A0-\u00A9\u00AB-\u00B1\u00B4\u00B6-\u00B8\u00BB\u00BF\u00D7\u00F7\u2000-\u200B\u200E-\u206F\u2190-\u23FF\u2500-\u2775\u2794-\u27BF]|\uD83C[\uDF00-\uDFFF]|\uD83D[\uDC00-\uDFFF]|\uD83E[\uDD00-\uDDFF\uDE70-\uDEFF]/g;
/**
 * The text RUN's matches are taken from and the expression that finds them: `text` and ASCII_RUN when
 * it is ASCII once each NOT_WORD character is a space (one per UTF-16 unit, so every offset and every
 * run's text stay as they are: such a character is in no run and ends one as a space does); else
 * `text` and RUN.
 */
function runSource(text: string): { source: string; re: RegExp } {
  if (ASCII_ONLY.test(text)) return { source: text, re: ASCII_RUN };
  const spaced = text.replace(NOT_WORD, (c) => (c.length === 1 ? ' ' : '  '));
  return ASCII_ONLY.test(spaced) ? { source: spaced, re: ASCII_RUN } : { source: text, re: RUN() };
}
/**
 * Every match of RUN in `text`, by `exec`: `matchAll` runs on a copy of the expression, and a copy of one
 * this size is compiled again (10 ms on a server's first query). `unicode`: by RUN itself whatever the
 * text (what the ASCII path is checked against).
 */
export function runMatches(text: string, unicode = false): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  const { source, re } = unicode ? { source: text, re: RUN() } : runSource(text);
  re.lastIndex = 0;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) out.push(m);
  return out;
}
/** Parts of a compound: upper-case acronyms, capitalized or lower-case words, digit runs, other letters with their marks. */
let part: RegExp | undefined;
const PART = () => (part ??= /\p{Lu}+(?!\p{Ll})|\p{Lu}?[\p{Ll}\p{M}]+|\p{N}+|[\p{L}\p{M}\u200C\u200D]+/gu);
/** PART of an ASCII run (the same parts: its classes restricted to ASCII). */
const ASCII_PART = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[A-Za-z]+/g;
/** The parts of a run (`unicode`: by PART itself, what the ASCII path is checked against). */
export function partsOf(run: string, unicode = false): string[] {
  return run.match(ASCII_ONLY.test(run) && !unicode ? ASCII_PART : PART()) ?? [];
}
let combiningMarks: RegExp | undefined;
const COMBINING_MARKS = () => (combiningMarks ??= /\p{M}/gu);
let onlyDigits: RegExp | undefined;
const ONLY_DIGITS = () => (onlyDigits ??= /^\p{N}+$/u);
/** Whether a word is digits only (ONLY_DIGITS; an ASCII word without it). */
const onlyDigitsIn = (w: string) => (ASCII_ONLY.test(w) ? /^[0-9]+$/.test(w) : ONLY_DIGITS().test(w));
const ASCII_ONLY = /^[^\u0080-\uFFFF]*$/;
const CACHE_LIMIT = 200_000;
let wordSegmenter: Intl.Segmenter | undefined;
/** Made on first use (~10 ms of a start): only unspaced scripts are cut by it. */
const segmenter = {
  segment: (text: string) =>
    (wordSegmenter ??= new Intl.Segmenter('en', { granularity: 'word' })).segment(text),
};

/** Arabic diacritics (harakat, superscript alef) and tatweel: optional in writing, removed. */
const ARABIC_MARKS = /[\u064B-\u065F\u0670\u0640]/g;

/** Alef forms -> ا, alef maqsura -> ي, teh marbuta -> ه (TokenizerSettings.arabicLetters). */
function foldArabicLetters(w: string): string {
  return w
    .replace(/[\u0622\u0623\u0625\u0671]/g, '\u0627')
    .replace(/\u0649/g, '\u064A')
    .replace(/\u0629/g, '\u0647');
}

/**
 * Lower-case and normalized for its script: Latin and Greek lose their accents (and Greek's final
 * sigma), Cyrillic keeps its letters (`й`) but not stress marks, and `ё` -> `е`, Arabic loses its optional diacritics and tatweel;
 * every other script keeps its marks, which are part of its letters (NFKC: one form for composed,
 * full-width and half-width characters).
 */
export function foldWord(word: string, script: Script = scriptOf(word)): string {
  const w = word.toLowerCase();
  // Most words: no mark to remove, and every normalization form of ASCII is itself.
  if (ASCII_ONLY.test(w)) return w;
  switch (script) {
    case 'latin':
      return w.normalize('NFKD').replace(COMBINING_MARKS(), '');
    case 'greek':
      return w.normalize('NFKD').replace(COMBINING_MARKS(), '').replace(/ς/g, 'σ');
    case 'cyrillic':
      // NFC composes й and ё; what is left are stress marks (`Пари́ж`), which are not part of a letter.
      return w.normalize('NFC').replace(COMBINING_MARKS(), '').replace(/ё/g, 'е');
    case 'arabic':
      return w.normalize('NFKC').replace(ARABIC_MARKS, '');
    default:
      return w.normalize('NFKC');
  }
}

/** Lower case, NFKC (one form for composed, ligature and full-width letters): a Latin word, its marks kept. */
function caseFold(word: string): string {
  const w = word.toLowerCase();
  return ASCII_ONLY.test(w) ? w : w.normalize('NFKC');
}

/** A stop-word as the analyzer compares it: Latin ones with their marks (`peste` is one, `pește` not). */
function stopWordKey(word: string): string {
  return scriptOf(word) === 'latin' ? caseFold(word) : foldWord(word);
}

/** The key of a Latin term's folded twin: `~` and the term without marks (`bán` -> `~ban`). */
export function foldedTwin(term: string): string {
  return `~${foldWord(term, 'latin')}`;
}

/**
 * A run's terms, plus the folded twin of each Latin term with a mark (`bán` -> `~ban`): indexed both
 * ways, `bán` is found by `bán` at full weight and, with every other spelling of `ban`, by `ban` as an
 * expansion (below the word `ban` itself, which stays a word of its own).
 */
function withFoldedTwins(terms: string[], caseFoldingOnly: boolean): string[] {
  if (caseFoldingOnly) return terms;
  let out = terms;
  for (const t of terms) {
    if (ASCII_ONLY.test(t) || scriptOf(t) !== 'latin') continue;
    const twin = foldedTwin(t);
    if (twin.slice(1) !== t && !out.includes(twin)) {
      if (out === terms) out = [...terms];
      out.push(twin);
    }
  }
  return out;
}

/**
 * A run cache as text: the runs sorted (UTF-16 order, what `<` compares), one a line, then U+0001, then
 * each one's span and terms, a line each in the same order (`span\tterm term`). A run or a term never
 * holds white space or U+0001: runs are letters, marks, digits, `-` and `_`.
 */
function encodeRuns(cache: Map<string, CompoundTerms>): Uint8Array {
  const runs = [...cache.keys()].sort();
  const lines = runs.map((run) => {
    const { span, terms } = cache.get(run)!;
    return `${span}\t${terms.join(' ')}`;
  });
  return new TextEncoder().encode(`${runs.join('\n')}\u0001${lines.join('\n')}`);
}

/** encodeRuns' table, searched by halves (building a Map of every entry cost a one-shot search 35 ms). */
class SavedRuns {
  private constructor(
    private readonly runs: string[],
    private readonly lines: string[],
  ) {}

  /** undefined when the bytes are not such a table (they come from a signed file, but are checked as hostile). */
  static decode(bytes: Uint8Array): SavedRuns | undefined {
    const text = new TextDecoder().decode(bytes);
    const cut = text.indexOf('\u0001');
    if (cut < 0) return undefined;
    const runs = text.slice(0, cut).split('\n');
    const lines = text.slice(cut + 1).split('\n');
    return runs.length === lines.length && runs.length <= CACHE_LIMIT
      ? new SavedRuns(runs, lines)
      : undefined;
  }

  /** The run's terms, if the table has them (an entry that is not well formed counts as absent). */
  get(run: string): CompoundTerms | undefined {
    const { runs } = this;
    const lo = firstAtOrAfter(runs, run);
    if (lo === runs.length || runs[lo] !== run) return undefined;
    const line = this.lines[lo];
    const tab = line.indexOf('\t');
    const span = Number(line.slice(0, tab));
    const terms = tab >= 0 && tab < line.length - 1 ? line.slice(tab + 1).split(' ') : [];
    if (
      tab < 1 ||
      !Number.isInteger(span) ||
      span < 0 ||
      span > terms.length ||
      terms.some((t) => !WORD.test(t) || t.includes('\u0001'))
    )
      return undefined;
    return { terms, span };
  }

  /** Every well-formed entry (a cache about to be written again keeps them). */
  *entries(): Iterable<[string, CompoundTerms]> {
    for (const run of this.runs) {
      const terms = this.get(run);
      if (terms) yield [run, terms];
    }
  }
}

/** A term as the analyzer makes one: no white space, not empty (U+0001 is tested apart: see encodeRuns). */
const WORD = /^\S+$/;

/**
 * The analyzer shared by indexing, querying and snippets. It is plain functions over settings and the
 * index's language mix, with bounded caches of word -> term because stemming dominates indexing time.
 */
/** Query analyses (TextAnalyzer.memoized), by settings, languages in use, kind and text; the last few. */
const sharedAnalyses = new Map<string, unknown>();
const SHARED_ANALYSES = 64;
/** A short number for a long key (settings with a stop-word list): the same key, the same number. */
const interned = new Map<string, number>();
function internKey(key: string): number {
  let n = interned.get(key);
  if (n === undefined) interned.set(key, (n = interned.size));
  return n;
}

export class TextAnalyzer {
  readonly settings: TokenizerSettings;
  /** The languages of the index this analyzer serves (LexicalIndex keeps it up to date). */
  readonly languages: LanguageMix;
  private readonly customStopWords: Set<string> | null;
  private readonly stopLists = new Map<Language, Set<string>>();
  /** word -> term per document language, and per analysis language ('' for none). */
  private readonly cache = new Map<string, Map<string, string>>();
  private readonly termCache = new Map<string, Map<string, string>>();
  private readonly runCache = new Map<string, Map<string, CompoundTerms>>();
  private planVersion = -1;
  /** Run caches from a persisted index (restoreRuns), per document language: the bytes, decoded on first use. */
  private savedRunCaches = new Map<string, Uint8Array | SavedRuns | undefined>();

  constructor(settings: Partial<TokenizerSettings> = {}) {
    this.settings = { ...DEFAULT_TOKENIZER_SETTINGS, ...settings };
    this.languages = new LanguageMix(this.settings.languages);
    const { stopWords } = this.settings;
    this.customStopWords = Array.isArray(stopWords) ? new Set(stopWords.map(stopWordKey)) : null;
    this.settingsKey = JSON.stringify(this.settings);
  }

  private stopWordsFor(language: Language | undefined): ReadonlySet<string> | null {
    if (this.customStopWords) return this.customStopWords;
    if (this.settings.stopWords === false || !language) return null;
    let set = this.stopLists.get(language);
    if (!set) {
      set = new Set([...stopWordsOf(language)].map(stopWordKey));
      this.stopLists.set(language, set);
    }
    return set;
  }

  /** The language a word of `script` is analyzed in, in a document of `docLanguage`. */
  private languageFor(script: Script, docLanguage: Language | undefined): Language | undefined {
    if (docLanguage && LanguageMix.covers(docLanguage, script)) return docLanguage;
    return this.languages.fallback(script);
  }

  /**
   * One word -> its term in a document of `language` (undefined: by its script): folded (foldWord),
   * '' for a stop-word, stemmed in the word's language.
   */
  normalizeWord(word: string, language?: Language): string {
    const cache = this.docCache(this.cache, language);
    let term = cache.get(word);
    if (term === undefined) {
      const script = scriptOf(word);
      term = this.termIn(word, script, this.languageFor(script, language));
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(word, term);
    }
    return term;
  }

  /**
   * The cache of one document language. Which language a word takes depends on the mix's defaults,
   * so the per-document caches are dropped when those change.
   */
  private docCache<T>(caches: Map<string, Map<string, T>>, language: Language | undefined): Map<string, T> {
    this.syncPlan();
    return this.keyCache(caches, language ?? '');
  }

  /** Drops every cached word when the language plan changed since they were cached. */
  private syncPlan(): void {
    if (this.planVersion !== this.languages.planVersion) {
      this.planVersion = this.languages.planVersion;
      this.cache.clear();
      this.runCache.clear();
      this.savedRunCaches.clear();
    }
  }

  private keyCache<T>(caches: Map<string, Map<string, T>>, key: string): Map<string, T> {
    let cache = caches.get(key);
    if (!cache) caches.set(key, (cache = new Map()));
    return cache;
  }

  /** The restored run cache of a document language (restoreRuns), decoded on first use. */
  private savedRunsOf(key: string): SavedRuns | undefined {
    let saved = this.savedRunCaches.get(key);
    if (saved instanceof Uint8Array) this.savedRunCaches.set(key, (saved = SavedRuns.decode(saved)));
    return saved;
  }

  /**
   * The run caches (run -> terms, per document language) as bytes, for the persisted index: a restored
   * process then analyzes a body's words for a snippet as the process that built the index did, from
   * the cache (cold, each new word's stemming cost a first query most of its time). Only entries made
   * under the current language plan (the caches are dropped when it changes).
   */
  savedRuns(): Record<string, Uint8Array> {
    this.syncPlan();
    const out: Record<string, Uint8Array> = {};
    for (const key of new Set([...this.runCache.keys(), ...this.savedRunCaches.keys()])) {
      let cache = new Map(this.savedRunsOf(key)?.entries());
      for (const [run, terms] of this.runCache.get(key) ?? []) cache.set(run, terms);
      // At most what a table may hold (SavedRuns.decode): then only the words of this process.
      if (cache.size > CACHE_LIMIT) cache = new Map(this.runCache.get(key));
      if (cache.size > 0) out[key] = encodeRuns(cache);
    }
    return out;
  }

  /**
   * Takes `savedRuns()` of a persisted index whose language plan the analyzer has just restored;
   * each language's entries are decoded when a text in it is first analyzed. Anything else is ignored.
   */
  restoreRuns(saved: unknown): void {
    this.syncPlan(); // the restored plan: drops what an older one cached
    this.runCache.clear();
    this.savedRunCaches.clear();
    if (!saved || typeof saved !== 'object') return;
    for (const [key, bytes] of Object.entries(saved))
      if (bytes instanceof Uint8Array && key.length <= 32) this.savedRunCaches.set(key, bytes);
  }

  /** A word's term in one language (undefined: folded only); cached per language. */
  private termIn(word: string, script: Script, language: Language | undefined): string {
    const key = language ?? '';
    let cache = this.termCache.get(key);
    if (!cache) this.termCache.set(key, (cache = new Map()));
    let term = cache.get(word);
    if (term === undefined) {
      term = this.computeTerm(word, script, language);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(word, term);
    }
    return term;
  }

  /**
   * A word as indexed, before stemming: Latin lower-cased with its marks (caseFold), other scripts
   * folded for their script (foldWord).
   */
  fold(word: string): string {
    const script = scriptOf(word);
    return script === 'latin' || this.settings.caseFoldingOnly ? caseFold(word) : foldWord(word, script);
  }

  private computeTerm(word: string, script: Script, language: Language | undefined): string {
    if (this.settings.caseFoldingOnly) return caseFold(word);
    // Latin words keep their marks, which tell words apart (`pește` fish, `peste` over; `çam`, `cam`):
    // stop-words are those written so, stemmers get the letters they were written for, and a term
    // that keeps a mark also indexes its folded twin (withFoldedTwins).
    let w = script === 'latin' ? caseFold(word) : foldWord(word, script);
    if (script === 'arabic' && this.settings.arabicLetters) w = foldArabicLetters(w);
    if (this.stopWordsFor(language)?.has(w)) return '';
    if (!this.settings.stemming || !language || onlyDigitsIn(w)) return w;
    const stem = stemmerOf(language);
    return stem ? stem(w) : w;
  }

  /**
   * Every run of `text` with the terms it is indexed under, for a document in `language` (undefined:
   * each word by its script). A compound indexes its parts and its joined form, so `FeatureStore`,
   * `feature-store` and `feature store` find each other.
   */
  runs(text: string, language?: Language): WordRun[] {
    const out: WordRun[] = [];
    this.eachRun(text, language, (start, end, terms, span) => out.push({ start, end, terms, span }));
    return out;
  }

  /** `runs` as calls, without an object per run (indexing and snippets read every word of every document). */
  eachRun(
    text: string,
    language: Language | undefined,
    visit: (start: number, end: number, terms: readonly string[], span: number) => void,
  ): void {
    // Looked up once per text, not per run (a body has hundreds of runs).
    const cache = this.docCache(this.runCache, language);
    const { source, re } = runSource(text);
    re.lastIndex = 0;
    for (let m = re.exec(source); m !== null; m = re.exec(source)) {
      const start = m.index;
      if (m[3] !== undefined) {
        for (const s of segmenter.segment(m[3])) {
          if (!s.isWordLike) continue;
          const t = this.normalizeWord(s.segment, language);
          if (t) visit(start + s.index, start + s.index + s.segment.length, [t], 1);
        }
        continue;
      }
      const end = start + m[0].length;
      if (m[1] !== undefined) visit(start, end, this.idTerms(m[1], m[2], false, language), 1);
      else {
        const { terms, span } = this.cachedCompoundTerms(m[0], language, cache);
        if (terms.length > 0) visit(start, end, terms, span);
      }
    }
  }

  private idTerms(prefix: string, numbers: string, forQuery: boolean, language?: Language): string[] {
    const id = normalizeId(prefix, numbers);
    if (forQuery) return [id];
    // The parts too, so `covid 19` still finds `COVID-19`; the id itself stays one term.
    const terms = [id];
    const p = this.normalizeWord(prefix, language);
    if (p) terms.push(p);
    for (const n of numbers.split('.')) terms.push(String(Number.parseInt(n, 10)));
    return terms;
  }

  /** Runs repeat (the same words over and over), so their terms are cached like single words. */
  private cachedCompoundTerms(
    run: string,
    language: Language | undefined,
    cache: Map<string, CompoundTerms>,
  ): CompoundTerms {
    let terms = cache.get(run);
    if (terms === undefined) {
      terms = this.savedRunsOf(language ?? '')?.get(run) ?? this.compoundTerms(run, language);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(run, terms);
    }
    return terms;
  }

  private compoundTerms(run: string, language: Language | undefined): CompoundTerms {
    const parts = partsOf(run);
    if (parts.length <= 1) {
      const t = this.normalizeWord(run, language);
      return t
        ? { terms: withFoldedTwins([t], this.settings.caseFoldingOnly), span: 1 }
        : { terms: [], span: 0 };
    }
    const terms: string[] = [];
    for (const part of parts) {
      const t = this.normalizeWord(part, language);
      if (t) terms.push(t);
    }
    const span = terms.length;
    // The index side also keeps the joined form, which a query written as one lower-case word
    // (`featurestore`) matches; the query side searches the parts only.
    const joined = this.normalizeWord(parts.join(''), language);
    if (joined) terms.push(joined);
    return { terms: withFoldedTwins(terms, this.settings.caseFoldingOnly), span };
  }

  /**
   * Terms to index with their word positions, counted as a query-side sequence counts them, so a
   * phrase's terms sit at consecutive positions. A compound's joined form and an id's parts share the
   * position of the run's first word.
   */
  indexTermsWithPositions(text: string, language?: Language): { terms: string[]; positions: number[] } {
    const terms: string[] = [];
    const positions: number[] = [];
    let pos = 0;
    this.eachRun(text, language, (_start, _end, runTerms, span) => {
      for (let i = 0; i < runTerms.length; i++) {
        terms.push(runTerms[i]);
        positions.push(pos + (i < span ? i : 0));
      }
      pos += Math.max(1, span);
    });
    return { terms, positions };
  }

  /** Terms to index for a field, in order, duplicates kept (term frequency matters). */
  indexTerms(text: string, language?: Language): string[] {
    const terms: string[] = [];
    this.eachRun(text, language, (_start, _end, runTerms) => {
      for (const t of runTerms) terms.push(t);
    });
    return terms;
  }

  // ----- The query side: each word in every language of its script that the index holds.

  /**
   * The distinct words of a query in order of first appearance (a compound gives its parts; an id
   * stays one word), each with its terms in every language its script has in the index. Stop-words
   * (in all those languages) are left out.
   */
  queryWords(text: string): readonly QueryWord[] {
    return this.memoized('words', text, () => this.analyzeQuery(text));
  }

  /**
   * A query's analysis depends on the settings, the languages in use and the text only: the last few
   * are shared by every analyzer of the process (sharedAnalyses). One search analyzes its query several
   * times (term budget, ranking, proximity, snippets), and a workspace's backlogs each analyze it.
   * Shared results: callers must not change them.
   */
  private memoized<T>(kind: string, text: string, compute: () => T): T {
    if (this.analysisKey.generation !== this.languages.generation) {
      const active = (Object.keys(SCRIPT_LANGUAGES) as Script[]).map((s) => this.languages.active(s).join());
      this.analysisKey = {
        generation: this.languages.generation,
        prefix: `${internKey(this.settingsKey)}.${internKey(active.join(';'))}`,
      };
    }
    const key = `${this.analysisKey.prefix}\u0000${kind}\u0000${text}`;
    const hit = sharedAnalyses.get(key);
    if (hit !== undefined) return hit as T;
    const value = compute();
    if (sharedAnalyses.size >= SHARED_ANALYSES) sharedAnalyses.delete(sharedAnalyses.keys().next().value!);
    sharedAnalyses.set(key, value);
    return value;
  }

  private readonly settingsKey: string;
  private analysisKey = { generation: -1, prefix: '' };

  private analyzeQuery(text: string): QueryWord[] {
    const out: QueryWord[] = [];
    const seen = new Set<string>();
    const add = (w: QueryWord) => {
      const key = w.alternatives.join('\u0000');
      if (seen.has(key)) return;
      seen.add(key);
      out.push(w);
    };
    const word = (w: string, surface: boolean) => {
      const script = scriptOf(w);
      const langs = this.languages.active(script);
      const alternatives: string[] = [];
      if (langs.length === 0) {
        const t = this.termIn(w, script, undefined);
        if (t) alternatives.push(t);
      }
      for (const l of langs) {
        const t = this.termIn(w, script, l);
        if (t && !alternatives.includes(t)) alternatives.push(t);
      }
      if (alternatives.length === 0) return;
      const folded =
        script === 'latin' && !this.settings.caseFoldingOnly
          ? alternatives.map(foldedTwin).filter((twin, i) => twin.slice(1) === alternatives[i])
          : [];
      add({
        term: alternatives[0],
        alternatives,
        script,
        surface: surface ? foldWord(w, script) : undefined,
        ...(folded.length > 0 ? { folded } : {}),
      });
    };
    for (const m of runMatches(text)) {
      if (m[1] !== undefined) {
        const id = normalizeId(m[1], m[2]);
        add({ term: id, alternatives: [id], script: 'latin' });
      } else if (m[3] !== undefined) {
        for (const s of segmenter.segment(m[3])) if (s.isWordLike) word(s.segment, true);
      } else {
        const parts = partsOf(m[0]);
        if (parts.length <= 1) word(m[0], true);
        else for (const p of parts) word(p, false);
      }
    }
    return out;
  }

  /**
   * The query's term sequences for phrases: one per language of the index that a word's script has
   * (the i-th sequence takes each word in the i-th language of its script, or its last), so a phrase
   * is matched as a document of either language indexed it. Usually one.
   */
  sequences(text: string): readonly (readonly string[])[] {
    return this.memoized('sequences', text, () => this.analyzeSequences(text));
  }

  private analyzeSequences(text: string): string[][] {
    const words: { w: string; script: Script; id?: string }[] = [];
    for (const m of runMatches(text)) {
      if (m[1] !== undefined) words.push({ w: m[0], script: 'latin', id: normalizeId(m[1], m[2]) });
      else if (m[3] !== undefined) {
        for (const s of segmenter.segment(m[3]))
          if (s.isWordLike) words.push({ w: s.segment, script: scriptOf(s.segment) });
      } else for (const p of partsOf(m[0])) words.push({ w: p, script: scriptOf(p) });
    }
    const langs = words.map(({ script }) => this.languages.active(script));
    const n = Math.max(1, ...langs.map((l) => l.length));
    const out: string[][] = [];
    for (let i = 0; i < n; i++) {
      const seq: string[] = [];
      words.forEach(({ w, script, id }, k) => {
        if (id) return void seq.push(id);
        const l = langs[k].length ? langs[k][Math.min(i, langs[k].length - 1)] : undefined;
        const t = this.termIn(w, script, l);
        if (t) seq.push(t);
      });
      if (!out.some((s) => s.join('\u0000') === seq.join('\u0000'))) out.push(seq);
    }
    return out;
  }

  /** The first of `sequences`: query terms in order, repeats kept. */
  sequence(text: string): readonly string[] {
    return this.sequences(text)[0];
  }

  /** Distinct query terms (every alternative), in order of first appearance. */
  queryTerms(text: string): string[] {
    const seen = new Set<string>();
    for (const w of this.queryWords(text)) for (const t of w.alternatives) seen.add(t);
    return [...seen];
  }

  /** `queryTerms` and the folded twins the query's unmarked words match (what a snippet looks for). */
  matchTerms(text: string): string[] {
    const seen = new Set(this.queryTerms(text));
    for (const w of this.queryWords(text)) for (const t of w.folded ?? []) seen.add(t);
    return [...seen];
  }
}
