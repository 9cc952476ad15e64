/** Background work in slices (src/search/background.ts), and the hold a workspace puts on it while it opens. */
import { describe, expect, it } from 'vitest';
import { Background } from '../src/search/background.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('Background', () => {
  it('runs slices until one says it is finished', async () => {
    const work = new Background();
    let slices = 0;
    work.start(() => ++slices === 3);
    expect(work.running).toBe(true);
    await work.done();
    expect(slices).toBe(3);
    expect(work.running).toBe(false);
  });

  it('holdWhile: work started during the hold waits for it, then runs; a second start is a no-op', async () => {
    let open!: () => void;
    const opening = new Promise<void>((resolve) => (open = resolve));
    const held = Background.holdWhile(opening);
    const work = new Background();
    let slices = 0;
    work.start(() => ++slices >= 2);
    work.start(() => {
      throw new Error('a second start must not run');
    });
    await tick();
    await tick();
    expect(slices).toBe(0);
    expect(work.running).toBe(true);
    open();
    await held;
    await work.done();
    expect(slices).toBe(2);
    // The hold is gone: new work starts at once.
    const after = new Background();
    let ran = false;
    after.start(() => (ran = true));
    await after.done();
    expect(ran).toBe(true);
  });

  it('a failed opening ends the hold too', async () => {
    const failing = Promise.reject(new Error('no such folder'));
    await expect(Background.holdWhile(failing)).rejects.toThrow('no such folder');
    const work = new Background();
    let ran = false;
    work.start(() => (ran = true));
    await work.done();
    expect(ran).toBe(true);
  });
});
