import { describe, expect, it } from 'vitest';
import { isLazy, lazyObject, lazyProperty, lazyPrototype } from '../src/storage/lazy.js';

describe('lazyProperty (a restored body decoded when first read)', () => {
  it('is made once, on first read, and then reads, spreads, serializes and compares as a plain value', () => {
    let made = 0;
    const lazy = lazyProperty('body', (n: number) => {
      made++;
      return `body ${n}`;
    });
    const items = [1, 2, 3].map((n) => ({ id: `T-${n}`, body: '' }));
    items.forEach((item, i) => lazy(item, i + 1));
    expect(made).toBe(0);
    expect(items.every((item) => isLazy(item, 'body'))).toBe(true);
    expect(Object.keys(items[0])).toEqual(['id', 'body']);
    expect(items[0].body).toBe('body 1');
    expect(items[0].body).toBe('body 1');
    expect(made).toBe(1);
    expect(isLazy(items[0], 'body')).toBe(false);
    // Spread, JSON and deep equality see the value, never the hidden source.
    expect({ ...items[1] }).toEqual({ id: 'T-2', body: 'body 2' });
    expect(JSON.stringify(items[2])).toBe('{"id":"T-3","body":"body 3"}');
    expect(items).toEqual([1, 2, 3].map((n) => ({ id: `T-${n}`, body: `body ${n}` })));
    expect(made).toBe(3);
  });

  it('a value set before any read wins, and nothing is made', () => {
    let made = 0;
    const lazy = lazyProperty('body', () => {
      made++;
      return 'decoded';
    });
    const item = { body: '' };
    lazy(item, 0);
    item.body = 'written';
    expect(item.body).toBe('written');
    expect(made).toBe(0);
    expect(Object.getOwnPropertyDescriptor(item, 'body')).toMatchObject({ value: 'written', writable: true });
  });
});

describe('lazyPrototype (search documents and stored results)', () => {
  it('makes the value on first read, once; a value set first wins; isLazy tells which', () => {
    let made = 0;
    const proto = lazyPrototype('body', (n: number) => {
      made++;
      return `body ${n}`;
    });
    const a = Object.assign(lazyObject<{ id: string; body: string }>(proto, 1), { id: 'a' });
    const b = Object.assign(lazyObject<{ id: string; body: string }>(proto, 2), { id: 'b' });
    expect(isLazy(a, 'body') && isLazy(b, 'body')).toBe(true);
    expect(made).toBe(0);
    expect(a.body).toBe('body 1');
    expect(a.body).toBe('body 1');
    expect(made).toBe(1);
    expect(isLazy(a, 'body')).toBe(false);
    expect(JSON.stringify(a)).toBe('{"id":"a","body":"body 1"}');
    b.body = 'set';
    expect(b.body).toBe('set');
    expect(made).toBe(1);
    expect(isLazy({ body: 'plain' }, 'body')).toBe(false);
  });
});
