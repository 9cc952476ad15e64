/**
 * A file's bytes in memory before they are read: a buffer of the file's size whose parts are read from
 * the open file when first needed (`readBytes`), a chunk at a time. A one-shot search of a 50,000-document
 * cache needs a few terms' postings and a page of bodies out of 350 MB: reading all of it was the largest
 * part of its start (issue #23). The buffer's pages that are never read are never touched either.
 *
 * Only a file whose identity was checked (cache-file.ts: its stamp matched its status) is read so; its
 * descriptor stays open until every chunk is read, so later parts come from the file that was checked,
 * even after a writer renamed another one over its name. A long-lived process reads the rest once its
 * background work is done (readSome), and lets the file go when it closes (release); a buffer collected
 * before either closes its descriptor then.
 */
import { closeSync, readSync } from 'node:fs';

const CHUNK = 1 << 16;

interface Source {
  /** -1 once closed (release): a chunk still unread then throws UnreadableBytes. */
  fd: number;
  /** Where byte 0 of the buffer is in the file. */
  at: number;
  /** 1 per chunk read. */
  read: Uint8Array;
  left: number;
}

const sources = new WeakMap<ArrayBufferLike, Source>();
/** Closes the descriptor of a buffer collected with chunks unread (a cache dropped, a service let go). */
const collected = new FinalizationRegistry<Source>(close);

function close(source: Source): void {
  if (source.fd < 0) return;
  const fd = source.fd;
  source.fd = -1;
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing to give back.
  }
}

/** Bytes of a file that changed or could not be read after its check: the caller falls back to the files. */
export class UnreadableBytes extends Error {}

/**
 * A buffer of `size` bytes standing for the file's bytes from `at`, read when first needed; it owns
 * `fd` from now on (closed once every chunk is read).
 */
export function unreadBuffer(fd: number, at: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafeSlow(size);
  const chunks = Math.ceil(size / CHUNK);
  if (chunks === 0) closeSync(fd);
  else {
    const source = { fd, at, read: new Uint8Array(chunks), left: chunks };
    sources.set(buffer.buffer, source);
    collected.register(buffer.buffer, source, source);
  }
  return buffer;
}

/** Whether some of the view's bytes, from `from` to `to` (byte offsets in it), are still to be read. */
export function isUnread(view: ArrayBufferView, from = 0, to = view.byteLength): boolean {
  const source = sources.get(view.buffer);
  if (!source || to <= from) return false;
  const first = Math.floor((view.byteOffset + from) / CHUNK);
  const last = Math.floor((view.byteOffset + to - 1) / CHUNK);
  for (let c = first; c <= last; c++) if (source.read[c] === 0) return true;
  return false;
}

/**
 * Reads what is still unread of the view's bytes from `from` to `to` (byte offsets in it); a no-op for
 * bytes already in memory. Throws UnreadableBytes when the file ends early or cannot be read.
 */
export function readBytes(view: ArrayBufferView, from = 0, to = view.byteLength): void {
  const source = sources.get(view.buffer);
  if (!source || to <= from) return;
  const total = view.buffer.byteLength;
  const first = Math.floor((view.byteOffset + from) / CHUNK);
  const last = Math.floor((view.byteOffset + to - 1) / CHUNK);
  for (let c = first; c <= last; c++) {
    if (source.read[c] === 1) continue;
    if (source.fd < 0) throw new UnreadableBytes('cache file closed before this part was read');
    // A run of unread chunks, in one read.
    let end = c;
    while (end + 1 <= last && source.read[end + 1] === 0) end++;
    const start = c * CHUNK;
    const length = Math.min((end + 1) * CHUNK, total) - start;
    const into = new Uint8Array(view.buffer, start, length);
    let got = 0;
    try {
      while (got < length) {
        const n = readSync(source.fd, into, got, length - got, source.at + start + got);
        if (n === 0) break;
        got += n;
      }
    } catch (err) {
      throw new UnreadableBytes(`cache file unreadable: ${(err as Error).message}`);
    }
    if (got < length) throw new UnreadableBytes('cache file shorter than when it was checked');
    source.read.fill(1, c, end + 1);
    source.left -= end + 1 - c;
    c = end;
  }
  if (source.left === 0) {
    sources.delete(view.buffer);
    collected.unregister(source);
    close(source);
  }
}

/**
 * Reads up to about `budget` bytes of what is still unread of the view's whole buffer (a slice of
 * background work); true when nothing is left to read, and the file is then closed.
 */
export function readSome(view: ArrayBufferView, budget: number): boolean {
  const source = sources.get(view.buffer);
  if (!source) return true;
  if (source.fd < 0) return true;
  const whole = new Uint8Array(view.buffer);
  const c = source.read.indexOf(0);
  let end = c;
  while (c >= 0 && end < source.read.length && (end - c) * CHUNK < budget) end++;
  if (c >= 0) readBytes(whole, c * CHUNK, Math.min(end * CHUNK, whole.length));
  return !sources.has(view.buffer);
}

/**
 * Closes the file behind the view's buffer now (a service closing): what was read stays, a part still
 * unread throws UnreadableBytes where it is read.
 */
export function release(view: ArrayBufferView): void {
  const source = sources.get(view.buffer);
  if (!source) return;
  collected.unregister(source);
  close(source);
}
