import { Ratelimit } from "@upstash/ratelimit";
import { silentLogger, type Logger } from "../log";
import { UpstashRedisAdapter } from "./redis";
import type { RedisCommands } from "./redis-connection";
import { reportRedisFallback } from "./redis-fallbacks";

// A sliding window per key: @upstash/ratelimit's with Redis (shared by every process), the same algorithm in memory
// without. Two fixed windows, the previous one's count weighted by how much of it still overlaps the sliding window;
// `reset` is the end of the current fixed window, when a refused caller can next be sure of a slot.
// When Redis cannot answer, the key is counted in this process instead: a request limit protects the gateway from a
// flood, not money (every call is held and metered), so refusing everyone would be the worse outage, and a bound per
// process (N × the limit over N processes) beats none. The dashboard's sign-in limits get the same per-process bound.

export interface LimitResult {
  success: boolean;
  limit: number;
  remaining: number;
  reset: number;
}
export interface RateLimiter {
  limit(identifier: string, requests: number, windowSeconds: number): Promise<LimitResult>;
  /** limit(), answered at once by a limiter that counts in this process (no I/O): no promise to wait for */
  limitNow?(identifier: string, requests: number, windowSeconds: number): LimitResult;
}

export class MemoryRateLimiter implements RateLimiter {
  private counts = new Map<string, number>();
  private lastPrune = 0;

  async limit(identifier: string, requests: number, windowSeconds: number): Promise<LimitResult> {
    return this.limitNow(identifier, requests, windowSeconds);
  }

  limitNow(identifier: string, requests: number, windowSeconds: number): LimitResult {
    return this.limitSync(identifier, requests, windowSeconds, Date.now());
  }

  limitSync(identifier: string, requests: number, windowSeconds: number, now: number): LimitResult {
    const windowMs = windowSeconds * 1000;
    const current = Math.floor(now / windowMs);
    const base = `${identifier}:${requests}/${windowSeconds}:`;
    const inCurrent = this.counts.get(base + current) ?? 0;
    const inPrevious = Math.floor((1 - (now % windowMs) / windowMs) * (this.counts.get(base + (current - 1)) ?? 0));
    const reset = (current + 1) * windowMs;
    if (now - this.lastPrune > 60_000) this.prune(now);
    if (inPrevious + inCurrent >= requests) return { success: false, limit: requests, remaining: 0, reset };
    this.counts.set(base + current, inCurrent + 1);
    return { success: true, limit: requests, remaining: Math.max(0, requests - (inCurrent + 1 + inPrevious)), reset };
  }

  // Drop counters of windows that can no longer matter (older than the previous window of a 1-hour window).
  private prune(now: number) {
    this.lastPrune = now;
    for (const key of this.counts.keys()) {
      const [spec, win] = key.split(":").slice(-2);
      const windowMs = Number(spec!.split("/")[1]) * 1000;
      if (Number(win) < Math.floor(now / windowMs) - 1) this.counts.delete(key);
    }
  }
}

export class RedisRateLimiter implements RateLimiter {
  private limiters = new Map<string, Ratelimit>();
  private redis: UpstashRedisAdapter;
  /** Where keys are counted while Redis is unavailable. */
  private local = new MemoryRateLimiter();
  private log: Logger;
  private prefix: string;

  constructor(client: RedisCommands, opts: { log?: Logger; prefix?: string } = {}) {
    this.redis = new UpstashRedisAdapter(client);
    this.log = opts.log ?? silentLogger;
    this.prefix = opts.prefix ?? "switchyard:rl";
  }

  async limit(identifier: string, requests: number, windowSeconds: number): Promise<LimitResult> {
    const spec = `${requests}/${windowSeconds}`;
    let rl = this.limiters.get(spec);
    if (!rl) {
      rl = new Ratelimit({
        redis: this.redis as any,
        limiter: Ratelimit.slidingWindow(requests, `${windowSeconds} s`),
        prefix: `${this.prefix}:${spec}`,
        // No ephemeral cache: the verdict must come from Redis so every process agrees.
        ephemeralCache: false,
        analytics: false,
        // Off: the library's timeout would answer "success, limit 0" after 5 s. The connection bounds every command
        // itself (COMMAND_TIMEOUT_MS) and a failure lands in the fallback below.
        timeout: 0,
      });
      this.limiters.set(spec, rl);
    }
    try {
      const r = await rl.limit(identifier);
      return { success: r.success, limit: r.limit, remaining: r.remaining, reset: r.reset };
    } catch (e) {
      reportRedisFallback(this.log, "rate_limit", e);
      return this.local.limit(identifier, requests, windowSeconds);
    }
  }
}

/** Whole seconds until `reset`, never 0 (a retry-after of 0 makes clients hammer). */
export function retryAfterSeconds(reset: number, now = Date.now()): number {
  return Math.max(1, Math.ceil((reset - now) / 1000));
}
