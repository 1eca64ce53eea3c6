// Rate limits count in windows aligned to the clock (sliding-window approximation, as @upstash/ratelimit): at a
// window boundary the previous window's requests weigh (1 − elapsed share) × count, rounded down, so a test whose
// requests straddle a boundary may see one more allowed than the limit (about one run in a hundred for a test taking
// half a second against a 60 s window). A test that counts refusals starts where its requests fit one window.

/** Waits, if need be, until at least `spanMs` remain in the current window of `windowSeconds`. */
export async function clearOfWindowEdge(windowSeconds: number, spanMs: number) {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < spanMs) await Bun.sleep(left + 20);
}
