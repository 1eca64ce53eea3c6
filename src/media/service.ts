// Creating and reading tasks (no HTTP here; routes.ts adapts both front doors to it).
// Creation order matters for money: validate (the key's models too) → estimate → budget guard → callback URL → concurrency token →
// ONE transaction that records the task and holds its estimate. Every refusal before the transaction leaves
// nothing behind (no task, no hold, no token).
import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { newId } from "../db/ids";
import { holdBudgetIn } from "../accounts/key-budgets";
import { refuseModelNotAllowed, type Budget } from "../accounts/policy";
import { ApiError, notFound } from "../http/errors";
import { withIdleFloatBack } from "../ledger/float";
import { maxCreditsToMicros, microsToCredits } from "../ledger/units";
import { reportRedisFallback } from "../limits/redis-fallbacks";
import { PendingReleases, TaskTokensUnavailableError } from "../limits/task-tokens";
import type { MediaModel } from "./model";
import type { MediaSettings } from "./settings";
import { checkCallbackUrl } from "./ssrf";
import type { TaskRow } from "./views";

const HOUR_MS = 3_600_000;
/**
 * How long another process's creation may take from its token to its committed row (a token without a row is
 * dropped after it); this process's own creations are known however long they take (TaskService.creating).
 */
const CREATION_GRACE_MS = 10_000;

export interface CreateRequest {
  model: unknown;
  input: unknown;
  callbackUrl?: unknown;
  maxCredits?: unknown;
  /** The original request as sent (kept as the record's `param`). */
  param: unknown;
  /** How this front door names its fields in errors (callBackUrl vs callback_url; input.x vs x). */
  names: { callback: string; inputPrefix: string };
}

/** The key a task is created with: who pays, and the limits its policy sets. */
export interface CallingKey {
  keyId: string;
  accountId: string;
  maxConcurrentTasks: number | null;
  models: string[] | null;
  budget: Budget;
}

export function requireModel(ctx: AppContext, id: unknown): MediaModel {
  if (typeof id !== "string" || !id)
    throw new ApiError(422, "invalid_request", "model is required.", { param: "model" });
  const model = ctx.catalog.findMedia(id);
  if (model) {
    ctx.catalog.servable(model);
    return model;
  }
  const llm = ctx.catalog.llm.get(id);
  if (llm) ctx.catalog.servable(llm); // a retired LLM answers 410 naming its successor, not the endpoint it no longer has
  if (llm)
    throw new ApiError(
      422,
      "wrong_endpoint",
      `Model ${llm.id} is a language model, not a media task: call POST ${llm.endpoint} with it.`,
      { param: "model" },
    );
  throw new ApiError(422, "model_not_found", `Unknown media model ${JSON.stringify(id)}; GET /v1/models lists them.`, {
    param: "model",
  });
}

/** Validated input and its estimate, or a 422 naming the field. */
export function prepareInput(model: MediaModel, input: unknown, inputPrefix: string) {
  const prepared = model.prepare(input ?? {});
  if (!prepared.ok) {
    const param = prepared.field === "input" ? "input" : inputPrefix + prepared.field;
    throw new ApiError(422, "invalid_request", `${param}: ${prepared.message}`, { param });
  }
  return prepared;
}

/** max_credits as µcr (undefined when absent); a malformed or too large value is a 422 (units.ts has the rule). */
export function budgetOf(maxCredits: unknown): number | undefined {
  try {
    return maxCreditsToMicros(maxCredits);
  } catch (e) {
    throw new ApiError(422, "invalid_max_credits", (e as Error).message, { param: "max_credits" });
  }
}

export function overBudget(estimate: number, maxCredits: number): ApiError {
  return new ApiError(
    402,
    "max_credits_exceeded",
    `This task is estimated at ${microsToCredits(estimate)} credits, above max_credits ${microsToCredits(maxCredits)}; nothing was created or charged.`,
    { param: "max_credits", type: "insufficient_quota" },
  );
}

export class TaskService {
  /** Tokens of refused creations that could not be given back yet (Redis away): retried before the next acquire. */
  private unreleased: PendingReleases;
  /**
   * Tasks this process is creating (their token taken or being taken, their row not yet committed): their tokens are
   * never phantoms, however long the creation waits (on Redis, the database, other processes' floats).
   */
  private creating = new Set<string>();

  constructor(
    private ctx: AppContext,
    private settings: MediaSettings,
  ) {
    this.unreleased = new PendingReleases(ctx.taskTokens, (taskId, e) =>
      ctx.log.warn("concurrency token not given back yet; retrying", {
        task_id: taskId,
        error: String((e as Error)?.message ?? e),
      }),
    );
  }

  async create(caller: CallingKey, req: CreateRequest): Promise<TaskRow> {
    const { ctx, settings } = this;
    const model = requireModel(ctx, req.model);
    refuseModelNotAllowed(caller.models, req.model as string, model.id);
    const prepared = prepareInput(model, req.input, req.names.inputPrefix);
    const budget = budgetOf(req.maxCredits);
    if (budget !== undefined && prepared.estimate > budget) throw overBudget(prepared.estimate, budget);
    let callbackUrl: string | null = null;
    if (req.callbackUrl !== undefined && req.callbackUrl !== null && req.callbackUrl !== "") {
      const check =
        typeof req.callbackUrl === "string"
          ? await checkCallbackUrl(req.callbackUrl, settings.callbacks.allowPrivate)
          : { ok: false as const, reason: "must be a string" };
      if (!check.ok)
        throw new ApiError(422, "invalid_callback_url", `${req.names.callback} ${check.reason}.`, {
          param: req.names.callback,
        });
      callbackUrl = req.callbackUrl as string;
    }

    await this.unreleased.retry();
    const id = newId("task");
    // From before its token is taken until its row is committed (or it is refused), its token is not a phantom's.
    this.creating.add(id);
    try {
      const limit = caller.maxConcurrentTasks ?? settings.defaultMaxConcurrentTasks;
      const acquire = () => ctx.taskTokens.acquire(caller.keyId, id, limit, tokenTtlMs(settings));
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
      // From here on the token is ours to give back: ANY error (a record that cannot be serialised, the database, no
      // credits) returns it, or the key would be refused with 429 until the token expired with nothing running. The
      // caller gets that error, never the release's own (Redis away): the release is queued and retried.
      try {
        return await this.insertTask(caller, model, req, prepared, id, callbackUrl);
      } catch (e) {
        await this.unreleased.release(caller.keyId, id);
        throw e;
      }
    } finally {
      this.creating.delete(id);
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
    for (const h of dead) await this.unreleased.release(keyId, h.taskId);
    if (dead.length)
      ctx.log.warn("concurrency tokens of ended or unknown tasks dropped", {
        key_id: keyId,
        task_ids: dead.map((h) => h.taskId),
      });
    return dead.length > 0;
  }

  /** ONE transaction: the task row and the hold of its estimate. */
  private async insertTask(
    caller: CallingKey,
    model: MediaModel,
    req: CreateRequest,
    prepared: ReturnType<typeof prepareInput>,
    id: string,
    callbackUrl: string | null,
  ): Promise<TaskRow> {
    const { ctx, settings } = this;
    const now = Date.now();
    const deadlineSeconds = Math.min(model.deadline_seconds, settings.maxDeadlineSeconds ?? Infinity);
    const deadline = now + deadlineSeconds * 1000;
    const row: TaskRow = {
      id,
      account_id: caller.accountId,
      key_id: caller.keyId,
      model: model.id,
      state: "waiting",
      param: JSON.stringify(req.param),
      input: JSON.stringify(prepared.value),
      callback_url: callbackUrl,
      hold_id: null,
      estimate: prepared.estimate,
      cost: null,
      route_index: 0,
      provider: null,
      upstream_ref: null,
      result_json: null,
      fail_code: null,
      fail_msg: null,
      attempts: 0,
      next_poll_at: now,
      deadline_at: deadline,
      lease_owner: null,
      lease_until: null,
      created_at: now,
      updated_at: now,
      completed_at: null,
      results_expire_at: null,
      results_expired: 0,
      budget_hold: null,
    };
    const ledger = ctx.ledger;
    const insert = () =>
      ctx.db.tx(function* (q) {
        // The hold outlives the deadline by an hour: the engine fails (and voids) a late task itself, so the
        // hold sweeper never has to void a task hold under a running task.
        // The key's budget first (402 key_budget_exceeded); a wallet that refuses rolls both back.
        const budgetHold = yield* holdBudgetIn(q, caller, prepared.estimate, now);
        row.budget_hold = budgetHold && JSON.stringify(budgetHold);
        const hold = yield* ledger.holdIn(q, caller.accountId, prepared.estimate, "task", id, deadline + HOUR_MS - now);
        row.hold_id = hold.id;
        yield* q.run(sql`insert into tasks (id, account_id, key_id, model, state, param, input, callback_url, hold_id, estimate,
            route_index, attempts, next_poll_at, deadline_at, created_at, updated_at, results_expired, budget_hold)
          values (${row.id}, ${row.account_id}, ${row.key_id}, ${row.model}, ${row.state}, ${row.param}, ${row.input}, ${row.callback_url},
            ${row.hold_id}, ${row.estimate}, ${0}, ${0}, ${row.next_poll_at}, ${row.deadline_at}, ${now}, ${now}, ${0}, ${row.budget_hold})`);
      });
    await withIdleFloatBack(ctx, caller.accountId, "insufficient_credits", insert);
    return row;
  }

  /** A task of this account; another account's id is "not found" (ids are not secrets, ownership is). */
  async get(accountId: string, taskId: unknown): Promise<TaskRow> {
    if (typeof taskId !== "string" || !taskId)
      throw new ApiError(422, "invalid_request", "taskId is required.", { param: "taskId" });
    const row = await this.ctx.db.get<TaskRow>(
      sql`select * from tasks where id = ${taskId} and account_id = ${accountId}`,
    );
    if (!row) throw notFound(`Task ${taskId}`);
    return row;
  }
}

/** A result file's record, by the unguessable token in its URL. */
export interface ResultFile {
  storage_key: string;
  content_type: string;
  expires_at: number;
  deleted_at: number | null;
}

export function findResultFile(ctx: AppContext, token: string): Promise<ResultFile | undefined> {
  return ctx.db.get<ResultFile>(
    sql`select storage_key, content_type, expires_at, deleted_at from result_files where id = ${token}`,
  );
}

/**
 * An upstream's own completion notice: the generating task it names is polled next. The notice is not trusted for
 * results, so a forged one costs one early poll.
 */
export async function pollSoon(ctx: AppContext, upstreamRef: string): Promise<void> {
  await ctx.db.run(
    sql`update tasks set next_poll_at = ${Date.now()} where upstream_ref = ${upstreamRef} and state = ${"generating"}`,
  );
}

/** Tokens outlive three housekeeping rounds, so a live task's token is always refreshed before it lapses. */
export function tokenTtlMs(settings: MediaSettings): number {
  return Math.max(3 * settings.housekeepingMs, 30_000);
}
