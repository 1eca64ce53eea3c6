import { Counter } from "prom-client";
import type { Logger } from "../log";
import { registry } from "../ops/metrics";

// What happens when a limit check cannot reach Redis is counted (switchyard_redis_fallbacks_total, for alerts) and
// logged, at most once per WARN_EVERY_MS per kind: during an outage every request falls back, and a line per
// request would flood the log exactly when an operator needs to read it.

export type FallbackKind = "rate_limit" | "task_tokens";

const WARN_EVERY_MS = 30_000;

const fallbacks = new Counter({
  name: "switchyard_redis_fallbacks_total",
  help: "Limit checks that could not use Redis: rate_limit = counted in this process instead; task_tokens = media task creation refused with 503 limits_unavailable.",
  labelNames: ["kind"] as const,
  registers: [registry],
});
for (const kind of ["rate_limit", "task_tokens"] as const) fallbacks.inc({ kind }, 0); // series exist before the first outage

const lastWarned = new Map<FallbackKind, number>();

export function reportRedisFallback(log: Logger, kind: FallbackKind, error: unknown, now = Date.now()) {
  fallbacks.inc({ kind });
  if (now - (lastWarned.get(kind) ?? -Infinity) < WARN_EVERY_MS) return;
  lastWarned.set(kind, now);
  const what =
    kind === "rate_limit"
      ? "rate limits counted in this process"
      : "media task creation refused (503 limits_unavailable)";
  log.warn(`redis unavailable: ${what}`, {
    error: String((error as Error)?.message ?? error),
    next_warning_in_s: WARN_EVERY_MS / 1000,
  });
}
