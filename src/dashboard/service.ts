import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { newId, sha256Hex } from "../db/ids";
import { DAY_MS } from "./format";

// What the dashboard's pages read and change in the database, one function per question, scoped by account (a row
// of another account is simply not found). The pages turn the answers into HTML.

/** The wallet page's ledger: the account's latest entries, and how many holds are pending. */
export async function walletLedger(ctx: AppContext, accountId: string, entries: number) {
  const holds = await ctx.db.get<{ n: number }>(
    sql`select count(*) as n from holds where account_id = ${accountId} and status = ${"pending"}`,
  );
  const rows = await ctx.db.all<{
    id: number | string;
    hold_id: string | null;
    kind: string;
    amount: number;
    reason: string | null;
    created_at: number;
  }>(
    sql`select id, hold_id, kind, amount, reason, created_at from entries
      where account_id = ${accountId} order by created_at desc, id desc limit ${entries}`,
  );
  return { pendingHolds: holds?.n ?? 0, entries: rows };
}

export interface TaskLine {
  id: string;
  model: string;
  state: string;
  estimate: number;
  cost: number | null;
  result_json: string | null;
  fail_code: string | null;
  fail_msg: string | null;
  created_at: number;
  results_expired: number;
}

/** The account's latest media tasks, in one state or any. */
export function recentTasks(
  ctx: AppContext,
  accountId: string,
  state: string | undefined,
  limit: number,
): Promise<TaskLine[]> {
  return ctx.db.all<TaskLine>(sql`select id, model, state, estimate, cost, result_json, fail_code, fail_msg, created_at, results_expired
    from tasks where account_id = ${accountId} ${state ? sql`and state = ${state}` : sql``} order by created_at desc limit ${limit}`);
}

/** The content type of each result file of these tasks, by its token. */
export async function resultFileTypes(ctx: AppContext, taskIds: string[]): Promise<Map<string, string>> {
  if (!taskIds.length) return new Map();
  const rows = await ctx.db.all<{ id: string; content_type: string }>(
    sql`select id, content_type from result_files where task_id in (${sql.join(
      taskIds.map((id) => sql`${id}`),
      sql`, `,
    )})`,
  );
  return new Map(rows.map((r) => [r.id, r.content_type]));
}

/** The id of the account's live key whose plaintext this is (the key just created, shown once), if any. */
export async function liveKeyIdOf(ctx: AppContext, accountId: string, plaintext: string): Promise<string | undefined> {
  const row = await ctx.db.get<{ id: string }>(
    sql`select id from api_keys where key_hash = ${sha256Hex(plaintext)} and account_id = ${accountId} and revoked_at is null`,
  );
  return row?.id;
}

/** The account's latest callback deliveries. */
export function recentDeliveries(ctx: AppContext, accountId: string, limit: number) {
  return ctx.db.all<{
    id: string;
    task_id: string;
    url: string;
    attempt: number;
    state: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number | null;
    created_at: number;
  }>(
    sql`select id, task_id, url, attempt, state, status_code, error, duration_ms, created_at
      from callback_deliveries where account_id = ${accountId} order by created_at desc, id desc limit ${limit}`,
  );
}

/**
 * Queues a delivery of a finished task's callback again, to the task's callback URL (or the delivery's, when the task
 * is gone). `not_found`: no such delivery on this account; `not_finished`: its task's callback is still to come.
 */
export async function queueRedelivery(
  ctx: AppContext,
  accountId: string,
  deliveryId: string,
): Promise<{ taskId: string } | "not_found" | "not_finished"> {
  const delivery = await ctx.db.get<{ task_id: string; url: string }>(
    sql`select task_id, url from callback_deliveries where id = ${deliveryId} and account_id = ${accountId}`,
  );
  if (!delivery) return "not_found";
  const task = await ctx.db.get<{ state: string; callback_url: string | null }>(
    sql`select state, callback_url from tasks where id = ${delivery.task_id} and account_id = ${accountId}`,
  );
  if (task && task.state !== "success" && task.state !== "fail") return "not_finished";
  const now = Date.now();
  await ctx.db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
    values (${newId("cbd")}, ${delivery.task_id}, ${accountId}, ${task?.callback_url ?? delivery.url}, ${1}, ${"pending"}, ${now}, ${now})`);
  return { taskId: delivery.task_id };
}

export interface UsageFilter {
  /** UTC day numbers, both included */
  from: number;
  to: number;
  model?: string;
  requestId?: string;
}

/**
 * The usage page's numbers: LLM calls per day and model, the request log, media tasks' spend per day and model (by
 * the day they were created; they have no request id, so a request-id filter shows LLM calls only), spend per key,
 * and every model the account has used.
 */
export async function usageReport(ctx: AppContext, accountId: string, filter: UsageFilter, logLimit: number) {
  const { from, to, model, requestId } = filter;
  const day = sql.raw(String(DAY_MS));
  const where = sql`account_id = ${accountId} and created_at >= ${from * DAY_MS} and created_at < ${(to + 1) * DAY_MS}
    ${model ? sql`and model = ${model}` : sql``} ${requestId ? sql`and id = ${requestId}` : sql``}`;
  const perDay = await ctx.db.all<any>(sql`select created_at / ${day} as day_number, model, count(*) as n,
      sum(cost) as cost, sum(input_tokens) as input, sum(output_tokens) as output, sum(cache_read_tokens) as cache_read, sum(cache_write_tokens) as cache_write
    from usage_records where ${where} group by day_number, model`);
  const log =
    await ctx.db.all<any>(sql`select request_id, model, endpoint, provider, status, upstream_status, input_tokens, output_tokens,
      cache_read_tokens, cache_write_tokens, web_search_calls, cost, latency_ms, ttfb_ms, created_at
    from usage_records where ${where} order by created_at desc, id desc limit ${logLimit}`);
  const taskWhere = sql`account_id = ${accountId} and state = ${"success"} and created_at >= ${from * DAY_MS} and created_at < ${(to + 1) * DAY_MS}
    ${model ? sql`and model = ${model}` : sql``}`;
  const mediaPerDay = requestId
    ? []
    : await ctx.db.all<any>(sql`select created_at / ${day} as day_number, model, count(*) as n, sum(cost) as cost
    from tasks where ${taskWhere} group by day_number, model`);
  const callsPerKey = await ctx.db.all<any>(
    sql`select key_id, count(*) as n, sum(cost) as cost, 0 as tasks from usage_records where ${where} group by key_id`,
  );
  const tasksPerKey = requestId
    ? []
    : await ctx.db.all<any>(
        sql`select key_id, count(*) as tasks, sum(cost) as cost from tasks where ${taskWhere} group by key_id`,
      );
  const byKey = new Map<string, { n: number; tasks: number; cost: number }>();
  for (const row of [...callsPerKey, ...tasksPerKey]) {
    const total = byKey.get(row.key_id) ?? { n: 0, tasks: 0, cost: 0 };
    total.n += Number(row.n ?? 0);
    total.tasks += Number(row.tasks ?? 0);
    total.cost += Number(row.cost ?? 0);
    byKey.set(row.key_id, total);
  }
  const models = (
    await ctx.db.all<{ model: string }>(sql`select distinct model from usage_records where account_id = ${accountId}
    union select distinct model from tasks where account_id = ${accountId} and state = ${"success"} order by model`)
  ).map((r) => r.model);
  return { perDay, log, mediaPerDay, byKey, models };
}
