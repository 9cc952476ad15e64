/** The number of bits set in a 32-bit integer (query terms in a snippet window, word pairs found). */
export function popcount(n: number): number {
  let count = 0;
  for (let v = n >>> 0; v; v &= v - 1) count++;
  return count;
}
