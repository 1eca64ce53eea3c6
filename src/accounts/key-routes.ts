import { sql } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import type { Db } from "../db/client";
import { protect } from "../http/protect";
import { microsToCredits } from "../ledger/units";
import { periodReset, periodStart } from "./budget-periods";
import { BUDGET_PERIODS, type BudgetPeriod } from "./policy";

// GET /v1/key: the calling key's own policy and what remains of each budget period, a status line an agent can read
// before it plans its next calls. Not on any hot path: it sums the key's records for the periods it has caps for.

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }];
const PeriodStatus = t.Object({
  limit_credits: t.Number(),
  spent_credits: t.Number({ description: "Charged LLM calls and media tasks of this key in the period, running tasks at their estimate." }),
  remaining_credits: t.Number(),
  resets_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "The next UTC boundary; null for lifetime." }),
});
export const KeyStatus = t.Object({
  id: t.String(),
  name: t.String(),
  account_id: t.String(),
  rate_limit: t.Object({ requests: t.Integer(), window_seconds: t.Integer(), own: t.Boolean({ description: "false: the gateway's default" }) }),
  max_concurrent_tasks: t.Integer(),
  models: t.Union([t.Array(t.String()), t.Null()], { description: "null: every model" }),
  expires_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  budget: t.Record(t.String(), PeriodStatus, { description: "One entry per period the key has a cap for (day, week, month, lifetime)." }),
});

/** µcr this key has spent since `since`: its LLM calls' charges, its finished tasks' costs, its running tasks' holds. */
export async function keySpentSince(db: Db, keyId: string, since: number): Promise<number> {
  const llm = await db.get<{ n: number | null }>(sql`select sum(cost) as n from usage_records where key_id = ${keyId} and created_at >= ${since}`);
  const media = await db.get<{ n: number | null }>(sql`select sum(case when state = ${"success"} then coalesce(cost, 0) when state = ${"fail"} then 0 else estimate end) as n
    from tasks where key_id = ${keyId} and created_at >= ${since}`);
  return Number(llm?.n ?? 0) + Number(media?.n ?? 0);
}

export function keyRoutes(ctx: AppContext) {
  return new Elysia({ name: "key-status" })
    .use(protect(ctx))
    .get(
      "/v1/key",
      async ({ auth }) => {
        await ctx.llmLedger?.settledFor(auth.accountId); // calls just answered: their records may still be queued
        const now = Date.now();
        const def = ctx.config.defaultRateLimit;
        const budget: Record<string, typeof PeriodStatus.static> = {};
        for (const period of BUDGET_PERIODS) {
          const limit = auth.budget[period];
          if (limit === undefined) continue;
          const spent = await keySpentSince(ctx.db, auth.keyId, periodStart(period as BudgetPeriod, now));
          const reset = periodReset(period, now);
          budget[period] = {
            limit_credits: microsToCredits(limit),
            spent_credits: microsToCredits(spent),
            remaining_credits: microsToCredits(Math.max(0, limit - spent)),
            resets_at: reset === null ? null : new Date(reset).toISOString(),
          };
        }
        return {
          id: auth.keyId,
          name: auth.keyName,
          account_id: auth.accountId,
          rate_limit: { requests: auth.rateRequests ?? def.requests, window_seconds: auth.rateWindowSeconds ?? def.windowSeconds, own: auth.rateRequests !== null },
          max_concurrent_tasks: auth.maxConcurrentTasks ?? ctx.config.defaultMaxConcurrentTasks,
          models: auth.models,
          expires_at: auth.expiresAt === null ? null : new Date(auth.expiresAt).toISOString(),
          budget,
        };
      },
      { response: KeyStatus, detail: { tags: ["Credits"], summary: "The calling key's policy and what remains of each budget period", security } },
    );
}
