/**
 * Bodies prepared for snippets (SnippetText), kept in the persisted index: a restored process reads a
 * result's prepared body instead of making it (plain text, every word analyzed, term ids, sorted). That
 * preparation was what the first queries of a restored server paid (13 of its first 350 queries prepared
 * 132 bodies, 1 ms each cold: docs/performance.md, branch `first350`), and the one-shot's first search too.
 *
 * Layout (packed.ts): `ids`, `languages` and `terms` (the dictionary of the saved term ids) as JSON; binary:
 * `docs` (6 uint32 a body: text bytes, text length, runs, occurrences, lead, the markdown's length), `text` (the plain
 * texts in UTF-8, one after the other), `starts` and `ends` (a uint32 a word run: its offsets in its body's
 * text), `termIds` and `termRuns` (a uint32 an occurrence: its saved term number and its run), each body's
 * occurrences ordered by term, then run. The arrays are SnippetText's own: in a fresh process, where the
 * saved term numbers are the store's ids (mapTerms), a body is read where it lies, its arrays views of the
 * cache's bytes, not copied; every body's arrays are checked in one pass when the first is read (branch
 * `warm350`: reading and checking each body's compact form on its own, in code not yet compiled, cost the
 * first queries 0.3-1 ms a body). A body put again since (ResultStore.put: `forget`), in another
 * language or of another length, or whose saved entry is not well formed (the cache is signed, but read as
 * hostile), is prepared from its markdown as before.
 */
import { pack, unpack } from './packed.js';
import { SnippetText, type TermIds } from './snippet.js';
import { fromBytes, toBytes } from './typed-arrays.js';

const FORMAT = 2;
/** Plain text saved at most (UTF-8): past it nothing is saved (a large backlog's cache stays as it was). */
export const MAX_SAVED_TEXT_BYTES = 16 * 2 ** 20;
const FIELDS = 6;
const U32 = 0xffff_ffff;

/** A body to save: its document, the markdown it was prepared from, the language it was analyzed in. */
export interface SavableBody {
  id: string;
  body: string;
  language: string;
  snippet: SnippetText;
}

/** The bodies as bytes, or undefined when their text is over `maxTextBytes`. `ids`: the store's term ids. */
export function encodeSnippets(
  bodies: readonly SavableBody[],
  ids: TermIds,
  { maxTextBytes = MAX_SAVED_TEXT_BYTES, partial = false } = {},
): Uint8Array | undefined {
  const encoder = new TextEncoder();
  const names = ids.terms();
  const used = new Uint8Array(names.length);
  const kept: { body: SavableBody; text: Uint8Array; parts: ReturnType<SnippetText['parts']> }[] = [];
  let textBytes = 0;
  let runs = 0;
  let occurrences = 0;
  for (const body of bodies) {
    const parts = body.snippet.parts();
    // Else prepared from its markdown when asked for (UTF-8 would not give back a lone surrogate).
    if (!ordered(parts.starts, parts.ends) || LONE_SURROGATE.test(parts.text)) continue;
    const text = encoder.encode(parts.text);
    textBytes += text.length;
    if (textBytes > maxTextBytes) return undefined;
    for (const id of parts.termIds) used[id] = 1;
    runs += parts.starts.length;
    occurrences += parts.termIds.length;
    kept.push({ body, text, parts });
  }
  // The dictionary in the order of the store's ids, so each body's saved numbers keep its order.
  const fileId = new Uint32Array(names.length);
  const terms: string[] = [];
  for (let id = 0; id < names.length; id++) if (used[id]) fileId[id] = terms.push(names[id]) - 1;
  const docs = new Uint32Array(kept.length * FIELDS);
  const text = new Uint8Array(textBytes);
  const starts = new Uint32Array(runs);
  const ends = new Uint32Array(runs);
  const termIds = new Uint32Array(occurrences);
  const termRuns = new Uint32Array(occurrences);
  let t = 0;
  let r = 0;
  let o = 0;
  kept.forEach(({ body, text: bytes, parts }, i) => {
    text.set(bytes, t);
    t += bytes.length;
    starts.set(parts.starts, r);
    ends.set(parts.ends, r);
    r += parts.starts.length;
    for (let k = 0; k < parts.termIds.length; k++) termIds[o + k] = fileId[parts.termIds[k]];
    termRuns.set(parts.termRuns, o);
    o += parts.termIds.length;
    docs.set(
      [
        bytes.length,
        parts.text.length,
        parts.starts.length,
        parts.termIds.length,
        parts.lead,
        body.body.length,
      ],
      i * FIELDS,
    );
  });
  return pack({
    format: FORMAT,
    partial,
    ids: kept.map((k) => k.body.id),
    languages: kept.map((k) => k.body.language),
    terms,
    docs: toBytes(docs),
    text,
    starts: toBytes(starts),
    ends: toBytes(ends),
    termIds: toBytes(termIds),
    termRuns: toBytes(termRuns),
  });
}

/** Whether the runs are in text order and do not overlap (as the analyzer gives them). */
function ordered(starts: Uint32Array, ends: Uint32Array): boolean {
  let end = 0;
  for (let k = 0; k < starts.length; k++) {
    if (starts[k] < end || ends[k] < starts[k]) return false;
    end = ends[k];
  }
  return true;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The saved bodies of a persisted index, each read back when first asked for. */
export class SavedSnippets {
  private readonly at = new Map<string, number>();
  /** Where each body's text, runs and occurrences begin. */
  private readonly textAt: Uint32Array;
  private readonly runAt: Uint32Array;
  private readonly occurrenceAt: Uint32Array;
  /** The store's term id of each saved term, for `mappedFor`; `same` when each is its saved number. */
  private storeId: Uint32Array;
  private mappedFor: TermIds | null = null;
  private same = false;
  /** Per body: 0 not checked yet, 1 well formed, 2 not (`wellFormed`). */
  private readonly valid: Uint8Array;
  /** Bodies before this one have been checked by `checkUntil`. */
  private checked = 0;
  /** Bytes that are not UTF-8 throw (the entry is then not used). */
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  private constructor(
    /** Only some of the backlog's bodies were saved (ResultStore.savePrepared with background work off). */
    readonly partial: boolean,
    private readonly languages: string[],
    private readonly terms: string[],
    private readonly docs: Uint32Array,
    private readonly text: Uint8Array,
    private readonly starts: Uint32Array,
    private readonly ends: Uint32Array,
    private readonly termIds: Uint32Array,
    private readonly termRuns: Uint32Array,
    ids: string[],
  ) {
    const n = ids.length;
    this.textAt = new Uint32Array(n + 1);
    this.runAt = new Uint32Array(n + 1);
    this.occurrenceAt = new Uint32Array(n + 1);
    for (let i = 0; i < n; i++) {
      this.at.set(ids[i], i);
      // Float sums: a hostile count cannot wrap around to a total that matches.
      this.textAt[i + 1] = Math.min(U32, this.textAt[i] + docs[i * FIELDS]);
      this.runAt[i + 1] = Math.min(U32, this.runAt[i] + docs[i * FIELDS + 2]);
      this.occurrenceAt[i + 1] = Math.min(U32, this.occurrenceAt[i] + docs[i * FIELDS + 3]);
    }
    this.storeId = new Uint32Array(terms.length);
    this.valid = new Uint8Array(n);
  }

  /**
   * Gives every saved term its id in `ids`, in the saved order: in a store with no ids yet (a restored
   * process before its first query) they are the saved numbers, and the saved bodies are read in place.
   */
  mapTerms(ids: TermIds): void {
    if (this.mappedFor === ids) return;
    this.mappedFor = ids;
    this.same = true;
    for (let f = 0; f < this.terms.length; f++) {
      this.storeId[f] = ids.id(this.terms[f]);
      if (this.storeId[f] !== f) this.same = false;
    }
  }

  /** undefined when the bytes are not such a table (nothing is thrown: the bodies are then prepared anew). */
  static decode(bytes: unknown): SavedSnippets | undefined {
    if (!(bytes instanceof Uint8Array)) return undefined;
    try {
      const v = unpack(bytes) as Record<string, unknown>;
      const { ids, languages, terms } = v;
      if (v.format !== FORMAT || !isStrings(ids) || !isStrings(languages) || !isStrings(terms))
        return undefined;
      if (languages.length !== ids.length) return undefined;
      const u32 = (b: unknown) => fromBytes(b as Uint8Array, Uint32Array);
      const docs = u32(v.docs);
      const [starts, ends, termIds, termRuns] = [u32(v.starts), u32(v.ends), u32(v.termIds), u32(v.termRuns)];
      if (!(v.text instanceof Uint8Array) || docs.length !== ids.length * FIELDS) return undefined;
      if (starts.length !== ends.length || termIds.length !== termRuns.length) return undefined;
      const saved = new SavedSnippets(
        v.partial === true,
        languages,
        terms,
        docs,
        v.text,
        starts,
        ends,
        termIds,
        termRuns,
        ids,
      );
      const n = ids.length;
      return saved.textAt[n] === v.text.length &&
        saved.runAt[n] === starts.length &&
        saved.occurrenceAt[n] === termIds.length
        ? saved
        : undefined;
    } catch {
      return undefined;
    }
  }

  /** The document was put again: its saved body is not its body any more. */
  forget(id: string): void {
    this.at.delete(id);
  }

  /**
   * The saved prepared body of `id`, if it was prepared in this `language` from a body of `bodyLength`
   * (not compared when undefined) and is well formed; its term ids made `ids`' own (what
   * SnippetText.prepare would have given it).
   */
  take(id: string, bodyLength: number | undefined, language: string, ids: TermIds): SnippetText | undefined {
    const i = this.at.get(id);
    if (i === undefined) return undefined;
    const d = i * FIELDS;
    if (this.languages[i] !== language || (bodyLength !== undefined && this.docs[d + 5] !== bodyLength))
      return undefined;
    if (this.valid[i] === 0) this.valid[i] = this.wellFormed(i) ? 1 : 2;
    if (this.valid[i] !== 1) return undefined;
    let text: string;
    try {
      text = this.decoder.decode(this.text.subarray(this.textAt[i], this.textAt[i + 1]));
    } catch {
      return undefined;
    }
    if (text.length !== this.docs[d + 1]) return undefined;
    const starts = this.starts.subarray(this.runAt[i], this.runAt[i + 1]);
    const ends = this.ends.subarray(this.runAt[i], this.runAt[i + 1]);
    let termIds = this.termIds.subarray(this.occurrenceAt[i], this.occurrenceAt[i + 1]);
    let termRuns = this.termRuns.subarray(this.occurrenceAt[i], this.occurrenceAt[i + 1]);
    this.mapTerms(ids);
    if (!this.same) {
      // Ids the store gave first (a query's terms): a copy in the store's ids, sorted again if they are
      // out of order (by term, then run, as prepared).
      termIds = termIds.map((f) => this.storeId[f]);
      termRuns = termRuns.slice();
      if (termIds.some((id, k) => k > 0 && id < termIds[k - 1])) sortOccurrences(termIds, termRuns);
    }
    return SnippetText.of(text, this.docs[d + 4], starts, ends, termIds, termRuns);
  }

  /**
   * Checks the bodies not checked yet, until `performance.now()` reaches `until` (at least 32 of them);
   * true when every body is checked. The background warm runs it before taking bodies: checked in one
   * loop, a body cost a twentieth of checking it on its own in code not yet compiled (a query's take).
   */
  checkUntil(until: number): boolean {
    const n = this.languages.length;
    while (this.checked < n) {
      const i = this.checked++;
      if (this.valid[i] === 0) this.valid[i] = this.wellFormed(i) ? 1 : 2;
      if ((i & 31) === 31 && performance.now() >= until) break;
    }
    return this.checked >= n;
  }

  /**
   * Whether body `i` is well formed: its runs in order inside its text, its occurrences by term then run,
   * each term and run in range, the lead inside the text (that the text is UTF-8 of that length is
   * checked when it is read).
   */
  private wellFormed(i: number): boolean {
    const { docs, starts, ends, termIds, termRuns, runAt, occurrenceAt } = this;
    const chars = docs[i * FIELDS + 1];
    if (docs[i * FIELDS + 4] > chars) return false;
    for (let r = runAt[i], end = 0; r < runAt[i + 1]; r++) {
      if (starts[r] < end || ends[r] < starts[r] || ends[r] > chars) return false;
      end = ends[r];
    }
    const runs = runAt[i + 1] - runAt[i];
    const terms = this.terms.length;
    for (let o = occurrenceAt[i], term = -1, run = 0; o < occurrenceAt[i + 1]; o++) {
      const t = termIds[o];
      const r = termRuns[o];
      if (t >= terms || r >= runs || t < term || (t === term && r < run)) return false;
      term = t;
      run = r;
    }
    return true;
  }
}

function sortOccurrences(termIds: Uint32Array, termRuns: Uint32Array): void {
  const order = Array.from(termIds.keys()).sort(
    (a, b) => termIds[a] - termIds[b] || termRuns[a] - termRuns[b],
  );
  const ids = order.map((k) => termIds[k]);
  const runs = order.map((k) => termRuns[k]);
  termIds.set(ids);
  termRuns.set(runs);
}
