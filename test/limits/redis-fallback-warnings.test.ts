// During a Redis outage every request falls back; the log gets one warning per kind per 30 s, not one per request.
import { expect, test } from "bun:test";
import { reportRedisFallback } from "../../src/limits/redis-fallbacks";
import type { Logger } from "../../src/log";

test("a fallback warning is logged at most once per 30 s per kind", () => {
  const warnings: Array<[string, any]> = [];
  const log: Logger = {
    enabled: () => true,
    debug() {},
    info() {},
    error() {},
    warn: (msg, fields) => void warnings.push([msg, fields]),
  };
  const t0 = 4_000_000_000_000; // far from any other test's clock, so earlier warnings in this process do not count
  for (let s = 0; s < 30; s++)
    reportRedisFallback(log, "rate_limit", new Error("Redis is not connected"), t0 + s * 1000);
  reportRedisFallback(log, "task_tokens", new Error("Redis is not connected"), t0 + 1000); // another kind: its own clock
  reportRedisFallback(log, "rate_limit", new Error("Redis is not connected"), t0 + 30_000);
  expect(warnings.map(([msg]) => msg)).toEqual([
    "redis unavailable: rate limits counted in this process",
    "redis unavailable: media task creation refused (503 limits_unavailable)",
    "redis unavailable: rate limits counted in this process",
  ]);
  expect(warnings[0]![1]).toMatchObject({ error: "Redis is not connected" });
});
