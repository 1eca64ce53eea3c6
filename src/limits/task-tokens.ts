import type { RedisCommands } from "./redis-connection";

// Concurrency tokens: at most N running media tasks per API key. A task takes a token when it is created and gives
// it back when it ends. Tokens carry an expiry that the media engine keeps pushing forward while the task runs, so a
// token left behind by a dead process frees itself instead of blocking the key forever.
//
// In process (no Redis): a Map per key. With Redis: one sorted set per key, member = task id, score = expiry (ms);
// acquire is one Lua script (drop expired, count, add), so two processes can never both take the last slot.

export interface TokenHolder {
  taskId: string;
  expiresAt: number;
}

export type AcquireResult = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * Redis could not say whether the key has a free slot. The caller refuses the task (503 limits_unavailable): unlike
 * a request limit, this one bounds how much costly upstream work a key runs at once, and a task is cheap to retry
 * a few seconds later, while tasks let through blind could not be taken back once they run.
 */
export class TaskTokensUnavailableError extends Error {
  override name = "TaskTokensUnavailableError";
  /** Redis reconnects within seconds of coming back (redis-connection.ts). */
  readonly retryAfterSeconds = 5;
}

export interface TaskTokens {
  /** Takes a slot for the task, or says when to retry; throws TaskTokensUnavailableError when it cannot tell. */
  acquire(keyId: string, taskId: string, limit: number, ttlMs: number): Promise<AcquireResult>;
  /** Push the token's expiry forward (re-creating it if it was lost, e.g. after a restart). */
  refresh(keyId: string, taskId: string, ttlMs: number): Promise<void>;
  release(keyId: string, taskId: string): Promise<void>;
  /** The key's unexpired tokens: task id and expiry (ms), for reconciling them against the tasks table. */
  holders(keyId: string): Promise<TokenHolder[]>;
  /** Running tokens of a key (for tests and the dashboard). */
  count(keyId: string): Promise<number>;
}

/**
 * Token releases that failed (Redis away), tried again by retry() until they go through. A failed release must not
 * replace the error the caller is owed (a 402 turned into a 500), nor leave the token taken until it expires: the
 * engine retries at every round, the task service before its next acquire.
 */
export class TokenReleases {
  private failed = new Map<string, string>(); // task id → key id

  constructor(
    private tokens: TaskTokens,
    private onFirstFailure: (taskId: string, error: unknown) => void = () => {},
  ) {}

  /** Gives the token back, or queues it for retry(); never throws. Returns whether it went through now. */
  async release(keyId: string, taskId: string): Promise<boolean> {
    try {
      await this.tokens.release(keyId, taskId);
      this.failed.delete(taskId);
      return true;
    } catch (e) {
      if (!this.failed.has(taskId)) this.onFirstFailure(taskId, e);
      this.failed.set(taskId, keyId);
      return false;
    }
  }

  async retry(): Promise<void> {
    for (const [taskId, keyId] of [...this.failed]) await this.release(keyId, taskId);
  }

  get size(): number {
    return this.failed.size;
  }
}

// A refused caller cannot know when a running task ends; 10 s is a polite retry for tasks that take seconds to minutes.
const RETRY_AFTER_SECONDS = 10;

export class MemoryTaskTokens implements TaskTokens {
  private keys = new Map<string, Map<string, number>>();

  private live(keyId: string, now: number): Map<string, number> {
    let m = this.keys.get(keyId);
    if (!m) this.keys.set(keyId, (m = new Map()));
    for (const [task, until] of m) if (until <= now) m.delete(task);
    return m;
  }

  async acquire(keyId: string, taskId: string, limit: number, ttlMs: number): Promise<AcquireResult> {
    const now = Date.now();
    const m = this.live(keyId, now);
    if (!m.has(taskId) && m.size >= limit) return { ok: false, retryAfterSeconds: RETRY_AFTER_SECONDS };
    m.set(taskId, now + ttlMs);
    return { ok: true };
  }

  async refresh(keyId: string, taskId: string, ttlMs: number): Promise<void> {
    this.live(keyId, Date.now()).set(taskId, Date.now() + ttlMs);
  }

  async release(keyId: string, taskId: string): Promise<void> {
    const m = this.keys.get(keyId);
    m?.delete(taskId);
    if (m && m.size === 0) this.keys.delete(keyId);
  }

  async holders(keyId: string): Promise<TokenHolder[]> {
    return [...this.live(keyId, Date.now())].map(([taskId, expiresAt]) => ({ taskId, expiresAt }));
  }

  async count(keyId: string): Promise<number> {
    return this.live(keyId, Date.now()).size;
  }
}

// KEYS[1] = the key's set; ARGV = now, expiry, limit, task id, set ttl (ms). Returns 1 when the token is held.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export class RedisTaskTokens implements TaskTokens {
  private sha?: string;

  constructor(
    private redis: RedisCommands,
    private prefix = "switchyard:task-tokens",
  ) {}

  private key(keyId: string) {
    return `${this.prefix}:${keyId}`;
  }

  /** Throws TaskTokensUnavailableError when Redis fails; a token a timed-out command may still have taken goes back or expires. */
  async acquire(keyId: string, taskId: string, limit: number, ttlMs: number): Promise<AcquireResult> {
    try {
      return await this.acquireOnRedis(keyId, taskId, limit, ttlMs);
    } catch (e) {
      // A command that timed out may still have run: give the token back, best effort (if Redis is gone, the
      // token expires with its TTL: nobody refreshes a task that was never created).
      this.release(keyId, taskId).catch(() => {});
      throw new TaskTokensUnavailableError(`concurrency tokens unavailable: ${String((e as Error)?.message ?? e)}`, {
        cause: e,
      });
    }
  }

  private async acquireOnRedis(keyId: string, taskId: string, limit: number, ttlMs: number): Promise<AcquireResult> {
    const now = Date.now();
    const args = [String(now), String(now + ttlMs), String(limit), taskId, String(ttlMs)];
    this.sha ??= (await this.redis.send("SCRIPT", ["LOAD", ACQUIRE])) as string;
    let r: unknown;
    try {
      r = await this.redis.send("EVALSHA", [this.sha, "1", this.key(keyId), ...args]);
    } catch (e) {
      if (!String(e).includes("NOSCRIPT")) throw e;
      r = await this.redis.send("EVAL", [ACQUIRE, "1", this.key(keyId), ...args]); // the script cache was flushed
    }
    return Number(r) === 1 ? { ok: true } : { ok: false, retryAfterSeconds: RETRY_AFTER_SECONDS };
  }

  async refresh(keyId: string, taskId: string, ttlMs: number): Promise<void> {
    await this.redis.send("ZADD", [this.key(keyId), String(Date.now() + ttlMs), taskId]);
    await this.redis.send("PEXPIRE", [this.key(keyId), String(ttlMs)]);
  }

  async release(keyId: string, taskId: string): Promise<void> {
    await this.redis.send("ZREM", [this.key(keyId), taskId]);
  }

  async holders(keyId: string): Promise<TokenHolder[]> {
    const reply = (await this.redis.send("ZRANGEBYSCORE", [
      this.key(keyId),
      String(Date.now()),
      "+inf",
      "WITHSCORES",
    ])) as unknown[];
    // RESP3 answers [member, score] pairs, RESP2 a flat member, score, member, score list.
    const flat = reply.flatMap((r) => (Array.isArray(r) ? r : [r]));
    const out: TokenHolder[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ taskId: String(flat[i]), expiresAt: Number(flat[i + 1]) });
    return out;
  }

  async count(keyId: string): Promise<number> {
    await this.redis.send("ZREMRANGEBYSCORE", [this.key(keyId), "-inf", String(Date.now())]);
    return Number(await this.redis.send("ZCARD", [this.key(keyId)]));
  }
}
