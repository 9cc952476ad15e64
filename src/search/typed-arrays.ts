/** Typed-array helpers of the lexical index: growth with room to spare, and little-endian bytes for the persisted form. */

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function swap32(bytes: Uint8Array): void {
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    const a = bytes[i];
    const b = bytes[i + 1];
    bytes[i] = bytes[i + 3];
    bytes[i + 1] = bytes[i + 2];
    bytes[i + 2] = b;
    bytes[i + 3] = a;
  }
}

/** Little-endian bytes of a 32-bit typed array (a view when the host is little-endian). */
export function toBytes(a: Int32Array | Uint32Array): Uint8Array {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (LITTLE_ENDIAN) return bytes;
  const copy = bytes.slice();
  swap32(copy);
  return copy;
}

/**
 * The 32-bit values in little-endian `bytes`: a view of them where they lie when they are aligned (a
 * cache's leaves are: packed.ts), else a copy into an aligned buffer of their own. A view shares the
 * bytes: the caller writes into it only what it owns (a restored index's own file buffer).
 */
export function fromBytes<T extends Int32Array | Uint32Array>(
  bytes: Uint8Array,
  Kind: { new (buffer: ArrayBufferLike, byteOffset?: number, length?: number): T },
): T {
  if (!(bytes instanceof Uint8Array)) throw new Error('field index: an array is missing or not binary');
  if (bytes.byteLength % 4 !== 0) throw new Error('field index: byte length is not a multiple of 4');
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0)
    return new Kind(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  // A copy at offset 0 of a buffer of its own (`slice()` would not copy a Node Buffer).
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  if (!LITTLE_ENDIAN) swap32(copy);
  return new Kind(copy.buffer);
}

export function grownInt32(a: Int32Array, size: number, fill = 0): Int32Array {
  if (a.length >= size) return a;
  const out = new Int32Array(Math.max(size, Math.ceil(a.length * 1.5), 16));
  out.set(a);
  if (fill !== 0) out.fill(fill, a.length);
  return out;
}

export function grownUint32(a: Uint32Array, size: number): Uint32Array {
  if (a.length >= size) return a;
  const out = new Uint32Array(Math.max(size, Math.ceil(a.length * 1.5), 1024));
  out.set(a);
  return out;
}

export function grownUint8(a: Uint8Array, size: number): Uint8Array {
  if (a.length >= size) return a;
  const out = new Uint8Array(Math.max(size, Math.ceil(a.length * 1.5), 1024));
  out.set(a);
  return out;
}

/** Index of the first value >= x in a sorted array (its length when none): numbers or strings. */
export function firstAtOrAfter<T extends number | string>(sorted: ArrayLike<T>, x: T): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
