// Creating and reading tasks (no HTTP here; routes.ts adapts both front doors to it).
// Creation order matters for money: validate (the key's models too, input URLs' addresses) → estimate → budget guard
// → callback URL (task-requests.ts) → concurrency token (creation-tokens.ts) → ONE transaction that records the task
// and holds its estimate. Every refusal before the transaction leaves nothing behind (no task, no hold, no token).
import { sql } from "drizzle-orm";
import { holdBudgetIn } from "../accounts/key-budgets";
import { refuseModelNotAllowed } from "../accounts/policy";
import type { AppContext } from "../context";
import { newId } from "../db/ids";
import { ApiError, notFound } from "../http/errors";
import { withIdleFloatBack } from "../ledger/float";
import { CreationTokens } from "./creation-tokens";
import type { MediaModel } from "./model";
import type { MediaSettings } from "./settings";
import {
  budgetOf,
  type CallingKey,
  checkedCallbackUrl,
  type CreateRequest,
  overBudget,
  prepareInput,
  refusePrivateInputUrls,
  requireModel,
} from "./task-requests";
import type { TaskRow } from "./views";

const HOUR_MS = 3_600_000;

export class TaskService {
  private tokens: CreationTokens;

  constructor(
    private ctx: AppContext,
    private settings: MediaSettings,
  ) {
    this.tokens = new CreationTokens(ctx, settings);
  }

  async create(caller: CallingKey, req: CreateRequest): Promise<TaskRow> {
    const model = requireModel(this.ctx, req.model);
    refuseModelNotAllowed(caller.models, req.model as string, model);
    const prepared = prepareInput(model, req.input, req.names.inputPrefix);
    if (!this.settings.inputUrls.allowPrivate) refusePrivateInputUrls(model, prepared.value, req.names.inputPrefix);
    const budget = budgetOf(req.maxCredits);
    if (budget !== undefined && prepared.estimate > budget) throw overBudget(prepared.estimate, budget);
    const callbackUrl = await checkedCallbackUrl(req, this.settings.callbacks.allowPrivate);
    const id = newId("task");
    return this.tokens.holding(caller, id, () => this.insertTask(caller, model, req, prepared, id, callbackUrl));
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
