import { sql } from "drizzle-orm";
import type { Db, TxQueries } from "../db/client";
import { newId } from "../db/ids";
import { ApiError } from "../http/errors";
import { MAX_BUDGET_CREDITS, microsToCredits } from "./units";

// The credit ledger as two-phase transfers (TigerBeetle's vocabulary): a hold is a pending transfer, posted for the
// actual amount (an overrun above the hold is recorded) or voided (returned in full); a credit is a plain entry.
// Every change of `balance` writes an entry, so balance = Σ entries and held = Σ pending holds. Post and void are
// guarded by `status = 'pending'`: doing either twice (or both) changes nothing the second time. Amounts are integer
// micro-credits (units.ts).

// The statements of every hold, post and void, compiled once (db/client.ts): they run for every LLM call.
const param = sql.placeholder;
export const HOLD_WALLET = sql`update wallets set held = held + ${param("amount")}, updated_at = ${param("now")}
  where account_id = ${param("account")} and balance - held >= ${param("amount")}`;
export const WALLET_OF = sql`select balance, held from wallets where account_id = ${param("account")}`;
const INSERT_HOLD = sql`insert into holds (id, account_id, amount, status, kind, ref, created_at, expires_at)
  values (${param("id")}, ${param("account")}, ${param("amount")}, ${"pending"}, ${param("kind")}, ${param("ref")}, ${param("now")}, ${param("expires")})`;
const POST_HOLD = sql`update holds set status = ${"posted"}, settled = ${param("actual")}, overrun = ${param("overrun")}, finalized_at = ${param("now")}
  where id = ${param("id")} and status = ${"pending"} returning account_id, amount`;
const VOID_HOLD = sql`update holds set status = ${"voided"}, finalized_at = ${param("now")}
  where id = ${param("id")} and status = ${"pending"} returning account_id, amount`;
const RECORD_OVERRUN = sql`update holds set overrun = ${param("overrun")} where id = ${param("id")}`;
export const POST_WALLET = sql`update wallets set balance = balance - ${param("actual")}, held = held - ${param("amount")}, updated_at = ${param("now")}
  where account_id = ${param("account")}`;
const VOID_WALLET = sql`update wallets set held = held - ${param("amount")}, updated_at = ${param("now")} where account_id = ${param("account")}`;
export const INSERT_ENTRY = sql`insert into entries (id, account_id, hold_id, kind, amount, reason, created_at)
  values (${param("id")}, ${param("account")}, ${param("hold")}, ${param("kind")}, ${param("amount")}, ${param("reason")}, ${param("now")})`;

/**
 * float: a process's reservations for a wallet's LLM calls (float.ts); task: a media task; llm: one LLM call's own
 * hold, found only in older rows, already posted (a call's line is its usage record)
 */
export type HoldKind = "llm" | "float" | "task";

/**
 * The holds a sweep may void once they expire (the server's sweeper and `cli holds:sweep`): LLM holds and floats
 * left behind by a crash. Task holds are the media engine's: it fails a task past its deadline and voids its hold
 * in the same transaction, so sweeping one could void the hold under a task that then succeeds uncharged.
 */
export const SWEPT_HOLD_KINDS: HoldKind[] = ["llm", "float"];
export interface Hold {
  id: string;
  accountId: string;
  amount: number;
}
/** What Ledger.check finds: a wallet that disagrees with its entries or pending holds, or a usage entry with its lines. */
export type LedgerMismatch =
  | { accountId: string; balance: number; entriesSum: number; held: number; pendingSum: number }
  | { accountId: string; entryId: string; entryAmount: number; linesSum: number };
export interface FinalizeResult {
  applied: boolean;
  amount: number;
  charged: number;
}
export interface Balance {
  balance: number;
  held: number;
  available: number;
}

export class Ledger {
  constructor(private db: Db) {}

  /** Opens a wallet with an optional first top-up. Runs inside the caller's transaction. */
  *openWallet(q: TxQueries, accountId: string, initial: number, reason: string) {
    const now = Date.now();
    yield* q.run(
      sql`insert into wallets (account_id, balance, held, updated_at) values (${accountId}, ${0}, ${0}, ${now})`,
    );
    if (initial > 0) yield* this.creditIn(q, accountId, initial, "topup", reason);
  }

  /** Top-up (positive) or correction (either sign). A negative correction may not take available below zero. */
  credit(accountId: string, amount: number, kind: "topup" | "correction", reason: string): Promise<Balance> {
    assertAmount(amount, kind === "correction");
    const self = this;
    return this.db.tx(function* (q) {
      const wallet = yield* q.get(sql`select account_id from wallets where account_id = ${accountId}`);
      if (!wallet) throw new ApiError(404, "account_not_found", `No account ${accountId}.`);
      yield* self.creditIn(q, accountId, amount, kind, reason);
      return yield* self.balanceIn(q, accountId);
    });
  }

  private *creditIn(q: TxQueries, accountId: string, amount: number, kind: string, reason: string) {
    const now = Date.now();
    // Taking money out may not take available below zero. Putting it in is always allowed (a wallet in debt after an
    // overrun pays it off in parts), up to 2^53 − 1 µcr: past that, amounts are no longer exact in JavaScript.
    const guard =
      amount < 0 ? sql`balance - held + ${amount} >= 0` : sql`balance + ${amount} <= ${Number.MAX_SAFE_INTEGER}`;
    const changed = yield* q.run(
      sql`update wallets set balance = balance + ${amount}, updated_at = ${now} where account_id = ${accountId} and ${guard}`,
    );
    if (!changed && amount < 0)
      throw new ApiError(
        409,
        "correction_exceeds_available",
        "A correction may not take the available balance below zero.",
      );
    if (!changed) {
      throw new ApiError(
        422,
        "balance_too_large",
        `A wallet holds at most ${MAX_BUDGET_CREDITS} credits (the largest exact amount); this top-up would pass that.`,
        { param: "credits" },
      );
    }
    yield* q.run(INSERT_ENTRY, { id: newId("ent"), account: accountId, hold: null, kind, amount, reason, now });
  }

  /** Reserve `amount`; refused with 402 insufficient_credits (stating the credits needed) when available is short. */
  hold(accountId: string, amount: number, kind: HoldKind, ref: string | null, ttlMs: number): Promise<Hold> {
    const self = this;
    return this.db.tx(function* (q) {
      return yield* self.holdIn(q, accountId, amount, kind, ref, ttlMs);
    });
  }

  /** The hold step for callers that record something else in the same transaction (a media task). */
  *holdIn(q: TxQueries, accountId: string, amount: number, kind: HoldKind, ref: string | null, ttlMs: number) {
    assertAmount(amount, false, true);
    const now = Date.now();
    const changed = yield* q.run(HOLD_WALLET, { amount, now, account: accountId });
    if (!changed) {
      const wallet = yield* q.get<{ balance: number; held: number }>(WALLET_OF, { account: accountId });
      const available = wallet ? wallet.balance - wallet.held : 0;
      throw insufficient(amount, available);
    }
    return yield* insertHold(q, accountId, amount, kind, ref, now, ttlMs);
  }

  /** Post a hold for `actual` (exactly once). Above the hold the actual amount is charged and the overrun recorded. */
  post(holdId: string, actual: number, reason = "usage"): Promise<FinalizeResult> {
    const self = this;
    return this.db.tx(function* (q) {
      return yield* self.postIn(q, holdId, actual, reason);
    });
  }

  *postIn(q: TxQueries, holdId: string, actual: number, reason = "usage") {
    assertAmount(actual, false, true);
    const now = Date.now();
    const hold = yield* q.get<{ account_id: string; amount: number }>(POST_HOLD, {
      actual,
      overrun: 0,
      now,
      id: holdId,
    });
    if (!hold) return { applied: false, amount: 0, charged: 0 } satisfies FinalizeResult;
    if (actual > hold.amount) yield* q.run(RECORD_OVERRUN, { overrun: actual - hold.amount, id: holdId });
    yield* q.run(POST_WALLET, { actual, amount: hold.amount, now, account: hold.account_id });
    if (actual > 0) {
      yield* q.run(INSERT_ENTRY, {
        id: newId("ent"),
        account: hold.account_id,
        hold: holdId,
        kind: "charge",
        amount: -actual,
        reason,
        now,
      });
    }
    return { applied: true, amount: hold.amount, charged: actual } satisfies FinalizeResult;
  }

  /** Void a hold: the reservation goes back in full. A no-op when already posted or voided. */
  void(holdId: string): Promise<FinalizeResult> {
    const self = this;
    return this.db.tx(function* (q) {
      return yield* self.voidIn(q, holdId);
    });
  }

  *voidIn(q: TxQueries, holdId: string) {
    const now = Date.now();
    const hold = yield* q.get<{ account_id: string; amount: number }>(VOID_HOLD, { now, id: holdId });
    if (!hold) return { applied: false, amount: 0, charged: 0 } satisfies FinalizeResult;
    yield* q.run(VOID_WALLET, { amount: hold.amount, now, account: hold.account_id });
    return { applied: true, amount: hold.amount, charged: 0 } satisfies FinalizeResult;
  }

  async balance(accountId: string): Promise<Balance | undefined> {
    const wallet = await this.db.get<{ balance: number; held: number }>(
      sql`select balance, held from wallets where account_id = ${accountId}`,
    );
    return wallet && { balance: wallet.balance, held: wallet.held, available: wallet.balance - wallet.held };
  }

  private *balanceIn(q: TxQueries, accountId: string) {
    const wallet = (yield* q.get<{ balance: number; held: number }>(
      sql`select balance, held from wallets where account_id = ${accountId}`,
    ))!;
    return { balance: wallet.balance, held: wallet.held, available: wallet.balance - wallet.held } satisfies Balance;
  }

  /** Voids every pending hold past its expiry (left behind by a crash), of the given kinds or all. Returns how many. */
  async sweepExpired(now = Date.now(), kinds?: HoldKind[]): Promise<number> {
    const expired = await this.db.all<{ id: string }>(
      kinds
        ? sql`select id from holds where status = ${"pending"} and expires_at < ${now} and kind in (${sql.join(
            kinds.map((kind) => sql`${kind}`),
            sql`, `,
          )}) limit 500`
        : sql`select id from holds where status = ${"pending"} and expires_at < ${now} limit 500`,
    );
    let voided = 0;
    for (const { id } of expired) if ((await this.void(id)).applied) voided++;
    return voided;
  }

  /**
   * Recomputes every wallet from the entries and the pending holds, and every usage entry from its lines (the usage
   * records of the LLM calls it charged), and lists what disagrees. An empty list means the books balance.
   */
  async check(accountId?: string): Promise<LedgerMismatch[]> {
    const filter = accountId ? sql`where w.account_id = ${accountId}` : sql``;
    const rows = await this.db.all<any>(sql`select w.account_id, w.balance, w.held,
        coalesce((select sum(e.amount) from entries e where e.account_id = w.account_id), 0) as entries_sum,
        coalesce((select sum(h.amount) from holds h where h.account_id = w.account_id and h.status = ${"pending"}), 0) as pending_sum
      from wallets w ${filter}`);
    const wallets: LedgerMismatch[] = rows
      .map((row) => ({
        accountId: row.account_id,
        balance: Number(row.balance),
        entriesSum: Number(row.entries_sum),
        held: Number(row.held),
        pendingSum: Number(row.pending_sum),
      }))
      .filter((wallet) => wallet.balance !== wallet.entriesSum || wallet.held !== wallet.pendingSum);
    // The lines are summed per entry first, within the account when one is asked for (usage records are indexed
    // by account, not by entry_id: an index written per call for a check is what the one-row ledger saved).
    const entryFilter = accountId ? sql`and e.account_id = ${accountId}` : sql``;
    const lineFilter = accountId ? sql`and account_id = ${accountId}` : sql``;
    const unlined =
      await this.db.all<any>(sql`select e.account_id, e.id, e.amount, coalesce(l.lines_sum, 0) as lines_sum
      from entries e
      left join (select entry_id, sum(cost) as lines_sum from usage_records where entry_id is not null ${lineFilter} group by entry_id) l
        on l.entry_id = e.id
      where e.kind = ${"usage"} ${entryFilter} and coalesce(l.lines_sum, 0) <> -e.amount`);
    return [
      ...wallets,
      ...unlined.map((row) => ({
        accountId: row.account_id,
        entryId: row.id,
        entryAmount: Number(row.amount),
        linesSum: Number(row.lines_sum),
      })),
    ];
  }
}

/**
 * Inserts a pending hold (the wallet's `held` is the caller's). `id`: chosen ahead by a caller that must be able to
 * find the hold after a commit it could not confirm.
 */
export function* insertHold(
  q: TxQueries,
  accountId: string,
  amount: number,
  kind: HoldKind,
  ref: string | null,
  now: number,
  ttlMs: number,
  id = newId("hold"),
) {
  yield* q.run(INSERT_HOLD, { id, account: accountId, amount, kind, ref, now, expires: now + ttlMs });
  return { id, accountId, amount } satisfies Hold;
}

/** 402 insufficient_credits; carries the figures, so a caller that knows the request can say what to lower. */
export class InsufficientCredits extends ApiError {
  constructor(
    readonly needed: number,
    readonly available: number,
  ) {
    super(
      402,
      "insufficient_credits",
      `Insufficient credits: this request needs up to ${microsToCredits(needed)} credits and ${microsToCredits(Math.max(0, available))} are available.`,
      {
        type: "insufficient_quota",
      },
    );
  }
}

export function insufficient(needed: number, available: number): ApiError {
  return new InsufficientCredits(needed, available);
}

function assertAmount(amount: number, allowNegative: boolean, allowZero = false) {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`ledger amounts are integer micro-credits, got ${amount}`);
  if (!allowNegative && amount < 0) throw new RangeError(`ledger amount must not be negative, got ${amount}`);
  if (!allowZero && amount === 0) throw new RangeError("ledger amount must not be zero");
}
