import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { routeGuards } from "../http/guards";
import { microsToCredits } from "../ledger/units";
import { periodReset } from "./budget-periods";
import { budgetUsed } from "./key-budgets";
import { BUDGET_PERIODS } from "./policy";

// GET /v1/key: the calling key's own policy and what remains of each budget period, a status line an agent can read
// before it plans its next calls. It reads the same counts the budget's holds are checked against (key-budgets.ts).

const security: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }];
const PeriodStatus = t.Object({
  limit_credits: t.Number(),
  spent_credits: t.Number({
    description:
      "What this key's LLM calls and media tasks were charged in the period, plus what those still running hold.",
  }),
  remaining_credits: t.Number(),
  resets_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "The next UTC boundary; null for lifetime.",
  }),
});
export const KeyStatus = t.Object({
  id: t.String(),
  name: t.String(),
  account_id: t.String(),
  rate_limit: t.Object({
    requests: t.Integer(),
    window_seconds: t.Integer(),
    own: t.Boolean({ description: "false: the gateway's default" }),
  }),
  max_concurrent_tasks: t.Integer(),
  models: t.Union([t.Array(t.String()), t.Null()], { description: "null: every model" }),
  expires_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  budget: t.Record(t.String(), PeriodStatus, {
    description: "One entry per period the key has a cap for (day, week, month, lifetime).",
  }),
});

export function keyRoutes(ctx: AppContext) {
  return new Elysia({ name: "key-status" }).use(routeGuards(ctx)).get(
    "/v1/key",
    async ({ auth }) => {
      await ctx.keyBudgets?.committedFor(auth.keyId); // calls just answered: what they were charged may still be on its way
      const now = Date.now();
      const defaultLimit = ctx.config.defaultRateLimit;
      const budget: Record<string, typeof PeriodStatus.static> = {};
      const used = await budgetUsed(ctx.db, auth.keyId, now);
      for (const period of BUDGET_PERIODS) {
        const limit = auth.budget[period];
        if (limit === undefined) continue;
        const spent = used[period] ?? 0;
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
        rate_limit: {
          requests: auth.rateRequests ?? defaultLimit.requests,
          window_seconds: auth.rateWindowSeconds ?? defaultLimit.windowSeconds,
          own: auth.rateRequests !== null,
        },
        max_concurrent_tasks: auth.maxConcurrentTasks ?? ctx.config.defaultMaxConcurrentTasks,
        models: auth.models,
        expires_at: auth.expiresAt === null ? null : new Date(auth.expiresAt).toISOString(),
        budget,
      };
    },
    {
      apiKey: true,
      response: KeyStatus,
      detail: {
        tags: ["Credits"],
        summary: "The calling key's policy and what remains of each budget period",
        security,
      },
    },
  );
}
