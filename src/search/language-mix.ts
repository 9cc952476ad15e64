/**
 * Which languages an index holds, and so how its words are analyzed: the language of each document
 * (frontmatter, else its script, else the detector), the default language of each script (what a word
 * of that script is, in a document of another language), and the languages a query word is analyzed
 * in (every language of its script that some document has, so a query matches across languages).
 */
import {
  DETECT_CHARS,
  detectInWorker,
  detectLanguage,
  detectorReady,
  dominantScript,
  loadDetector,
} from './language-detect.js';
import {
  LANGUAGES,
  SCRIPT_LANGUAGES,
  languageScripts,
  parseLanguage,
  type Language,
  type Script,
} from './languages.js';

/** Scripts shared by several languages the detector tells apart. */
const DETECTED_SCRIPTS: Script[] = ['latin', 'cyrillic'];
/** Documents a build asks the detector about before deciding whether every document must be asked. */
const SAMPLE = 40;
/** A second language seen in at least this share of the sample (twice, when the sample is 10 or more) makes a script mixed. */
const MIXED_SHARE = 0.1;

/** The text a document's language is told from: its title and the start of its body. */
export function languageSample(doc: { title?: string; body?: string }): string {
  return `${doc.title ?? ''}\n${(doc.body ?? '').slice(0, 2000)}`;
}

/** What a build decided, kept with the persisted index. */
export interface LanguagePlanState {
  /** Default language per script (the sample's majority for detected scripts). */
  fallback: Partial<Record<Script, Language>>;
  /** Scripts whose documents are detected one by one. */
  mixed: Script[];
}

export class LanguageMix {
  /** The languages the settings allow (all when `detect`). */
  readonly allowed: ReadonlySet<Language>;
  /** Whether the settings leave the choice to detection (`detect`) rather than a fixed list. */
  readonly detect: boolean;
  private fallbacks: Partial<Record<Script, Language>> = {};
  private mixed = new Set<Script>();
  private readonly counts = new Map<Language, number>();
  /** Bumped whenever the defaults change (a word's language in a document may then differ). */
  planVersion = 0;

  constructor(languages: 'detect' | readonly string[]) {
    this.detect = languages === 'detect';
    if (languages === 'detect') this.allowed = new Set(LANGUAGES);
    else this.allowed = new Set(languages.map(parseLanguage).filter((l): l is Language => l !== undefined));
    this.reset();
  }

  /** The languages the settings allow for a script, the default first. */
  candidates(script: Script): Language[] {
    return SCRIPT_LANGUAGES[script].filter((l) => this.allowed.has(l));
  }

  /** The language of a word of this script in a document of another script. */
  fallback(script: Script): Language | undefined {
    return this.fallbacks[script];
  }

  /** The languages a query word of this script is analyzed in: those of the indexed documents. */
  active(script: Script): Language[] {
    let langs = this.activeCache.get(script);
    if (!langs) {
      const found = this.candidates(script).filter((l) => (this.counts.get(l) ?? 0) > 0);
      const f = this.fallbacks[script];
      langs = found.length > 0 ? found : f ? [f] : [];
      this.activeCache.set(script, langs);
    }
    return langs;
  }

  /** `active` per script, dropped whenever a language gains its first document or loses its last. */
  private readonly activeCache = new Map<Script, Language[]>();
  /** Changes whenever `active` may answer differently (query analyses cached before are stale). */
  generation = 0;

  reset(): void {
    this.fallbacks = {};
    for (const script of Object.keys(SCRIPT_LANGUAGES) as Script[]) {
      const first = this.candidates(script)[0];
      if (first) this.fallbacks[script] = first;
    }
    // A fixed list with two languages of one script: each document is detected.
    this.mixed = new Set(this.detect ? [] : DETECTED_SCRIPTS.filter((s) => this.candidates(s).length > 1));
    this.counts.clear();
    this.activeCache.clear();
    this.generation++;
    this.planVersion++;
  }

  state(): LanguagePlanState {
    return { fallback: { ...this.fallbacks }, mixed: [...this.mixed] };
  }

  /** Takes a state from `state()` (a persisted index); languages the settings no longer allow are ignored. */
  restoreState(state: LanguagePlanState | undefined): void {
    this.reset();
    if (!state) return;
    for (const [script, l] of Object.entries(state.fallback ?? {}) as [Script, Language][])
      if (this.allowed.has(l) && SCRIPT_LANGUAGES[script]?.includes(l)) this.fallbacks[script] = l;
    for (const s of state.mixed ?? []) if (DETECTED_SCRIPTS.includes(s)) this.mixed.add(s);
    this.activeCache.clear();
    this.generation++;
    this.planVersion++;
    if (this.mixed.size > 0) void loadDetector();
  }

  /** Resolves when the detector is loaded if a script is detected document by document (a fixed list with two languages of one script). */
  async ready(): Promise<void> {
    if (this.mixed.size > 0) await loadDetector();
  }

  /** Forgets the documents counted (before they are indexed again). */
  clearCounts(): void {
    this.counts.clear();
    this.activeCache.clear();
    this.generation++;
  }

  /** A document of this language was indexed (+1) or removed (-1). */
  count(language: Language | undefined, delta: 1 | -1): void {
    if (!language) return;
    const before = this.counts.get(language) ?? 0;
    const after = Math.max(0, before + delta);
    this.counts.set(language, after);
    if ((before === 0) !== (after === 0)) {
      this.activeCache.clear();
      this.generation++;
    }
  }

  /**
   * Before a build: each script's default is its first language. Returns null when no script needs the
   * detector, else a promise that asks it (in a worker) about a sample of the documents of each script
   * with several languages, makes the majority that script's default, marks the script mixed when
   * another language is common, and resolves to whether anything changed (the documents indexed
   * meanwhile must then be indexed again).
   */
  plan(texts: readonly { text: string; declared?: string }[]): Promise<boolean> | null {
    this.reset();
    const scripts = DETECTED_SCRIPTS.filter((s) => this.candidates(s).length > 1);
    if (scripts.length === 0 || !this.detect) return null;
    const byScript = new Map<Script, string[]>();
    for (const { text, declared } of texts) {
      if (declared !== undefined && parseLanguage(declared)) continue;
      const { script } = dominantScript(text);
      if (!scripts.includes(script)) continue;
      let list = byScript.get(script);
      if (!list) byScript.set(script, (list = []));
      list.push(text);
    }
    if (byScript.size === 0) return null;
    const jobs = [...byScript].map(([script, all]) => {
      const step = Math.max(1, Math.floor(all.length / SAMPLE));
      const sample: string[] = [];
      for (let i = 0; i < all.length && sample.length < SAMPLE; i += step) sample.push(all[i]);
      return { script, candidates: this.candidates(script), texts: sample };
    });
    return detectInWorker(jobs).then(async (answers) => {
      if (!answers) return false;
      let changed = false;
      jobs.forEach(({ script }, i) => {
        const votes = new Map<Language, number>();
        for (const l of answers[i]) if (l) votes.set(l, (votes.get(l) ?? 0) + 1);
        const ranked = [...votes].sort((a, b) => b[1] - a[1]);
        if (ranked.length === 0) return;
        if (this.fallbacks[script] !== ranked[0][0]) changed = true;
        this.fallbacks[script] = ranked[0][0];
        const asked = answers[i].length;
        const common = ranked.filter(([, n]) => n >= MIXED_SHARE * asked && (n >= 2 || asked < 10));
        if (common.length > 1) {
          this.mixed.add(script);
          changed = true;
        }
      });
      if (this.mixed.size > 0) await loadDetector();
      this.activeCache.clear();
      this.generation++;
      if (changed) this.planVersion++;
      return changed;
    });
  }

  /**
   * The language of one document: its frontmatter `lang`/`language` when the analyzer knows it, else
   * for Chinese and Japanese its script, else for a mixed script the detector, else its script's default.
   */
  languageOf(text: string, declared?: string): Language | undefined {
    const named = parseLanguage(declared);
    if (named && this.allowed.has(named)) return named;
    const { script, kana } = dominantScript(text);
    if (script === 'han' || script === 'kana') {
      const ja = kana && this.allowed.has('japanese');
      return ja ? 'japanese' : this.fallbacks.han;
    }
    if (this.mixed.has(script) && detectorReady())
      return detectLanguage(text.slice(0, DETECT_CHARS), this.candidates(script)) ?? this.fallbacks[script];
    return this.fallbacks[script];
  }

  /** Whether a language applies to a word of this script. */
  static covers(language: Language, script: Script): boolean {
    return languageScripts(language).includes(script);
  }
}
