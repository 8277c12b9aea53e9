/**
 * Seeded randomness for tests: every random choice a test makes (kill points, generated inputs) comes
 * from a seed, so a failure replays exactly. The seed is fixed in the test; FLOWCTL_TEST_SEED replaces
 * it to explore other sequences (the seed in use is part of every failure message that prints it).
 */

/** The seed to use: FLOWCTL_TEST_SEED when set (a non-negative integer), else `fixed`. */
export function testSeed(fixed: number, env: Record<string, string | undefined> = process.env): number {
  const raw = env.FLOWCTL_TEST_SEED;
  if (raw === undefined || raw === '') return fixed >>> 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`FLOWCTL_TEST_SEED must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n >>> 0;
}

/** mulberry32: a small, fast 32-bit generator; numbers in [0, 1). */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** An integer in [0, n) from `next`. */
export function below(next: () => number, n: number): number {
  return Math.floor(next() * n);
}
