/**
 * Work done in slices, a timer per slice, so that searches run between them and never wait for it.
 * Its timers do not keep the process alive unless someone waits for `done()`.
 */
export class Background {
  private timer: NodeJS.Timeout | null = null;
  private finished: Promise<void> = Promise.resolve();
  private awaited = false;

  /** Work started and not finished. */
  get running(): boolean {
    return this.timer !== null;
  }

  /** Runs `slice` on timers until it returns true (finished); no-op while earlier work still runs. */
  start(slice: () => boolean): void {
    if (this.timer) return;
    this.finished = new Promise((resolve) => {
      const run = () => {
        this.timer = slice() ? null : setTimeout(run, 0);
        if (this.timer === null) resolve();
        else if (!this.awaited) this.timer.unref();
      };
      this.timer = setTimeout(run, 0);
      if (!this.awaited) this.timer.unref();
    });
  }

  /** Resolves when the work started last is finished (benchmarks and tests wait; searches never do). */
  done(): Promise<void> {
    this.awaited = true;
    this.timer?.ref();
    return this.finished;
  }
}
