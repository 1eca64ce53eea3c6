import { sql } from "drizzle-orm";
import type { Db, TxQueries } from "../db/client";
import { ApiError } from "../http/errors";
import { microsToCredits } from "../ledger/units";
import { periodReset, periodStart } from "./budget-periods";
import { BUDGET_PERIODS, type Budget, type BudgetPeriod } from "./policy";

// A key's budget, enforced the way the wallet is: a hold before upstream work, with the wallet's guarded update
// (`used + amount <= cap`, 0 rows: refused), so concurrent calls on any number of processes never reserve more than
// the cap; the call's end moves `used` by what it was charged minus what it reserved, exactly once (the LLM call's
// end runs once; a task's with its state change, in its transaction). A key without a budget does no database
// work here. A process that crashes between the hold and the end leaves its reservation counted as spent until the
// period resets: the budget errs on the side of never overspending.

export interface BudgetHold {
  keyId: string;
  amount: number;
  /** the periods held, each at the start of the period the hold was made in */
  periods: Array<{ period: BudgetPeriod; start: number }>;
}

const capped = (budget: Budget) => BUDGET_PERIODS.filter((p) => budget[p] !== undefined);

/** Reserves `amount` in every capped period of the key, or 402 key_budget_exceeded (nothing reserved). */
export function* holdBudgetIn(
  q: TxQueries,
  key: { keyId: string; budget: Budget },
  amount: number,
  now: number,
): Generator<any, BudgetHold | null, any> {
  const periods = capped(key.budget);
  if (!periods.length) return null;
  const held: BudgetHold = { keyId: key.keyId, amount, periods: [] };
  for (const period of periods) {
    const cap = key.budget[period]!;
    const start = periodStart(period, now);
    yield* q.run(sql`insert into key_budgets (key_id, period, period_start, used) values (${key.keyId}, ${period}, ${start}, ${0})
      on conflict (key_id, period) do nothing`);
    // The first hold of a new period starts it from nothing.
    yield* q.run(
      sql`update key_budgets set period_start = ${start}, used = ${0} where key_id = ${key.keyId} and period = ${period} and period_start < ${start}`,
    );
    const changed = yield* q.run(sql`update key_budgets set used = used + ${amount}
      where key_id = ${key.keyId} and period = ${period} and period_start = ${start} and used + ${amount} <= ${cap}`);
    if (!changed) {
      const row = yield* q.get<{ used: number }>(
        sql`select used from key_budgets where key_id = ${key.keyId} and period = ${period}`,
      );
      throw budgetExceeded(period, cap, Number(row?.used ?? 0), amount, now);
    }
    held.periods.push({ period, start });
  }
  return held;
}

/** Moves each held period's `used` by `delta` (charged − reserved; −reserved on a void), never below 0. */
export function* postBudgetIn(q: TxQueries, keyId: string, periods: BudgetHold["periods"], delta: number) {
  if (delta === 0) return;
  for (const { period, start } of periods) {
    // A period that has moved on since the hold is not touched: the new one never had this reservation.
    yield* q.run(sql`update key_budgets set used = case when used + ${delta} < 0 then 0 else used + ${delta} end
      where key_id = ${keyId} and period = ${period} and period_start = ${start}`);
  }
}

/** µcr this key has spent since `since`: its LLM calls' charges, its finished tasks' costs, its running tasks' holds. */
export async function keySpentSince(db: Db, keyId: string, since: number): Promise<number> {
  const llm = await db.get<{ n: number | null }>(
    sql`select sum(cost) as n from usage_records where key_id = ${keyId} and created_at >= ${since}`,
  );
  const media = await db.get<{
    n: number | null;
  }>(sql`select sum(case when state = ${"success"} then coalesce(cost, 0) when state = ${"fail"} then 0 else estimate end) as n
    from tasks where key_id = ${keyId} and created_at >= ${since}`);
  return Number(llm?.n ?? 0) + Number(media?.n ?? 0);
}

/**
 * A period that just got a cap starts from what the key already spent in it (a cap set at noon counts the morning's
 * calls), not from nothing. Periods already capped keep their count, which includes the holds of calls in flight.
 */
export async function startBudgets(db: Db, keyId: string, periods: BudgetPeriod[], now: number): Promise<void> {
  for (const period of periods) {
    const start = periodStart(period, now);
    const used = await keySpentSince(db, keyId, start);
    await db.run(sql`insert into key_budgets (key_id, period, period_start, used) values (${keyId}, ${period}, ${start}, ${used})
      on conflict (key_id, period) do update set period_start = ${start}, used = ${used}`);
  }
}

/** What each period of the key has used now (charged, plus held by calls and tasks in flight); 0 for a new period. */
export async function budgetUsed(db: Db, keyId: string, now: number): Promise<Partial<Record<BudgetPeriod, number>>> {
  const rows = await db.all<{ period: BudgetPeriod; period_start: number; used: number }>(
    sql`select period, period_start, used from key_budgets where key_id = ${keyId}`,
  );
  const used: Partial<Record<BudgetPeriod, number>> = {};
  for (const period of BUDGET_PERIODS) {
    const row = rows.find((candidate) => candidate.period === period);
    used[period] = row && Number(row.period_start) === periodStart(period, now) ? Number(row.used) : 0;
  }
  return used;
}

function budgetExceeded(period: BudgetPeriod, cap: number, used: number, amount: number, now: number): ApiError {
  const remaining = Math.max(0, cap - used);
  const reset = periodReset(period, now);
  const when = reset === null ? "A lifetime budget does not reset" : `It resets at ${new Date(reset).toISOString()}`;
  return new ApiError(
    402,
    "key_budget_exceeded",
    `This key's ${period} budget has ${microsToCredits(remaining)} of ${microsToCredits(cap)} credits left, and this request needs a hold of ${microsToCredits(amount)}. ${when}; nothing was charged.`,
    { type: "insufficient_quota" },
  );
}

/** The LLM path's side: a hold in its own transaction, only for a key with a budget; its end, off the answer's path. */
export class KeyBudgets {
  /** posts under way, per key: a reader of the key's counts waits for them (committedFor) */
  private pending = new Map<string, Set<Promise<void>>>();

  constructor(
    private db: Db,
    private onError: (e: unknown) => void,
    private clock: () => number = Date.now,
  ) {}

  hold(key: { keyId: string; budget: Budget }, amount: number): Promise<BudgetHold | null> | null {
    if (!capped(key.budget).length) return null; // no database work for a key without a budget
    const now = this.clock();
    return this.db.tx(function* (q) {
      return yield* holdBudgetIn(q, key, amount, now);
    });
  }

  /** The call's end: `charged` µcr (0 when voided). Runs once per hold (the caller's end runs once). */
  post(hold: BudgetHold, charged: number): void {
    const delta = charged - hold.amount;
    if (delta === 0) return;
    const set = this.pending.get(hold.keyId) ?? new Set();
    this.pending.set(hold.keyId, set);
    const posting: Promise<void> = this.db
      .tx(function* (q) {
        yield* postBudgetIn(q, hold.keyId, hold.periods, delta);
      })
      .catch(this.onError)
      .finally(() => {
        set.delete(posting);
        if (!set.size) this.pending.delete(hold.keyId);
      });
    set.add(posting);
  }

  /** Once the key's posts under way on this process are written. */
  async committedFor(keyId: string): Promise<void> {
    const set = this.pending.get(keyId);
    if (set) await Promise.all([...set]);
  }
}
