import { sql } from "drizzle-orm";
import { microsToCredits } from "../ledger/units";
import { BUDGET_PERIODS, type Budget, type BudgetPeriod, type KeyPolicyChange } from "./policy";
import type { KeyRules, KeyView } from "./service";

// An api_keys row both ways: read into the rules authentication enforces and the view the APIs answer with, and
// written from a policy change. The budget's four columns are named in one table, so each way reads the same ones.

function iso(ms: number | null): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}

export const BUDGET_COLUMNS: Record<BudgetPeriod, string> = {
  day: "budget_day",
  week: "budget_week",
  month: "budget_month",
  lifetime: "budget_lifetime",
};

export function keyRules(row: any): KeyRules {
  const budget: Budget = {};
  for (const period of BUDGET_PERIODS)
    if (row[BUDGET_COLUMNS[period]] != null) budget[period] = Number(row[BUDGET_COLUMNS[period]]);
  return {
    models: row.models == null ? null : JSON.parse(row.models),
    expiresAt: row.expires_at == null ? null : Number(row.expires_at),
    budget,
  };
}

/** The `column = value` pieces of an update for the fields a change sets. */
export function policySets(change: KeyPolicyChange): ReturnType<typeof sql>[] {
  const sets: ReturnType<typeof sql>[] = [];
  const set = (column: string, value: unknown) => sets.push(sql`${sql.identifier(column)} = ${value}`);
  if (change.name !== undefined) set("name", change.name);
  if (change.rateLimit !== undefined) {
    set("rate_requests", change.rateLimit?.requests ?? null);
    set("rate_window_seconds", change.rateLimit?.windowSeconds ?? null);
  }
  if (change.maxConcurrentTasks !== undefined) set("max_concurrent_tasks", change.maxConcurrentTasks);
  if (change.models !== undefined) set("models", change.models === null ? null : JSON.stringify(change.models));
  if (change.expiresAt !== undefined) set("expires_at", change.expiresAt);
  for (const period of BUDGET_PERIODS)
    if (change.budget?.[period] !== undefined) set(BUDGET_COLUMNS[period], change.budget[period]);
  return sets;
}

export function keyView(row: any): KeyView {
  const rules = keyRules(row);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    rate_limit: row.rate_requests ? { requests: row.rate_requests, window_seconds: row.rate_window_seconds } : null,
    max_concurrent_tasks: row.max_concurrent_tasks,
    models: rules.models,
    expires_at: iso(rules.expiresAt),
    budget: Object.fromEntries(
      Object.entries(rules.budget).map(([period, micros]) => [period, microsToCredits(micros)]),
    ),
    created_at: iso(row.created_at)!,
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
  };
}
