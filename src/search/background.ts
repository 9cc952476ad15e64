import { UnreadableBytes } from '../storage/unread-bytes.js';

/**
 * Work done in slices, a timer per slice, so that searches run between them and never wait for it.
 * Its timers do not keep the process alive unless someone waits for `done()`.
 */
export class Background {
  /** While set, new work waits for it before its first slice (holdWhile). */
  private static hold: Promise<unknown> | null = null;

  /**
   * Holds the start of every Background's work in this process until `opening` settles: a workspace
   * opens its backlogs in turn, and each one's background work would otherwise slow the next ones' reads
   * (issue #22: 10 backlogs' open took 3.25x one backlog of the same files). Searches never wait for it.
   */
  static holdWhile<T>(opening: Promise<T>): Promise<T> {
    const previous = Background.hold;
    const hold = Promise.all([previous, opening]).then(
      () => undefined,
      () => undefined,
    );
    Background.hold = hold;
    void hold.then(() => {
      if (Background.hold === hold) Background.hold = null;
    });
    return opening;
  }

  private timer: NodeJS.Timeout | null = null;
  private held = false;
  private finished: Promise<void> = Promise.resolve();
  private awaited = false;

  /** Work started and not finished. */
  get running(): boolean {
    return this.timer !== null || this.held;
  }

  /** Runs `slice` on timers until it returns true (finished); no-op while earlier work still runs. */
  start(slice: () => boolean): void {
    if (this.running) return;
    this.finished = new Promise((resolve) => {
      const run = () => {
        this.timer = finishes(slice) ? null : setTimeout(run, 0);
        if (this.timer === null) resolve();
        else if (!this.awaited) this.timer.unref();
      };
      const first = () => {
        this.timer = setTimeout(run, 0);
        if (!this.awaited) this.timer.unref();
      };
      const hold = Background.hold;
      if (!hold) return first();
      // Running from now on (a second start is a no-op); its first slice when the hold ends.
      this.held = true;
      void hold.then(() => {
        this.held = false;
        first();
      });
    });
  }

  /** Resolves when the work started last is finished (benchmarks and tests wait; searches never do). */
  done(): Promise<void> {
    this.awaited = true;
    this.timer?.ref();
    return this.finished;
  }
}

/**
 * Runs one slice: true when the work is finished. Bytes of the persisted index that can no longer be read
 * (its file let go by close(), or shorter than when checked: unread-bytes.ts) end the work: what it
 * prepares is prepared on demand instead, where a query that needs those bytes meets the error.
 */
function finishes(slice: () => boolean): boolean {
  try {
    return slice();
  } catch (err) {
    if (err instanceof UnreadableBytes) return true;
    throw err;
  }
}
