// The key's concurrency token a task is created under (limits/task-tokens.ts counts them): taken before the task's
// row is inserted, given back when the creation fails, and, before a refusal stands, checked against the tasks
// table so that tokens whose tasks have ended or never existed do not refuse the key's next task.
import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { reportRedisFallback } from "../limits/redis-fallbacks";
import { TokenReleases, TaskTokensUnavailableError } from "../limits/task-tokens";
import { type MediaSettings, tokenTtlMs } from "./settings";
import type { CallingKey } from "./task-requests";

/**
 * How long another process's creation may take from its token to its committed row (a token without a row is
 * dropped after it); this process's own creations are known however long they take (CreationTokens.creating).
 */
const CREATION_GRACE_MS = 10_000;

export class CreationTokens {
  /** Tokens of refused creations that could not be given back yet (Redis away): retried before the next acquire. */
  private tokenReleases: TokenReleases;
  /**
   * Tasks this process is creating (their token taken or being taken, their row not yet committed): their tokens are
   * never phantoms, however long the creation waits (on Redis, the database, other processes' floats).
   */
  private creating = new Set<string>();

  constructor(
    private ctx: AppContext,
    private settings: MediaSettings,
  ) {
    this.tokenReleases = new TokenReleases(ctx.taskTokens, (taskId, e) =>
      ctx.log.warn("concurrency token not given back yet; retrying", {
        task_id: taskId,
        error: String((e as Error)?.message ?? e),
      }),
    );
  }

  /** `create` run under a token of the caller's key for task `taskId` (429 when the key runs its limit already). */
  async holding<T>(caller: CallingKey, taskId: string, create: () => Promise<T>): Promise<T> {
    await this.tokenReleases.retry();
    // From before its token is taken until its row is committed (or it is refused), its token is not a phantom's.
    this.creating.add(taskId);
    try {
      await this.acquire(caller, taskId);
      // From here on the token is ours to give back: ANY error (a record that cannot be serialised, the database, no
      // credits) returns it, or the key would be refused with 429 until the token expired with nothing running. The
      // caller gets that error, never the release's own (Redis away): the release is queued and retried.
      try {
        return await create();
      } catch (e) {
        await this.tokenReleases.release(caller.keyId, taskId);
        throw e;
      }
    } finally {
      this.creating.delete(taskId);
    }
  }

  private async acquire(caller: CallingKey, taskId: string): Promise<void> {
    const { ctx, settings } = this;
    const limit = caller.maxConcurrentTasks ?? settings.defaultMaxConcurrentTasks;
    const acquire = () => ctx.taskTokens.acquire(caller.keyId, taskId, limit, tokenTtlMs(settings));
    const token = await acquire()
      .then(async (t) => (t.ok || !(await this.dropDeadTokens(caller.keyId)) ? t : acquire()))
      .catch((e) => {
        // Redis is away: refuse rather than run tasks nobody counts (task-tokens.ts says why); nothing exists yet.
        if (!(e instanceof TaskTokensUnavailableError)) throw e;
        reportRedisFallback(ctx.log, "task_tokens", e);
        throw new ApiError(
          503,
          "limits_unavailable",
          "The gateway cannot check this key's running tasks just now; nothing was created or charged. Retry shortly.",
          {
            headers: { "retry-after": String(e.retryAfterSeconds) },
          },
        );
      });
    if (!token.ok) {
      throw new ApiError(
        429,
        "too_many_running_tasks",
        `This key already runs ${limit} media task(s); retry when one finishes.`,
        {
          headers: { "retry-after": String(token.retryAfterSeconds) },
        },
      );
    }
  }

  /**
   * Before a refusal stands, the key's tokens are checked against the tasks table: a token whose task has ended
   * (its release was lost with the process that ran it) or was never recorded (an acquire that timed out on our side
   * yet ran on Redis, a creation that died) is dropped. A token is taken just before its task's row is inserted, so
   * one without a row is dropped only once it is older than any creation can take. Returns whether any was dropped.
   */
  private async dropDeadTokens(keyId: string): Promise<boolean> {
    const { ctx, settings } = this;
    // Best effort: when this cannot run (Redis away again), the refusal stands as it was.
    const holders = await ctx.taskTokens.holders(keyId).catch(() => []);
    if (!holders.length) return false;
    const ids = sql.join(
      holders.map((h) => sql`${h.taskId}`),
      sql`, `,
    );
    const rows = await ctx.db.all<{ id: string; state: string }>(sql`select id, state from tasks where id in (${ids})`);
    const states = new Map(rows.map((r) => [r.id, r.state]));
    const takenBefore = Date.now() - CREATION_GRACE_MS;
    const dead = holders.filter((h) => {
      const state = states.get(h.taskId);
      if (state === undefined) return !this.creating.has(h.taskId) && h.expiresAt - tokenTtlMs(settings) < takenBefore;
      return state !== "waiting" && state !== "generating";
    });
    for (const h of dead) await this.tokenReleases.release(keyId, h.taskId);
    if (dead.length)
      ctx.log.warn("concurrency tokens of ended or unknown tasks dropped", {
        key_id: keyId,
        task_ids: dead.map((h) => h.taskId),
      });
    return dead.length > 0;
  }
}
