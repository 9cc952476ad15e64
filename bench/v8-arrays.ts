/**
 * Why the scorer keeps its lists of touched documents in typed arrays (src/search/score.ts): ns per
 * element of filling a reused plain array (`length = 0`, then `push`), a fresh plain array, and a
 * preallocated typed array with a count, at sizes around V8's threshold (Node 20: about 16,000).
 *
 *   npx tsx bench/v8-arrays.ts
 */
const SIZES = [5000, 10_000, 16_000, 17_000, 30_000, 45_000];
const reused: number[] = [];
const typed = new Int32Array(SIZES.at(-1)!);

const fills: Record<string, (n: number) => number> = {
  'plain, reused (length = 0, push)': (n) => {
    reused.length = 0;
    for (let d = 0; d < n; d++) reused.push(d);
    return reused.length;
  },
  'plain, fresh (push)': (n) => {
    const a: number[] = [];
    for (let d = 0; d < n; d++) a.push(d);
    return a.length;
  },
  'typed, preallocated (count)': (n) => {
    let count = 0;
    for (let d = 0; d < n; d++) typed[count++] = d;
    return count;
  },
};

const rows: string[] = ['| fill | ' + SIZES.map((n) => n.toLocaleString('en')).join(' | ') + ' |'];
rows.push(`|---|${SIZES.map(() => '---|').join('')}`);
for (const [name, fill] of Object.entries(fills)) {
  const cells = SIZES.map((n) => {
    for (let i = 0; i < 50; i++) fill(n);
    const t = performance.now();
    for (let i = 0; i < 200; i++) fill(n);
    return ((((performance.now() - t) / 200) * 1e6) / n).toFixed(1);
  });
  rows.push(`| ${name} | ${cells.join(' | ')} |`);
}
process.stdout.write(`ns per element (${process.version}):\n\n${rows.join('\n')}\n`);
