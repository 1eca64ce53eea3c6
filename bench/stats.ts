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

/** The soak's slope: MB per minute over the samples (times from the start) of the second half of a run of `runMs`. */
export function soakSlope(samples: readonly { atMs: number; rssMb: number }[], runMs: number): number {
  return slope(samples.filter((s) => s.atMs >= runMs / 2).map((s) => ({ x: s.atMs / 60_000, y: s.rssMb })));
}

/**
 * The lowest sample of each window of `windowMs`, at that sample's time: the memory that survived the last garbage
 * collection. RSS saws up and down by tens of MB between collections; a leak is the floor rising.
 */
export function floors<T extends { atMs: number; rssMb: number }>(samples: readonly T[], windowMs: number): T[] {
  if (!samples.length) return [];
  const start = samples[0]!.atMs;
  const out = new Map<number, T>();
  for (const s of samples) {
    const w = Math.floor((s.atMs - start) / windowMs);
    const low = out.get(w);
    if (!low || s.rssMb < low.rssMb) out.set(w, s);
  }
  return [...out.values()];
}
