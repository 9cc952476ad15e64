/**
 * Properties made on first read. `lazyProperty(key, make)` gives a function that sets up `obj[key]` to be
 * `make(source)` when first read (or whatever is set first), a plain value from then on. It reads,
 * spreads, serializes and compares as a plain property (own and enumerable). A restored process decodes
 * a body only when it is shown (issue #23: decoding every body of a 50,000-document cache was a tenth
 * of its start).
 *
 * Every object set up by one such function shares one accessor pair, its source under a symbol that is
 * not enumerable (so spreads and equality do not see it): V8 then keeps the objects' shapes shared. One
 * closure per object instead made each object a shape of its own (50,000 items: about a second).
 */
export function lazyProperty<S, V>(key: string, make: (source: S) => V): (obj: object, source: S) => void {
  const source = Symbol(key);
  const settle = (obj: object, value: V) =>
    Object.defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: true });
  const accessor: PropertyDescriptor = {
    configurable: true,
    enumerable: true,
    get(this: Record<symbol, S>) {
      const value = make(this[source]);
      settle(this, value);
      return value;
    },
    set(this: object, value: V) {
      settle(this, value);
    },
  };
  const hidden: PropertyDescriptor = {
    value: undefined,
    writable: true,
    configurable: true,
    enumerable: false,
  };
  return (obj, from) => {
    hidden.value = from;
    Object.defineProperty(obj, source, hidden);
    hidden.value = undefined;
    Object.defineProperty(obj, key, accessor);
  };
}

/**
 * The same for objects made as `lazyObject(proto, source)`, with `proto = lazyPrototype(key, make)`: the
 * accessor lives on the prototype, so making an object costs nothing more than making a plain one (no
 * defineProperty). `obj[key]` is then not an own property until read or set: for objects that are not
 * spread nor compared (a search document, a stored result), where lazyProperty's cost would show.
 */
const SOURCE = Symbol('lazy source');

export function lazyPrototype<S, V>(key: string, make: (source: S) => V): object {
  const settle = (obj: object, value: V) =>
    Object.defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: true });
  return Object.create(Object.prototype, {
    [key]: {
      get(this: { [SOURCE]: S }) {
        const value = make(this[SOURCE]);
        settle(this, value);
        return value;
      },
      set(this: object, value: V) {
        settle(this, value);
      },
    },
  }) as object;
}

/** A new object of `proto` (lazyPrototype) whose lazy value comes from `source`. */
export function lazyObject<T>(proto: object, source: unknown): T {
  const obj = Object.create(proto) as { [SOURCE]: unknown };
  obj[SOURCE] = source;
  return obj as T;
}

/** Whether `obj[key]` is still to be made (lazyProperty, lazyPrototype): reading it would make it. */
export function isLazy(obj: object, key: string): boolean {
  for (let o: object | null = obj; o !== null; o = Object.getPrototypeOf(o) as object | null) {
    const own = Object.getOwnPropertyDescriptor(o, key);
    if (own) return typeof own.get === 'function';
  }
  return false;
}
