/**
 * Bodies prepared for snippets (SnippetText), kept in the persisted index: a restored process reads a
 * result's prepared body instead of making it (plain text, every word analyzed, term ids, sorted). That
 * preparation was what the first queries of a restored server paid (13 of its first 350 queries prepared
 * 132 bodies, 1 ms each cold: docs/performance.md, branch `first350`), and the one-shot's first search too.
 *
 * Layout (packed.ts): `ids`, `languages` and `terms` (the dictionary of the saved term ids) as JSON; binary:
 * `docs` (6 uint32 a body: text bytes, runs, term entries, occurrences, lead, the markdown's length),
 * `text` (the plain texts in UTF-8, one after the other), `runs` (a uint32 a word run: the gap since the
 * previous run's end << 16 | the run's length), `termIds` (a uint32 an entry: term << 12 | how many
 * occurrences in a row, at most 4,095) and `termRuns` (a uint16 an occurrence: its run); each body's
 * occurrences are ordered by term, then run. A body put again since (ResultStore.put: `forget`), in another language or of another length, or
 * whose saved entry is not well formed (the cache is signed, but read as hostile), is prepared from its
 * markdown as before.
 */
import { pack, unpack } from './packed.js';
import { SnippetText, type TermIds } from './snippet.js';
import { fromBytes, toBytes } from './typed-arrays.js';

const FORMAT = 1;
/** Plain text saved at most (UTF-8): past it nothing is saved (a large backlog's cache stays as it was). */
export const MAX_SAVED_TEXT_BYTES = 16 * 2 ** 20;
const FIELDS = 6;
const U16 = 0xffff;
/** An entry of `termIds`: the term's number above COUNT_BITS, the count of its occurrences below. */
const COUNT_BITS = 12;
const MAX_COUNT = 2 ** COUNT_BITS - 1;
const MAX_TERMS = 2 ** (32 - COUNT_BITS);
const U32 = 0xffff_ffff;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Little-endian bytes of 16-bit values. */
function u16Bytes(a: Uint16Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const out = new Uint8Array(a.length * 2);
  const view = new DataView(out.buffer);
  a.forEach((v, i) => view.setUint16(i * 2, v, true));
  return out;
}

/** The 16-bit values of little-endian bytes: where they lie when aligned, else a copy. */
function u16Of(bytes: unknown): Uint16Array {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength % 2 !== 0) throw new Error('not 16-bit values');
  if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0)
    return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Uint16Array.from({ length: bytes.byteLength / 2 }, (_, i) => view.getUint16(i * 2, true));
}

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
  maxTextBytes = MAX_SAVED_TEXT_BYTES,
): Uint8Array | undefined {
  const encoder = new TextEncoder();
  const names = ids.terms();
  const used = new Uint8Array(names.length);
  const kept: { body: SavableBody; text: Uint8Array; parts: ReturnType<SnippetText['parts']> }[] = [];
  let textBytes = 0;
  let runs = 0;
  let entries = 0;
  let occurrences = 0;
  if (names.length > MAX_TERMS) return undefined;
  for (const body of bodies) {
    const parts = body.snippet.parts();
    // Else prepared from its markdown when asked for (UTF-8 would not give back a lone surrogate).
    if (!fitsRuns(parts.starts, parts.ends) || LONE_SURROGATE.test(parts.text)) continue;
    const text = encoder.encode(parts.text);
    textBytes += text.length;
    if (textBytes > maxTextBytes) return undefined;
    const n = parts.termIds.length;
    for (let k = 0, count = 0; k < n; k++) {
      used[parts.termIds[k]] = 1;
      count = k > 0 && parts.termIds[k] === parts.termIds[k - 1] && count < MAX_COUNT ? count + 1 : 1;
      if (count === 1) entries++;
    }
    runs += parts.starts.length;
    occurrences += n;
    kept.push({ body, text, parts });
  }
  // The dictionary in the order of the store's ids, so each body's saved ids keep its order.
  const fileId = new Uint32Array(names.length);
  const terms: string[] = [];
  for (let id = 0; id < names.length; id++) if (used[id]) fileId[id] = terms.push(names[id]) - 1;
  const docs = new Uint32Array(kept.length * FIELDS);
  const text = new Uint8Array(textBytes);
  const runWords = new Uint32Array(runs);
  const termIds = new Uint32Array(entries);
  const termRuns = new Uint16Array(occurrences);
  let t = 0;
  let r = 0;
  let e = 0;
  let o = 0;
  kept.forEach(({ body, text: bytes, parts }, i) => {
    const e0 = e;
    text.set(bytes, t);
    t += bytes.length;
    let end = 0;
    for (let k = 0; k < parts.starts.length; k++) {
      runWords[r++] = ((parts.starts[k] - end) * 0x10000 + (parts.ends[k] - parts.starts[k])) >>> 0;
      end = parts.ends[k];
    }
    for (let k = 0; k < parts.termIds.length; k++) {
      const f = fileId[parts.termIds[k]];
      const last = e > e0 ? termIds[e - 1] : -1;
      if (last >= 0 && last >>> COUNT_BITS === f && (last & MAX_COUNT) < MAX_COUNT) termIds[e - 1]++;
      else termIds[e++] = ((f << COUNT_BITS) | 1) >>> 0;
      termRuns[o++] = parts.termRuns[k];
    }
    docs.set(
      [bytes.length, parts.starts.length, e - e0, parts.termIds.length, parts.lead, body.body.length],
      i * FIELDS,
    );
  });
  return pack({
    format: FORMAT,
    ids: kept.map((k) => k.body.id),
    languages: kept.map((k) => k.body.language),
    terms,
    docs: toBytes(docs),
    text,
    runs: toBytes(runWords),
    termIds: toBytes(termIds),
    termRuns: u16Bytes(termRuns),
  });
}

/** Whether the runs can be numbered in 16 bits and each one's gap and length fit 16 bits (in order, not overlapping). */
function fitsRuns(starts: Uint32Array, ends: Uint32Array): boolean {
  if (starts.length > U16 + 1) return false;
  let end = 0;
  for (let k = 0; k < starts.length; k++) {
    if (starts[k] < end || starts[k] - end > U16 || ends[k] < starts[k] || ends[k] - starts[k] > U16)
      return false;
    end = ends[k];
  }
  return true;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The saved bodies of a persisted index, each read back when first asked for. */
export class SavedSnippets {
  private readonly at = new Map<string, number>();
  /** Where each body's text, runs, term entries and occurrences begin. */
  private readonly textAt: Uint32Array;
  private readonly runAt: Uint32Array;
  private readonly entryAt: Uint32Array;
  private readonly occurrenceAt: Uint32Array;
  /** The store's term id of each saved term, for `mappedFor`. */
  private storeId: Uint32Array;
  private mappedFor: TermIds | null = null;
  /** Bytes that are not UTF-8 throw (the entry is then not used). */
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  private constructor(
    private readonly languages: string[],
    private readonly terms: string[],
    private readonly docs: Uint32Array,
    private readonly text: Uint8Array,
    private readonly runs: Uint32Array,
    private readonly termIds: Uint32Array,
    private readonly termRuns: Uint16Array,
    ids: string[],
  ) {
    const n = ids.length;
    this.textAt = new Uint32Array(n + 1);
    this.runAt = new Uint32Array(n + 1);
    this.entryAt = new Uint32Array(n + 1);
    this.occurrenceAt = new Uint32Array(n + 1);
    for (let i = 0; i < n; i++) {
      this.at.set(ids[i], i);
      // Float sums: a hostile count cannot wrap around to a total that matches.
      this.textAt[i + 1] = Math.min(U32, this.textAt[i] + docs[i * FIELDS]);
      this.runAt[i + 1] = Math.min(U32, this.runAt[i] + docs[i * FIELDS + 1]);
      this.entryAt[i + 1] = Math.min(U32, this.entryAt[i] + docs[i * FIELDS + 2]);
      this.occurrenceAt[i + 1] = Math.min(U32, this.occurrenceAt[i] + docs[i * FIELDS + 3]);
    }
    this.storeId = new Uint32Array(terms.length);
  }

  /**
   * Gives every saved term its id in `ids`, in the saved order: in a store with no ids yet (a restored
   * process before its first query) they are the saved ids, and the saved bodies need no sort.
   */
  mapTerms(ids: TermIds): void {
    if (this.mappedFor === ids) return;
    this.mappedFor = ids;
    for (let f = 0; f < this.terms.length; f++) this.storeId[f] = ids.id(this.terms[f]);
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
      const termIds = u32(v.termIds);
      const termRuns = u16Of(v.termRuns);
      if (!(v.text instanceof Uint8Array) || docs.length !== ids.length * FIELDS) return undefined;
      const saved = new SavedSnippets(languages, terms, docs, v.text, u32(v.runs), termIds, termRuns, ids);
      const n = ids.length;
      return saved.textAt[n] === v.text.length &&
        saved.runAt[n] === saved.runs.length &&
        saved.entryAt[n] === termIds.length &&
        saved.occurrenceAt[n] === termRuns.length
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
   * The saved prepared body of `id`, if it was prepared from a body of this length in this `language` and
   * is well formed; its term ids made `ids`' own (what SnippetText.prepare would have given it).
   */
  take(id: string, bodyLength: number, language: string, ids: TermIds): SnippetText | undefined {
    const i = this.at.get(id);
    if (i === undefined) return undefined;
    const d = i * FIELDS;
    const runCount = this.docs[d + 1];
    const lead = this.docs[d + 4];
    if (this.languages[i] !== language || this.docs[d + 5] !== bodyLength) return undefined;
    let text: string;
    try {
      text = this.decoder.decode(this.text.subarray(this.textAt[i], this.textAt[i + 1]));
    } catch {
      return undefined;
    }
    if (lead > text.length) return undefined;
    const from = this.occurrenceAt[i];
    const count = this.occurrenceAt[i + 1] - from;
    // One allocation for the four arrays.
    const all = new Uint32Array(2 * runCount + 2 * count);
    const starts = all.subarray(0, runCount);
    const ends = all.subarray(runCount, 2 * runCount);
    const termIds = all.subarray(2 * runCount, 2 * runCount + count);
    const termRuns = all.subarray(2 * runCount + count);
    let end = 0;
    for (let k = 0, r = this.runAt[i]; k < runCount; k++, r++) {
      const word = this.runs[r];
      starts[k] = end + (word >>> 16);
      end = ends[k] = starts[k] + (word & U16);
      if (end > text.length) return undefined;
    }
    this.mapTerms(ids);
    let sorted = true;
    let k = 0;
    let before = -1;
    for (let e = this.entryAt[i]; e < this.entryAt[i + 1]; e++) {
      const entry = this.termIds[e];
      const f = entry >>> COUNT_BITS;
      const n = entry & MAX_COUNT;
      // Saved by term, then run (encodeSnippets): anything else is not a table it wrote.
      if (f >= this.terms.length || f < before || n === 0 || k + n > count) return undefined;
      const mapped = this.storeId[f];
      for (let end = k + n; k < end; k++) {
        const run = this.termRuns[from + k];
        if (run >= runCount || (f === before && run < termRuns[k - 1])) return undefined;
        if (k > 0 && (mapped < termIds[k - 1] || (mapped === termIds[k - 1] && run < termRuns[k - 1])))
          sorted = false;
        termIds[k] = mapped;
        termRuns[k] = run;
        before = f;
      }
    }
    if (k !== count) return undefined;
    // Ids the store gave first (a query's terms) can put them out of order: by term, then run, as prepared.
    if (!sorted) sortOccurrences(termIds, termRuns);
    return SnippetText.of(text, lead, starts, ends, termIds, termRuns);
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
