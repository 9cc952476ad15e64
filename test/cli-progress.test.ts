import { describe, expect, it } from 'vitest';
import { RecentRate, formatEta } from '../src/cli/progress.js';
import { runCli, tempBacklog } from './helpers.js';
import { runOnTerminal } from './terminal.js';

describe('progress', () => {
  it('takes the ETA from the recent rate, not the average since the start', () => {
    const w = new RecentRate(10_000);
    // 100 chunks/s for 30 s, then 10 chunks/s for 20 s.
    let done = 0;
    for (let t = 0; t <= 30_000; t += 1000) w.add(t, (done = t / 10));
    for (let t = 31_000; t <= 50_000; t += 1000) w.add(t, (done += 10));
    expect(done).toBe(3200);
    expect(w.perSecond()).toBeCloseTo(10, 5); // the running average would say 64/s
    expect(w.etaSeconds(1000)).toBeCloseTo(100, 5);
    expect(new RecentRate().etaSeconds(5)).toBeNull();
    expect([formatEta(null), formatEta(42), formatEta(210), formatEta(7300)]).toEqual([
      '--',
      '42s',
      '3m30s',
      '2h01m',
    ]);
  });

  it('index names what each bar counts: files read, items indexed, chunks embedded', async () => {
    const { dir, cleanup } = await tempBacklog();
    try {
      // cli-progress draws only on a terminal.
      const frames = await runOnTerminal(['--dir', dir, '--embeddings', 'bundled', 'index'], {
        BACKLOG_EMBEDDINGS: 'bundled',
      });
      expect(frames).toMatch(/Indexed 54 items/);
      expect(frames).toMatch(/read {2}\[[^\]]*\] 54\/54 files/);
      expect(frames).toMatch(/index \[[^\]]*\] 54\/54 items/);
      expect(frames).toMatch(/embed \[[^\]]*\] (\d+)\/\1 chunks/);
      expect(frames).not.toMatch(/chunks?.*files|\d+\/\d+ files.*embed/);
    } finally {
      await cleanup();
    }
  }, 180_000);

  it('not on a terminal (an agent, a CI log), index writes plain progress lines, no bar and no cursor codes', async () => {
    const { dir, cleanup } = await tempBacklog();
    try {
      const { code, stderr } = await runCli(['--dir', dir, '--embeddings', 'bundled', 'index']);
      expect(code).toBe(0);
      const lines = stderr.split('\n');
      expect(lines.some((l) => /^read {2}54\/54 files \| \d+\/s \| ETA 0s$/.test(l))).toBe(true);
      expect(lines.some((l) => /^embed (\d+)\/\1 chunks \| \d+\/s \| ETA 0s$/.test(l))).toBe(true);
      expect(lines.some((l) => /^index 54\/54 items/.test(l))).toBe(true);
      expect(stderr).not.toMatch(/[\u2580-\u259f]|\r/);
      expect(stderr).not.toContain(String.fromCharCode(27)); // no cursor or colour codes
    } finally {
      await cleanup();
    }
  }, 180_000);
});
