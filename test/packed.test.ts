import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pack, packList, unpack, unpackAhead, unpackElement } from '../src/search/packed.js';

/** What the persisted index holds: JSON values, dates, non-finite numbers, bytes, keys of any text. */
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string(),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 40 }),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom('\u0000b', '\u0000d', '\u0000o', '\u0000x')),
      tie('node'),
      {
        maxKeys: 4,
      },
    ),
  ),
})).node;

/** The value as unpack gives it back: views as plain Uint8Arrays, -0 as JSON writes it (0). */
function comparable(v: unknown): unknown {
  if (v instanceof Uint8Array) return { bytes: [...v] };
  if (v instanceof Date) return { date: v.getTime() };
  if (Object.is(v, -0)) return 0;
  if (Array.isArray(v)) return v.map(comparable);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, comparable(c)]));
  return v;
}

describe('packed values (the persisted index)', () => {
  it('gives back what was packed: dates, NaN and infinities, bytes, keys that look like tags', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(comparable(unpack(pack(v)))).toEqual(comparable(v));
      }),
      { numRuns: 300 },
    );
  });

  it('reads typed arrays back as bytes, and a Map as an object', () => {
    const got = unpack(pack({ u32: new Uint32Array([1, 2]), map: new Map([['a', 1]]), skip: undefined })) as {
      u32: Uint8Array;
      map: unknown;
    };
    expect([...got.u32]).toEqual([1, 0, 0, 0, 2, 0, 0, 0]);
    expect(got.map).toEqual({ a: 1 });
    expect(Object.keys(got)).toEqual(['u32', 'map']);
  });

  it('refuses bytes that are not a packed value, never reading outside them', () => {
    const text = (json: string, tail = Buffer.alloc(0)) => {
      const body = Buffer.from(json);
      const head = Buffer.alloc(4);
      head.writeUInt32LE(body.length);
      return Buffer.concat([head, body, tail]);
    };
    expect(() => unpack(new Uint8Array([1, 0]))).toThrow(/too short/);
    expect(() => unpack(text('{}').subarray(0, 5))).toThrow(/past the end/);
    expect(() => unpack(text('{"a":{"\\u0000b":[0,9]}}', Buffer.alloc(4)))).toThrow(/outside/);
    expect(() => unpack(text('{"a":{"\\u0000b":[-1,1]}}', Buffer.alloc(4)))).toThrow(/outside/);
    expect(() => unpack(text('{"a":{"\\u0000n":"1e3"}}'))).toThrow(/malformed number/);
    expect(() => unpack(text('{"a":{"\\u0000q":1}}'))).toThrow(/unknown tag/);
    expect(() => unpack(text('{"a":'))).toThrow(SyntaxError);
  });

  it('unpacks ahead for the next unpack of the same bytes, once; bytes that are not still throw there', () => {
    const bytes = pack({ a: [1, 2], when: new Date(5) });
    const ahead = unpackAhead(bytes);
    expect(ahead).toEqual({ a: [1, 2], when: new Date(5) });
    // The same object is taken by the next unpack of these bytes, then a fresh value is read.
    expect(unpack(bytes)).toBe(ahead);
    const again = unpack(bytes);
    expect(again).not.toBe(ahead);
    expect(again).toEqual(ahead);
    // Other bytes with the same content are not these bytes.
    unpackAhead(bytes);
    expect(unpack(Uint8Array.from(bytes))).not.toBe(unpack(bytes));
    const broken = new Uint8Array([255, 255, 255, 255, 1]);
    expect(unpackAhead(broken)).toBeUndefined();
    expect(() => unpack(broken)).toThrow();
  });

  it('packs a list as pack does, each element readable alone; ends that are not refused', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 8 }), (list) => {
        const { bytes, ends } = packList(list);
        expect(Buffer.from(bytes).equals(Buffer.from(pack(list)))).toBe(true);
        const whole = comparable(unpack(bytes)) as unknown[];
        list.forEach((_, i) => expect(comparable(unpackElement(bytes, ends, i))).toEqual(whole[i]));
      }),
      { numRuns: 300 },
    );
    const { bytes, ends } = packList([{ a: 'é' }, [1, new Date(3)], 'x']);
    expect(() => unpackElement(bytes, ends, 3)).toThrow(/outside/);
    expect(() => unpackElement(bytes, ends, -1)).toThrow(/outside/);
    expect(() => unpackElement(bytes, [ends[0], 1e9, ends[2]], 1)).toThrow(/outside/);
    expect(() => unpackElement(bytes, [ends[1], ends[0], ends[2]], 1)).toThrow(/outside/);
    // Ends inside the text but not an element's: a parse error, never another element's value.
    expect(() => unpackElement(bytes, [ends[0] - 1, ends[1], ends[2]], 0)).toThrow(SyntaxError);
  });
});
