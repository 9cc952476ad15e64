/**
 * The languages the analyzer knows: which script each is written in, its stemmer and stop-words
 * (@orama/stemmers, @orama/stopwords, loaded on first use), and the script of a word. A language
 * without a stemmer is indexed unstemmed; a script no language claims is only case-folded.
 */
import { createRequire } from 'node:module';
// English's in the bundle, the other languages' loaded on first use: resolving a package's file cost a
// one-shot search ~3 ms each (issue #23), and English is the language of nearly every backlog.
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stopwords as englishStopWords } from '@orama/stopwords/english';

/** Every language with a stemmer, stop-words or word boundaries of its own (docs/search.md). */
export const LANGUAGES = [
  'english',
  'german',
  'spanish',
  'french',
  'italian',
  'portuguese',
  'dutch',
  'danish',
  'swedish',
  'norwegian',
  'finnish',
  'hungarian',
  'romanian',
  'turkish',
  'indonesian',
  'irish',
  'lithuanian',
  'slovenian',
  'russian',
  'ukrainian',
  'bulgarian',
  'serbian',
  'greek',
  'armenian',
  'arabic',
  'hindi',
  'nepali',
  'sanskrit',
  'tamil',
  'chinese',
  'japanese',
  'korean',
  'thai',
  // Languages without rules: no stemmer or stop-words here, but the detector (eld) knows them, so a
  // document in one is told apart from the languages with rules instead of getting one of theirs
  // (their words keep their marks, as every Latin word does: tokenizer.ts).
  'vietnamese',
  'czech',
  'polish',
  'slovak',
  'croatian',
  'catalan',
  'estonian',
  'latvian',
  'icelandic',
  'albanian',
  'azerbaijani',
  'basque',
  'malay',
  'tagalog',
  'yoruba',
  'belarusian',
] as const;
export type Language = (typeof LANGUAGES)[number];

/** Scripts that decide how a word is folded and which languages it may belong to. */
export type Script =
  | 'latin'
  | 'cyrillic'
  | 'greek'
  | 'armenian'
  | 'arabic'
  | 'devanagari'
  | 'tamil'
  | 'han'
  | 'kana'
  | 'hangul'
  | 'thai'
  | 'other';

interface LanguageInfo {
  /** ISO 639-1 code (what frontmatter `lang: de` and the detector use). */
  code: string;
  scripts: Script[];
  /** Module names in @orama/stemmers and @orama/stopwords (undefined: none). */
  stemmer?: string;
  stopWords?: string;
}

const INFO: Record<Language, LanguageInfo> = {
  english: { code: 'en', scripts: ['latin'], stemmer: 'english', stopWords: 'english' },
  german: { code: 'de', scripts: ['latin'], stemmer: 'german', stopWords: 'german' },
  spanish: { code: 'es', scripts: ['latin'], stemmer: 'spanish', stopWords: 'spanish' },
  french: { code: 'fr', scripts: ['latin'], stemmer: 'french', stopWords: 'french' },
  italian: { code: 'it', scripts: ['latin'], stemmer: 'italian', stopWords: 'italian' },
  portuguese: { code: 'pt', scripts: ['latin'], stemmer: 'portuguese', stopWords: 'portuguese' },
  dutch: { code: 'nl', scripts: ['latin'], stemmer: 'dutch', stopWords: 'dutch' },
  danish: { code: 'da', scripts: ['latin'], stemmer: 'danish', stopWords: 'danish' },
  swedish: { code: 'sv', scripts: ['latin'], stemmer: 'swedish', stopWords: 'swedish' },
  norwegian: { code: 'no', scripts: ['latin'], stemmer: 'norwegian', stopWords: 'norwegian' },
  finnish: { code: 'fi', scripts: ['latin'], stemmer: 'finnish', stopWords: 'finnish' },
  hungarian: { code: 'hu', scripts: ['latin'], stemmer: 'hungarian', stopWords: 'hungarian' },
  romanian: { code: 'ro', scripts: ['latin'], stemmer: 'romanian', stopWords: 'romanian' },
  turkish: { code: 'tr', scripts: ['latin'], stemmer: 'turkish', stopWords: 'turkish' },
  indonesian: { code: 'id', scripts: ['latin'], stemmer: 'indonesian', stopWords: 'indonesian' },
  irish: { code: 'ga', scripts: ['latin'], stemmer: 'irish', stopWords: 'irish' },
  lithuanian: { code: 'lt', scripts: ['latin'], stemmer: 'lithuanian', stopWords: 'lithuanian' },
  slovenian: { code: 'sl', scripts: ['latin'], stopWords: 'slovenian' },
  russian: { code: 'ru', scripts: ['cyrillic'], stemmer: 'russian', stopWords: 'russian' },
  ukrainian: { code: 'uk', scripts: ['cyrillic'], stemmer: 'ukrainian', stopWords: 'ukrainian' },
  bulgarian: { code: 'bg', scripts: ['cyrillic'], stemmer: 'bulgarian', stopWords: 'bulgarian' },
  serbian: { code: 'sr', scripts: ['cyrillic'], stemmer: 'serbian', stopWords: 'serbian' },
  greek: { code: 'el', scripts: ['greek'], stemmer: 'greek', stopWords: 'greek' },
  armenian: { code: 'hy', scripts: ['armenian'], stemmer: 'armenian', stopWords: 'armenian' },
  arabic: { code: 'ar', scripts: ['arabic'], stemmer: 'arabic', stopWords: 'arabic' },
  // @orama/stemmers calls its Hindi stemmer `indian`.
  hindi: { code: 'hi', scripts: ['devanagari'], stemmer: 'indian', stopWords: 'indian' },
  nepali: { code: 'ne', scripts: ['devanagari'], stemmer: 'nepali', stopWords: 'nepali' },
  sanskrit: { code: 'sa', scripts: ['devanagari'], stemmer: 'sanskrit', stopWords: 'sanskrit' },
  tamil: { code: 'ta', scripts: ['tamil'], stemmer: 'tamil', stopWords: 'tamil' },
  chinese: { code: 'zh', scripts: ['han'], stopWords: 'mandarin' },
  japanese: { code: 'ja', scripts: ['han', 'kana'], stopWords: 'japanese' },
  korean: { code: 'ko', scripts: ['hangul'] },
  thai: { code: 'th', scripts: ['thai'] },
  vietnamese: { code: 'vi', scripts: ['latin'] },
  czech: { code: 'cs', scripts: ['latin'] },
  polish: { code: 'pl', scripts: ['latin'] },
  slovak: { code: 'sk', scripts: ['latin'] },
  croatian: { code: 'hr', scripts: ['latin'] },
  catalan: { code: 'ca', scripts: ['latin'] },
  estonian: { code: 'et', scripts: ['latin'] },
  latvian: { code: 'lv', scripts: ['latin'] },
  icelandic: { code: 'is', scripts: ['latin'] },
  albanian: { code: 'sq', scripts: ['latin'] },
  azerbaijani: { code: 'az', scripts: ['latin'] },
  basque: { code: 'eu', scripts: ['latin'] },
  malay: { code: 'ms', scripts: ['latin'] },
  tagalog: { code: 'tl', scripts: ['latin'] },
  yoruba: { code: 'yo', scripts: ['latin'] },
  belarusian: { code: 'be', scripts: ['cyrillic'] },
};

/** The language a word of each script belongs to when nothing else says (first listed = default). */
export const SCRIPT_LANGUAGES: Record<Script, Language[]> = {
  latin: LANGUAGES.filter((l) => INFO[l].scripts.includes('latin')),
  cyrillic: ['russian', 'ukrainian', 'bulgarian', 'serbian', 'belarusian'],
  greek: ['greek'],
  armenian: ['armenian'],
  arabic: ['arabic'],
  devanagari: ['hindi', 'nepali', 'sanskrit'],
  tamil: ['tamil'],
  han: ['chinese', 'japanese'],
  kana: ['japanese'],
  hangul: ['korean'],
  thai: ['thai'],
  other: [],
};

export function languageCode(language: Language): string {
  return INFO[language].code;
}

export function languageScripts(language: Language): readonly Script[] {
  return INFO[language].scripts;
}

const BY_NAME = new Map<string, Language>();
for (const l of LANGUAGES) {
  BY_NAME.set(l, l);
  BY_NAME.set(INFO[l].code, l);
}
// Other names people write: Orama's module names, regional tags' base, common spellings.
for (const [alias, l] of Object.entries({
  indian: 'hindi',
  mandarin: 'chinese',
  zho: 'chinese',
  cmn: 'chinese',
  jpn: 'japanese',
  kor: 'korean',
  nb: 'norwegian',
  nn: 'norwegian',
  eng: 'english',
  deu: 'german',
  ger: 'german',
  spa: 'spanish',
  fra: 'french',
  rus: 'russian',
  ara: 'arabic',
  hin: 'hindi',
  tha: 'thai',
} as Record<string, Language>))
  BY_NAME.set(alias, l);

/**
 * The language a name stands for: `de`, `de-AT`, `German`, `deu` -> german; undefined when the
 * analyzer has no such language (it is then indexed by script, as if not given).
 */
export function parseLanguage(name: unknown): Language | undefined {
  if (typeof name !== 'string') return undefined;
  const key = name.trim().toLowerCase().replace(/_/g, '-');
  return BY_NAME.get(key) ?? BY_NAME.get(key.split('-')[0]);
}

const require = createRequire(import.meta.url);
type Stemmer = (word: string) => string;
const stemmers = new Map<Language, Stemmer | null>();
const stopLists = new Map<Language, ReadonlySet<string>>();

/**
 * Korean writes particles and verb endings onto the word (`동기화를`, `수정했습니다`); no package we use
 * stems Korean, so the most common ones are cut when at least two syllables remain. A light stemmer:
 * it conflates a few words that end like a particle (`고양이` -> `고양`), the same way in documents and
 * queries.
 */
const KOREAN_SUFFIXES = [
  '했습니다',
  '하였습니다',
  '합니다',
  '했다',
  '하였다',
  '하다',
  '하는',
  '하고',
  '하기',
  '해야',
  '해서',
  '되었다',
  '됩니다',
  '된다',
  '되는',
  '에서는',
  '에서도',
  '으로는',
  '으로도',
  '에게서',
  '에서',
  '에게',
  '으로',
  '까지',
  '부터',
  '처럼',
  '보다',
  '이나',
  '이다',
  '입니다',
  '을',
  '를',
  '이',
  '가',
  '은',
  '는',
  '의',
  '에',
  '로',
  '와',
  '과',
  '도',
  '만',
  '한',
  '할',
].sort((a, b) => b.length - a.length);

export function koreanStem(word: string): string {
  for (const suffix of KOREAN_SUFFIXES)
    if (word.endsWith(suffix) && word.length - suffix.length >= 2) return word.slice(0, -suffix.length);
  return word;
}

/** The stemmer of a language (loaded on first use), or null when it has none. */
export function stemmerOf(language: Language): Stemmer | null {
  let s = stemmers.get(language);
  if (s === undefined) {
    const name = INFO[language].stemmer;
    s =
      language === 'korean'
        ? koreanStem
        : language === 'english'
          ? englishStemmer
          : name
            ? (require(`@orama/stemmers/${name}`) as { stemmer: Stemmer }).stemmer
            : null;
    stemmers.set(language, s);
  }
  return s;
}

/** The stop-words of a language (loaded on first use), lower-case; empty when it has none. */
export function stopWordsOf(language: Language): ReadonlySet<string> {
  let s = stopLists.get(language);
  if (s === undefined) {
    const name = INFO[language].stopWords;
    const words =
      language === 'english'
        ? englishStopWords
        : name
          ? (require(`@orama/stopwords/${name}`) as { stopwords: string[] }).stopwords
          : [];
    // A single Greek letter is a symbol far more often than a word in what a backlog holds (NF-κB, β-cell).
    s = new Set(words.map((w) => w.toLowerCase()).filter((w) => language !== 'greek' || w.length > 1));
    stopLists.set(language, s);
  }
  return s;
}

/** One test per script, tried in this order on a word's first letter. */
// Made on first use: a Unicode property escape is compiled when its literal is first evaluated (ICU's sets
// built then), which at a module's top level every start paid, a `get` too (issue #23).
let scriptTests: [Script, RegExp][] | undefined;
const SCRIPT_TESTS = (): [Script, RegExp][] =>
  (scriptTests ??= [
    ['latin', /\p{Script=Latin}/u],
    ['cyrillic', /\p{Script=Cyrillic}/u],
    ['han', /\p{Script_Extensions=Han}/u],
    ['kana', /[\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}]/u],
    ['hangul', /\p{Script_Extensions=Hangul}/u],
    ['arabic', /\p{Script_Extensions=Arabic}/u],
    ['devanagari', /\p{Script_Extensions=Devanagari}/u],
    ['thai', /\p{Script=Thai}/u],
    ['greek', /\p{Script=Greek}/u],
    ['armenian', /\p{Script=Armenian}/u],
    ['tamil', /\p{Script=Tamil}/u],
  ]);

/** The script of one letter. */
function letterScript(ch: string): Script {
  const code = ch.charCodeAt(0);
  if (code < 0x250) return 'latin';
  for (const [script, test] of SCRIPT_TESTS()) if (test.test(ch)) return script;
  return 'other';
}

let letter: RegExp | undefined;
const ASCII_WORD = /^[ -~]*$/;

/**
 * The script of a word: that of most of its letters (`βoxidation` is Latin; ties go to the first
 * letter's), `other` for digits only or an unlisted script.
 */
export function scriptOf(word: string): Script {
  if (ASCII_WORD.test(word)) return /[a-z]/i.test(word) ? 'latin' : 'other';
  const counts = new Map<Script, number>();
  let first: Script | undefined;
  for (const [ch] of word.matchAll((letter ??= /\p{L}/gu))) {
    const s = letterScript(ch);
    first ??= s;
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  if (first === undefined) return 'other';
  let best = first;
  for (const [s, n] of counts) if (n > counts.get(best)!) best = s;
  return best;
}
