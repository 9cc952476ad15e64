import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fstatSync, openSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isUnread,
  readBytes,
  readSome,
  release,
  unreadBuffer,
  UnreadableBytes,
} from '../src/storage/unread-bytes.js';
import { pack, unpack, Unread } from '../src/search/packed.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'unread-bytes-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

// A file's bytes read when first needed (a stamped cache: issue #23).
describe('unread bytes', () => {
  it('reads a part when asked, from the file as opened, and only that part', () => {
    const file = join(dir, 'f.bin');
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 251;
    writeFileSync(file, bytes);
    const buffer = unreadBuffer(openSync(file, 'r'), 100, bytes.length - 100);
    expect(isUnread(buffer)).toBe(true);
    readBytes(buffer, 150_000, 150_010);
    expect(buffer.subarray(150_000, 150_010).equals(bytes.subarray(150_100, 150_110))).toBe(true);
    expect(isUnread(buffer, 150_000, 150_010)).toBe(false);
    expect(isUnread(buffer, 0, 10)).toBe(true);
    // A packed value in it: its text and plain leaves are read by unpack, an Unread leaf is not.
    const packed = Buffer.from(
      pack({ small: new Uint8Array([1, 2, 3]), big: new Unread(new Uint8Array(200_000).fill(9)) }),
    );
    writeFileSync(file, packed);
    const lazy = unreadBuffer(openSync(file, 'r'), 0, packed.length);
    const value = unpack(lazy) as { small: Uint8Array; big: Uint8Array };
    expect([...value.small]).toEqual([1, 2, 3]);
    expect(isUnread(value.big)).toBe(true);
    readBytes(value.big);
    expect(value.big.every((b) => b === 9)).toBe(true);
  });

  it('throws UnreadableBytes when the file is shorter than when it was opened', () => {
    const file = join(dir, 'g.bin');
    writeFileSync(file, Buffer.alloc(200_000, 1));
    const buffer = unreadBuffer(openSync(file, 'r'), 0, 200_000);
    truncateSync(file, 1000);
    expect(() => readBytes(buffer, 100_000, 100_100)).toThrow(UnreadableBytes);
  });

  it('reads the rest a slice at a time and closes the file; release closes it at once', () => {
    const file = join(dir, 'h.bin');
    const bytes = Buffer.alloc(1_000_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 13) % 251;
    writeFileSync(file, bytes);
    const fd = openSync(file, 'r');
    const buffer = unreadBuffer(fd, 0, bytes.length);
    readBytes(buffer, 500_000, 500_001);
    let slices = 1;
    while (!readSome(buffer, 300_000)) slices++;
    expect(slices).toBeGreaterThanOrEqual(3);
    expect(isUnread(buffer)).toBe(false);
    expect(buffer.equals(bytes)).toBe(true);
    expect(() => fstatSync(fd)).toThrow(/EBADF/);

    const fd2 = openSync(file, 'r');
    const early = unreadBuffer(fd2, 0, bytes.length);
    readBytes(early, 0, 10);
    release(early);
    expect(() => fstatSync(fd2)).toThrow(/EBADF/);
    // What was read stays; a part never read throws, never gives the buffer's stale memory.
    expect(early.subarray(0, 10).equals(bytes.subarray(0, 10))).toBe(true);
    expect(() => readBytes(early, 900_000, 900_010)).toThrow(UnreadableBytes);
    expect(readSome(early, 300_000)).toBe(true);
  });
});
