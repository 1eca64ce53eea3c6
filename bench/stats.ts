// The arithmetic the bench's verdicts rest on, kept pure so test/bench/ can pin it down.

export const median = (xs: readonly number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Element-wise a[k] / b[k]: per-round ratios of two targets measured seconds apart. */
export const ratios = (a: readonly number[], b: readonly number[]): number[] =>
  a.length && a.length === b.length ? a.map((x, k) => x / b[k]!) : [];

/** Least-squares slope of y over x (units of y per unit of x); NaN with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.x - mx) * (p.y - my);
    sxx += (p.x - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

/** The soak's slope: MB per minute over the samples of the second half of the run (the first half is warm-up). */
export function soakSlope(samples: readonly { atMs: number; rssMb: number }[]): number {
  if (!samples.length) return NaN;
  const start = samples[0]!.atMs;
  const half = (samples.at(-1)!.atMs - start) / 2;
  return slope(samples.filter((s) => s.atMs - start >= half).map((s) => ({ x: (s.atMs - start) / 60_000, y: s.rssMb })));
}
