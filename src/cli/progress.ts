import cliProgress from 'cli-progress';

/** A progress bar on stderr (count, rate, ETA) for reading and indexing; silent when stderr is not a terminal. */
export function createProgress(): {
  update: (phase: string, done: number, total: number) => void;
  stop: () => void;
} {
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: '{phase} [{bar}] {value}/{total} files | {rate}/s | ETA {eta_formatted}',
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let phase = '';
  let started = 0;
  return {
    update(next, done, total) {
      if (next !== phase) {
        if (phase) bar.stop();
        phase = next;
        started = performance.now();
        bar.start(total, 0, { phase: next.padEnd(5), rate: 0 });
      }
      const seconds = (performance.now() - started) / 1000;
      bar.update(done, { phase: next.padEnd(5), rate: seconds > 0 ? Math.round(done / seconds) : 0 });
    },
    stop() {
      if (phase) bar.stop();
    },
  };
}
