/**
 * The language of a document, when neither its frontmatter nor its script says it: the `eld` detector
 * (Efficient Language Detector, its `extrasmall` data), restricted to the languages the analyzer may
 * choose for that script. docs/search.md has the measurements behind the choice (eld against tinyld,
 * franc-min, lande, languagedetect: accuracy on short texts, speed, load time).
 *
 * eld takes about 0.4-0.8 s and 80 MB to load. A build asks it about a sample of the documents in a
 * worker thread, while the index is built with each script's default language (the worker's memory
 * goes when it ends); only a backlog that mixes languages of one script loads it in this thread, to
 * detect every document of that script (LanguageMix).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { languageCode, LANGUAGES, type Language, type Script } from './languages.js';

interface EldResult {
  language: string;
  isReliable(): boolean;
  getScores(): Record<string, number>;
}
interface Eld {
  detect(text: string): EldResult;
  setLanguageSubset(languages: string[] | boolean): unknown;
  newInstance(): Eld;
}

let eld: Eld | null = null;
let loading: Promise<Eld | null> | null = null;

/** Loads the detector once; null when it cannot be loaded (documents then take their script's default). */
export function loadDetector(): Promise<Eld | null> {
  loading ??= import('eld/extrasmall')
    .then((m) => (eld = (m as unknown as { eld: Eld }).eld))
    .catch(() => null);
  return loading;
}

const ELD_ENTRY = 'eld/src/entries/static.extrasmall.js';

/** The file URL of eld's entry point (import-only exports: located through the module search paths). */
function eldUrl(): string | null {
  for (const dir of createRequire(import.meta.url).resolve.paths('eld') ?? []) {
    const file = join(dir, ELD_ENTRY);
    if (existsSync(file)) return pathToFileURL(file).href;
  }
  return null;
}

/** The worker: plain JavaScript, so it runs the same from TypeScript sources and from dist/. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.url)
  .then(({ eld }) => parentPort.postMessage(workerData.jobs.map(({ codes, texts }) => {
    const d = eld.newInstance();
    d.setLanguageSubset(codes);
    return texts.map((t) => d.detect(t).language);
  })))
  .catch((e) => parentPort.postMessage({ error: String(e) }));
`;

/**
 * The languages of a few texts per script, detected in a worker thread (candidates per job); null when
 * the detector cannot run. Each answer is a candidate or undefined.
 */
export async function detectInWorker(
  jobs: { candidates: readonly Language[]; texts: string[] }[],
): Promise<(Language | undefined)[][] | null> {
  const url = eldUrl();
  if (!url) return null;
  const data = {
    url,
    jobs: jobs.map((j) => ({
      codes: j.candidates.map(languageCode),
      texts: j.texts.map((t) => t.slice(0, DETECT_CHARS)),
    })),
  };
  // Loaded when first used (a build), not with the module: a command read from the cache never needs it.
  const { Worker } = await import('node:worker_threads');
  const answer = await new Promise<unknown>((resolve) => {
    const worker = new Worker(WORKER, { eval: true, workerData: data });
    worker.once('message', (m) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  if (!Array.isArray(answer)) return null;
  return (answer as string[][]).map((codes, i) =>
    codes.map((c) => {
      const l = BY_CODE.get(c);
      return l && jobs[i].candidates.includes(l) ? l : undefined;
    }),
  );
}

/** Whether the detector is loaded (synchronous callers use it only then). */
export function detectorReady(): boolean {
  return eld !== null;
}

const BY_CODE = new Map<string, Language>(LANGUAGES.map((l) => [languageCode(l), l]));
const instances = new Map<string, Eld>();

/** Characters of a document the detector reads: enough for 99.9% on SciFact abstracts, and cheap. */
export const DETECT_CHARS = 300;

/**
 * The language of `text` among `candidates` (all of one script), or undefined when the detector is not
 * loaded, knows none of them, or has no answer.
 */
export function detectLanguage(text: string, candidates: readonly Language[]): Language | undefined {
  if (!eld || candidates.length === 0) return undefined;
  const code = detectorFor(candidates).detect(text.slice(0, DETECT_CHARS)).language;
  const language = BY_CODE.get(code);
  return language && candidates.includes(language) ? language : undefined;
}

/** eld restricted to `candidates` (loaded: see detectorReady), one instance per set. */
function detectorFor(candidates: readonly Language[]): Eld {
  const codes = candidates.map(languageCode);
  const key = codes.join(',');
  let detector = instances.get(key);
  if (!detector) {
    detector = eld!.newInstance();
    detector.setLanguageSubset(codes);
    instances.set(key, detector);
  }
  return detector;
}

/** The detector's score of each of `candidates` it finds some evidence for (undefined when not loaded). */
export function languageScores(
  text: string,
  candidates: readonly Language[],
): Map<Language, number> | undefined {
  if (!eld || candidates.length === 0) return undefined;
  const scores = detectorFor(candidates).detect(text.slice(0, DETECT_CHARS)).getScores();
  const out = new Map<Language, number>();
  for (const [code, score] of Object.entries(scores)) {
    const language = BY_CODE.get(code);
    if (language) out.set(language, score);
  }
  return out;
}

/** Letters counted per script in the first characters of a text: the script a document is written in. */
export function dominantScript(text: string): { script: Script; kana: boolean } {
  let latin = 0;
  let cyrillic = 0;
  let han = 0;
  let kana = 0;
  let other = 0;
  const end = Math.min(text.length, 600);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) latin++;
    } else if (c >= 0xc0 && c < 0x250) latin++;
    else if (c >= 0x400 && c < 0x530) cyrillic++;
    else if (c >= 0x3040 && c < 0x3100) kana++;
    else if ((c >= 0x4e00 && c < 0xa000) || (c >= 0x3400 && c < 0x4dc0)) han++;
    else if (c >= 0x370) other++;
  }
  const best = Math.max(latin, cyrillic, han + kana, other);
  if (best === 0) return { script: 'other', kana: false };
  if (best === latin) return { script: 'latin', kana: kana > 0 };
  if (best === cyrillic) return { script: 'cyrillic', kana: kana > 0 };
  if (best === han + kana) return { script: kana > 0 ? 'kana' : 'han', kana: kana > 0 };
  return { script: 'other', kana: kana > 0 };
}
