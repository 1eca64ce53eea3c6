// Waiting for another connection's write lock on a SQLite file without blocking the event loop. SQLite's own busy
// handler (PRAGMA busy_timeout) sleeps inside the call, which on the gateway's main thread freezes every request and
// stream while another connection (a media worker, another instance, an operator's sqlite3, a backup) holds the
// lock. So the serving connection has busy_timeout 0 and waits here instead, awaiting between attempts.

/** As long as a PRAGMA busy_timeout of 5 s would wait: the longest a write waits for another connection. */
export const BUSY_WAIT_MS = 5000;
const MAX_DELAY_MS = 20;

/** SQLITE_BUSY and its extended codes (_RECOVERY, _SNAPSHOT, _TIMEOUT), which SQLite's busy handler retried too. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/**
 * `attempt()`, again after a short await while SQLite answers SQLITE_BUSY, for up to BUSY_WAIT_MS; then its error.
 * `attempt` must have done nothing when it throws SQLITE_BUSY (a statement, or a transaction refused at its BEGIN).
 */
export async function whenUnlocked<T>(attempt: () => T): Promise<T> {
  let until = 0; // set at the first refusal: every statement passes here, and almost none is refused
  for (let delay = 1; ; delay = Math.min(2 * delay, MAX_DELAY_MS)) {
    try {
      return attempt();
    } catch (e) {
      if (!isBusy(e)) throw e;
      until ||= performance.now() + BUSY_WAIT_MS;
      if (performance.now() >= until) throw e;
    }
    await Bun.sleep(delay);
  }
}
