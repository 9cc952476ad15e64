import cliProgress from 'cli-progress';

/** What each phase counts: files read, items indexed, chunks embedded. */
const UNITS: Record<string, string> = { read: 'files', index: 'items', embed: 'chunks' };

/**
 * Rate and ETA from the last `windowMs` of progress only, so a phase that slows down or speeds up
 * (the embedding of long chunks, a second worker joining) shows the pace of now, not the average
 * since the start (which made the ETA of one build grow from 30 s to 3 min 30 s).
 */
export class RecentRate {
  private samples: { at: number; done: number }[] = [];
  constructor(private readonly windowMs = 15_000) {}

  add(at: number, done: number): void {
    this.samples.push({ at, done });
    // Keep one sample at or before the window's start, so the window always spans windowMs when it can.
    while (this.samples.length > 2 && this.samples[1].at <= at - this.windowMs) this.samples.shift();
  }

  /** Units per second over the window; 0 until two samples are at least 1 ms apart. */
  perSecond(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || last.at - first.at < 1) return 0;
    return ((last.done - first.done) * 1000) / (last.at - first.at);
  }

  /** Seconds left for `remaining` units at the recent rate; null while no rate is known. */
  etaSeconds(remaining: number): number | null {
    const rate = this.perSecond();
    return remaining <= 0 ? 0 : rate > 0 ? remaining / rate : null;
  }
}

export function formatEta(seconds: number | null): string {
  if (seconds === null) return '--';
  const s = Math.round(seconds);
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** How often a progress line is written when stderr is not a terminal. */
export const NOT_TTY_EVERY_MS = 15_000;

/** A progress bar on stderr (count and unit, recent rate, ETA) for reading, indexing and embedding. */
export function createProgress(now: () => number = () => performance.now()): {
  update: (phase: string, done: number, total: number) => void;
  stop: () => void;
} {
  // Not a terminal (an agent, a CI log): a plain line every NOT_TTY_EVERY_MS instead of nothing, so a
  // build of minutes is never silent, and no bar glyphs for a reader who pays for every token.
  const tty = Boolean(process.stderr.isTTY);
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `{phase} ${tty ? '[{bar}] ' : ''}{value}/{total} {unit} | {rate}/s | ETA {recent_eta}`,
      hideCursor: true,
      clearOnComplete: false,
      noTTYOutput: true,
      notTTYSchedule: NOT_TTY_EVERY_MS,
    },
    cliProgress.Presets.shades_classic,
  );
  let phase = '';
  let window = new RecentRate();
  return {
    update(next, done, total) {
      const unit = UNITS[next] ?? 'items';
      if (next !== phase) {
        if (phase) bar.stop();
        phase = next;
        window = new RecentRate();
        bar.start(total, 0, { phase: next.padEnd(5), unit, rate: 0, recent_eta: '--' });
      }
      window.add(now(), done);
      bar.update(done, {
        phase: next.padEnd(5),
        unit,
        rate: Math.round(window.perSecond()),
        recent_eta: formatEta(window.etaSeconds(total - done)),
      });
    },
    stop() {
      if (phase) bar.stop();
    },
  };
}
