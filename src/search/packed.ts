/**
 * Values as bytes for the persisted index: JSON with its binary leaves set apart, read back by V8's
 * native `JSON.parse`. A short-lived process decodes its cache once, with every decoder still cold:
 * a JavaScript msgpack decoder took 40-110 ms there for what JSON.parse reads in 2-20 ms (the same
 * decoder, warmed up, is 5-10x faster: a one-shot command never gets there).
 *
 * Layout: 4 bytes (uint32 LE), the length of the JSON text; the JSON (ASCII: every other character
 * escaped; spaces after it); then the binary leaves, one after the other, each at a multiple of 8 bytes
 * from the start (zeros between). Values JSON cannot hold are single-key objects in the JSON, their key
 * starting with NUL (a character no real key begins with, and escaped if one does):
 * - `{"\u0000b":[offset,length]}`: an ArrayBufferView, read back as a Uint8Array (a view of the bytes);
 * - `{"\u0000u":[offset,length]}`: the same, given to pack as `new Unread(view)`: in bytes read when first
 *   needed (unread-bytes.ts) it is not read by unpack, its reader reads the parts it uses;
 * - `{"\u0000d":ms}`: a Date; `{"\u0000n":"NaN"}` (or "Infinity", "-Infinity"): such a number;
 * - `{"\u0000o":{...}}`: an object of the data whose only key starts with NUL, kept as it was.
 * `undefined` in an object is left out (JSON's rule); in an array it becomes null. A Map becomes an object.
 */
import { readBytes } from '../storage/unread-bytes.js';

const TAG = '\u0000';
const NOT_ASCII = /[\u0080-\uffff]/g;
const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
const LENGTH_BYTES = 4;

/** A binary leaf that unpack leaves unread (see the layout): its reader calls readBytes for what it reads. */
export class Unread {
  constructor(readonly view: ArrayBufferView) {}
}

export function pack(value: unknown): Uint8Array {
  const packer = packing();
  return packer.finish(JSON.stringify(packer.tagged(value)));
}

/**
 * `pack(list)`, the same bytes, and where each element's JSON ends in the text (`ends[i]`: the offset of
 * the `,` or `]` after it, from the first byte of the text): `unpackElement` reads one element alone.
 */
export function packList(list: readonly unknown[]): { bytes: Uint8Array; ends: Uint32Array } {
  const packer = packing();
  const ends = new Uint32Array(list.length);
  // JSON.stringify of a list is its elements' (null for undefined), joined by `,` inside `[...]`.
  const parts = list.map((v) => JSON.stringify(packer.tagged(v)) ?? 'null');
  let at = 1;
  for (let i = 0; i < parts.length; i++) {
    // pack's escapes keep one character per UTF-16 unit inside an element's own text: count them after.
    at += escaped(parts[i]).length;
    ends[i] = at++;
  }
  return { bytes: packer.finish(`[${parts.join(',')}]`), ends };
}

/** Every character past ASCII escaped (`\u00e9`): the text is then read as Latin-1 (see packing). */
const escaped = (json: string) => json.replace(NOT_ASCII, escapeUnit);

/** pack's two halves: values tagged (their binary leaves set apart), then the JSON text and the leaves as bytes. */
function packing(): { tagged: (v: unknown) => unknown; finish: (json: string) => Uint8Array } {
  const leaves: Uint8Array[] = [];
  let offset = 0;
  const tagged = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'number' && !Number.isFinite(v)) return { [`${TAG}n`]: String(v) };
      return v;
    }
    const unread = v instanceof Unread;
    if (unread || ArrayBuffer.isView(v)) {
      const view = unread ? v.view : v;
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      // Written whole, so the bytes of a restored view are read first.
      readBytes(bytes);
      leaves.push(bytes);
      const at = offset;
      offset += bytes.byteLength + pad(bytes.byteLength);
      return { [`${TAG}${unread ? 'u' : 'b'}`]: [at, bytes.byteLength] };
    }
    if (v instanceof Date) return { [`${TAG}d`]: v.getTime() };
    if (Array.isArray(v)) return v.map(tagged);
    const out: Record<string, unknown> = {};
    // A Map is kept as an object (as msgpack read it back).
    for (const [k, child] of v instanceof Map ? v.entries() : Object.entries(v))
      if (child !== undefined) out[k] = tagged(child);
    const keys = Object.keys(out);
    return keys.length === 1 && keys[0].startsWith(TAG) ? { [`${TAG}o`]: out } : out;
  };
  const finish = (json: string): Uint8Array => {
    // Every character past ASCII escaped (`\u00e9`): the text is then read as Latin-1, a copy, where
    // decoding UTF-8 took a one-shot command longer than parsing the JSON (issue #23).
    const text = Buffer.from(escaped(json), 'latin1');
    // Spaces after the JSON (JSON.parse skips them) and after each leaf put every leaf at a multiple of 8
    // bytes from the start: in a section that starts at one, 32-bit arrays are read where they lie.
    const padded = Buffer.concat([text, Buffer.alloc(pad(LENGTH_BYTES + text.byteLength), ' ')]);
    const head = Buffer.alloc(LENGTH_BYTES);
    head.writeUInt32LE(padded.byteLength);
    return Buffer.concat([head, padded, ...leaves.flatMap((l) => [l, new Uint8Array(pad(l.byteLength))])]);
  };
  return { tagged, finish };
}

/**
 * Element `i` of a list packed by `packList` (`ends` as it gave them), read alone: its text parsed and its
 * tags resolved against the list's leaves. Throws on bytes or ends that are not (checked, not trusted).
 */
export function unpackElement(bytes: Uint8Array, ends: ArrayLike<number>, i: number): unknown {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.length < LENGTH_BYTES) throw new Error('packed value: too short');
  readBytes(view, 0, LENGTH_BYTES);
  const jsonEnd = LENGTH_BYTES + view.readUInt32LE(0);
  const from = i === 0 ? 1 : ends[i - 1] + 1;
  const to = ends[i];
  if (
    !Number.isSafeInteger(i) ||
    i < 0 ||
    i >= ends.length ||
    !Number.isSafeInteger(from) ||
    !Number.isSafeInteger(to) ||
    from > to ||
    LENGTH_BYTES + to > jsonEnd ||
    jsonEnd > view.length
  )
    throw new Error('packed value: an element outside the text');
  readBytes(view, LENGTH_BYTES + from, LENGTH_BYTES + to);
  const text = view.toString('latin1', LENGTH_BYTES + from, LENGTH_BYTES + to);
  const value: unknown = JSON.parse(text);
  if (!text.includes('\\u0000')) return value;
  return untag(value, view.subarray(jsonEnd));
}

/** Bytes to add after `n` to reach a multiple of 8. */
export function pad(n: number): number {
  return (8 - (n % 8)) % 8;
}

/** Values unpacked ahead of their use (unpackAhead), each taken by the next unpack of the same bytes. */
const ahead = new WeakMap<Uint8Array, unknown>();

/**
 * Unpacks `bytes` now for the next `unpack(bytes)` (the same object), which takes the value instead of
 * reading them then: a one-shot parses its index while its files are stat'ed in a thread. The value, or
 * undefined when the bytes do not unpack (the later unpack then throws as it would have).
 */
export function unpackAhead(bytes: Uint8Array): unknown {
  try {
    const value = unpack(bytes);
    ahead.set(bytes, value);
    return value;
  } catch {
    return undefined;
  }
}

/** Reads `pack`'s bytes; throws on bytes that are not (a cache is signed: this guards against bugs). */
export function unpack(bytes: Uint8Array): unknown {
  if (ahead.has(bytes)) {
    const value = ahead.get(bytes);
    // Taken once: its reader may change it (untag writes into it, a restore keeps its parts).
    ahead.delete(bytes);
    return value;
  }
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.length < LENGTH_BYTES) throw new Error('packed value: too short');
  readBytes(view, 0, LENGTH_BYTES);
  const jsonEnd = LENGTH_BYTES + view.readUInt32LE(0);
  if (jsonEnd > view.length) throw new Error('packed value: its text runs past the end');
  readBytes(view, LENGTH_BYTES, jsonEnd);
  const json = view.subarray(LENGTH_BYTES, jsonEnd);
  // Written as ASCII (pack), read as Latin-1 without a pass to check it (at 50,000 documents the check
  // took a third as long as the copy): a byte past ASCII, in bytes not of pack's making, only makes
  // another string for JSON.parse to refuse or read.
  const text = json.toString('latin1');
  const value: unknown = JSON.parse(text);
  // Escaped, a NUL is `\u0000` in JSON text: without one there is no tag to resolve.
  if (!text.includes('\\u0000')) return value;
  return untag(value, view.subarray(jsonEnd));
}

/** `value` with pack's tags resolved (its binary leaves are views of `leaves`). */
function untag(value: unknown, leaves: Buffer): unknown {
  const untagged = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = untagged(v[i]);
      return v;
    }
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (keys.length === 1 && keys[0].startsWith(TAG))
      return resolveTag(keys[0], obj[keys[0]], leaves, untagged);
    for (const k of keys) obj[k] = untagged(obj[k]);
    return obj;
  };
  return untagged(value);
}

function resolveTag(key: string, v: unknown, leaves: Buffer, untagged: (v: unknown) => unknown): unknown {
  switch (key) {
    case `${TAG}b`:
    case `${TAG}u`: {
      const [at, length] = Array.isArray(v) ? v : [];
      if (
        !Number.isSafeInteger(at) ||
        !Number.isSafeInteger(length) ||
        at < 0 ||
        length < 0 ||
        at + length > leaves.length
      )
        throw new Error('packed value: a binary leaf outside the bytes');
      const leaf = new Uint8Array(leaves.buffer, leaves.byteOffset + at, length);
      if (key === `${TAG}b`) readBytes(leaf);
      return leaf;
    }
    case `${TAG}d`:
      if (typeof v !== 'number') throw new Error('packed value: a malformed date');
      return new Date(v);
    case `${TAG}n`:
      if (v !== 'NaN' && v !== 'Infinity' && v !== '-Infinity')
        throw new Error('packed value: a malformed number');
      return Number(v);
    case `${TAG}o`: {
      if (v === null || typeof v !== 'object' || Array.isArray(v))
        throw new Error('packed value: a malformed object');
      const obj = v as Record<string, unknown>;
      for (const k of Object.keys(obj)) obj[k] = untagged(obj[k]);
      return obj;
    }
    default:
      throw new Error('packed value: an unknown tag');
  }
}
