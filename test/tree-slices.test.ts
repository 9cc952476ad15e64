/**
 * A restored text field's radix tree decoded in slices (orama-components.ts decodeTreeUntil): a server's
 * background decode never holds the event loop for a whole large tree (the Backlog.md folder's body tree
 * was one slice of 80 ms of CPU), and the tree it makes is the one RadixTree.fromJSON makes.
 */
import { describe, expect, it } from 'vitest';
import { radix } from '@orama/orama/trees';
import { LexicalIndex } from '../src/search/lexical-index.js';
import { decodeTreeUntil, fieldTree } from '../src/search/orama-components.js';
import { unpack } from '../src/search/packed.js';

const words = Array.from({ length: 400 }, (_, i) => `w${(i * 7919).toString(36)}x${i % 13}`);
const docs = Array.from({ length: 80 }, (_, i) => ({
  id: `TASK-${i + 1}`,
  title: `Task ${words[i]} ${words[(i * 3) % 400]}`,
  body: words.filter((_, k) => k % 80 === i || (k * 5) % 80 === i).join(' '),
}));

async function restored(): Promise<{ index: LexicalIndex; store: never; bytes: Uint8Array }> {
  const built = new LexicalIndex();
  built.background = false;
  await built.build(docs);
  const index = new LexicalIndex();
  index.background = false; // no background decode: the trees stay as the cache holds them
  index.restore(await built.serialize(), docs);
  const store = (index as unknown as { store: { indexes: Record<string, { node: { bytes: Uint8Array } }> } })
    .store;
  return { index, store: store as never, bytes: store.indexes.body.node.bytes };
}

describe('a restored tree decoded in slices', () => {
  it('takes several slices past its deadline, and is then the tree fromJSON makes', async () => {
    const { store, bytes } = await restored();
    let calls = 1;
    // A deadline already passed: each call does the least it may (the parse, then 64 nodes).
    while (!decodeTreeUntil(store, 'body', 0)) calls++;
    expect(calls).toBeGreaterThan(3);
    const whole = radix.RadixTree.fromJSON(unpack(bytes) as never);
    expect(JSON.stringify(fieldTree(store, 'body').toJSON())).toBe(JSON.stringify(whole.toJSON()));
  });

  it('a query that needs the tree half-way through finishes it, with the same answers', async () => {
    const { index, store } = await restored();
    decodeTreeUntil(store, 'body', 0);
    decodeTreeUntil(store, 'body', 0);
    const typo = `${words[5].slice(0, -1)}q`; // one edit: walks the body tree
    const prefix = `${words[7].slice(0, 4)}*`;
    const half = [index.search({ query: typo }), index.search({ query: prefix })];
    const { index: fresh } = await restored();
    expect(half).toEqual([fresh.search({ query: typo }), fresh.search({ query: prefix })]);
    expect(half[1].total).toBeGreaterThan(0);
  });
});
