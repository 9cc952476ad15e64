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

/**
 * The scoring worker: eld loaded once, then one message per text (a long-lived process's query gate).
 * After its first answer it collects its garbage once (through the inspector, where there is one): what
 * loading eld left is about 10 MB of the worker's 60 MB, which V8 would keep in an idle worker.
 */
const SCORES_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = import(workerData.url).then(({ eld }) => eld);
const instances = new Map();
let collected = false;
function collectGarbage() {
  try {
    const session = new (require('node:inspector').Session)();
    session.connect();
    // Disconnected after the callback, not inside it (inside, the worker stopped answering: measured).
    session.post('HeapProfiler.collectGarbage', () => setImmediate(() => session.disconnect()));
  } catch {}
}
parentPort.on('message', ({ id, codes, text }) => {
  ready
    .then((eld) => {
      const key = codes.join(',');
      let d = instances.get(key);
      if (!d) instances.set(key, (d = eld.newInstance())), d.setLanguageSubset(codes);
      parentPort.postMessage({ id, scores: d.detect(text).getScores() });
      if (!collected) (collected = true), setImmediate(collectGarbage);
    })
    .catch(() => parentPort.postMessage({ id, scores: null }));
});
`;

type Scores = Record<string, number> | null;
let scorer:
  | { post: (codes: string[], text: string, hold?: boolean) => Promise<Scores> }
  | null // failed: callers load the detector in their own thread
  | undefined;

/** The worker that scores texts, started on first use; null when it cannot start. */
async function scoringWorker(): Promise<typeof scorer> {
  if (scorer !== undefined) return scorer;
  const url = eldUrl();
  if (!url) return (scorer = null);
  const { Worker } = await import('node:worker_threads');
  if (scorer !== undefined) return scorer;
  const worker = new Worker(SCORES_WORKER, { eval: true, workerData: { url } });
  const pending = new Map<number, { resolve: (s: Scores) => void; hold: boolean }>();
  let held = 0;
  let next = 0;
  const fail = () => {
    scorer = null;
    for (const { resolve } of pending.values()) resolve(null);
    pending.clear();
  };
  worker.on('message', ({ id, scores }: { id: number; scores: Scores }) => {
    const asked = pending.get(id);
    pending.delete(id);
    if (asked?.hold && --held === 0) worker.unref();
    asked?.resolve(scores);
  });
  worker.once('error', fail);
  worker.once('exit', fail);
  // It holds the process open only while an answer is awaited (`hold`: not the warm-up's). (After the
  // listeners: adding a 'message' listener refs it again.)
  worker.unref();
  return (scorer = {
    post: (codes, text, hold = true) =>
      new Promise<Scores>((resolve) => {
        const id = next++;
        if (hold && held++ === 0) worker.ref();
        pending.set(id, { resolve, hold });
        worker.postMessage({ id, codes, text });
      }),
  });
}

/**
 * Starts the scoring worker and has it load eld and score a text among `candidates`, without holding the
 * process open: a long-lived process calls it once its hybrid search is ready, so that its first query
 * the gate sends to the detector does not wait for eld's load (~0.6 s). Does nothing once eld is loaded here.
 */
export function prepareLanguageScoresAside(candidates: readonly Language[]): void {
  if (eld || candidates.length === 0 || asideState !== 'off') return;
  asideState = 'loading';
  void scoringWorker()
    .then((worker) => worker?.post(candidates.map(languageCode), 'warm up', false))
    .then((scores) => (asideState = scores ? 'ready' : 'failed'));
}

let asideState: 'off' | 'loading' | 'ready' | 'failed' = 'off';

/** Whether prepareLanguageScoresAside was called, and how its warm-up went (tests, diagnostics). */
export function languageScoresAsideState(): typeof asideState {
  return asideState;
}

/**
 * languageScores, computed in a worker thread: eld's load (~0.7 s of CPU, +80 MB) and its detections never
 * hold this thread, so a server's other requests go on while a first non-English query waits for it.
 * Falls back to this thread when the worker cannot run.
 */
export async function languageScoresAside(
  text: string,
  candidates: readonly Language[],
): Promise<Map<Language, number> | undefined> {
  if (candidates.length === 0) return undefined;
  const worker = eld ? null : await scoringWorker();
  const scores = worker ? await worker.post(candidates.map(languageCode), text.slice(0, DETECT_CHARS)) : null;
  if (!scores) return (await loadDetector()) ? languageScores(text, candidates) : undefined;
  return byLanguage(scores);
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
  return byLanguage(scores);
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

/** eld's scores by language code, as scores by our languages (codes we do not know left out). */
function byLanguage(scores: Record<string, number>): Map<Language, number> {
  const out = new Map<Language, number>();
  for (const [code, score] of Object.entries(scores)) {
    const language = BY_CODE.get(code);
    if (language) out.set(language, score);
  }
  return out;
}
