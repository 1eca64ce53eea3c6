// The floats' database work of one commit, in the caller's transaction. It changes nothing in memory: what it found
// (floats gone from the database, growth granted, wallets read) is returned, and the caller applies it to the floats
// only once the transaction has committed.

import { sql } from "drizzle-orm";
import type { TxQueries } from "../db/client";
import { newId } from "../db/ids";
import { ANSWER_ASK, ASK_WAIT_MS, PEERS_ASKED } from "./float-asks";
import {
  HEADROOM_SHARE,
  type Float,
  type FloatBatch,
  type FloatGrow,
  type FloatTrim,
  type GrowOutcome,
  type ReservationEnd,
} from "./float";
import { HOLD_WALLET, INSERT_ENTRY, insertHold, POST_WALLET, WALLET_OF, type Ledger } from "./service";

// The wallet's statements are the ledger's own (service.ts): guarded `held += x`, and `balance -= charged, held -= x`.
const param = sql.placeholder;
const GROW_FLOAT = sql`update holds set amount = amount + ${param("amount")}, expires_at = ${param("expires")}
  where id = ${param("id")} and status = ${"pending"}`;
const CONSUME_FLOAT = sql`update holds set amount = amount - ${param("amount")}, expires_at = ${param("expires")}
  where id = ${param("id")} and status = ${"pending"}`;
const REFRESH_FLOAT = sql`update holds set expires_at = ${param("expires")} where id = ${param("id")} and status = ${"pending"}`;
const HOLD_AMOUNT = sql`select amount from holds where id = ${param("id")}`;
// Takes an unconfirmed float's id before voiding it. A commit reported failed may still be becoming visible
// (Postgres: its COMMIT under way when the connection dropped): the unique index makes this insert wait for it, and
// the void after it then finds its hold. One that never happened can no longer make the hold later.
const TAKE_HOLD_ID = sql`insert into holds (id, account_id, amount, status, kind, ref, created_at, expires_at, finalized_at)
  values (${param("id")}, ${param("account")}, ${0}, ${"voided"}, ${"float"}, ${null}, ${param("now")}, ${param("now")}, ${param("now")})
  on conflict (id) do nothing`;

/** What a committed batch tells the floats. */
export interface FloatBatchResult {
  outcomes: GrowOutcome[];
  /** per wallet charged, the id of its usage entry, which the calls' lines name */
  entries: Map<string, string>;
  /** per wallet read (FloatBatch.walletReads), what it had available */
  available: Map<string, number>;
  /** floats whose hold was no longer pending (swept after its expiry): closed once the batch is committed */
  gone: Set<Float>;
}

type WalletWork = {
  ends: ReservationEnd[];
  voids: Float[];
  refreshes: Float[];
  trims: FloatTrim[];
  holdResets: FloatTrim[];
  answers: Float[];
  grow?: FloatGrow;
};

/** The batch's work grouped by wallet, wallets in sorted order. */
function byWallet(batch: FloatBatch): Array<[string, WalletWork]> {
  const work = new Map<string, WalletWork>();
  const of = (account: string) => {
    let mine = work.get(account);
    if (!mine)
      work.set(account, (mine = { ends: [], voids: [], refreshes: [], trims: [], holdResets: [], answers: [] }));
    return mine;
  };
  for (const end of batch.ends) of(end.hold.accountId).ends.push(end);
  for (const float of batch.voids) of(float.accountId).voids.push(float);
  for (const float of batch.refreshes) of(float.accountId).refreshes.push(float);
  for (const grow of batch.grows) of(grow.accountId).grow = grow;
  for (const trim of batch.trims) of(trim.float.accountId).trims.push(trim);
  for (const reset of batch.holdResets) of(reset.float.accountId).holdResets.push(reset);
  for (const float of batch.answers) of(float.accountId).answers.push(float);
  return [...work].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Wallets are visited in sorted order (on Postgres, two processes' batches then lock them in the same order and
 * cannot deadlock); per wallet: the calls that ended (postChargesIn), floats going back, expiry refreshes, then
 * growth for calls waiting on it.
 */
export function* writeFloatBatchIn(
  q: TxQueries,
  ledger: Pick<Ledger, "voidIn">,
  batch: FloatBatch,
  now: number,
  ttlMs: number,
) {
  const expires = now + ttlMs;
  const result: FloatBatchResult = { outcomes: [], entries: new Map(), available: new Map(), gone: new Set() };
  const { gone } = result;
  const live = (float: Float) => !float.closed && !gone.has(float);

  for (const [account, mine] of byWallet(batch)) {
    yield* postChargesIn(q, account, mine, result, live, now, expires);
    for (const float of mine.voids) {
      if (float.unconfirmed) yield* q.run(TAKE_HOLD_ID, { id: float.holdId, account, now });
      yield* ledger.voidIn(q, float.holdId);
    }
    for (const float of mine.refreshes)
      if (!(yield* q.run(REFRESH_FLOAT, { expires, id: float.holdId }))) gone.add(float);
    if (mine.grow) result.outcomes.push(yield* growIn(q, mine.grow, live, now, ttlMs));
  }
  for (const account of batch.walletReads) {
    const wallet = yield* q.get<{ balance: number; held: number }>(WALLET_OF, { account });
    if (wallet) result.available.set(account, Number(wallet.balance) - Number(wallet.held));
  }
  return result;
}

/**
 * One wallet's calls that ended: one `usage` entry for their charges, one update of each float, the floats' answers
 * to asks and hold resets, then one update of the wallet for all of it.
 */
function* postChargesIn(
  q: TxQueries,
  account: string,
  mine: WalletWork,
  result: FloatBatchResult,
  live: (float: Float) => boolean,
  now: number,
  expires: number,
) {
  const { gone } = result;
  let charged = 0;
  let calls = 0;
  let unheld = 0;
  const consumed = new Map<Float, number>();
  for (const { hold, charge } of mine.ends) {
    if (!charge) continue;
    charged += charge;
    calls++;
    consumed.set(hold.float, (consumed.get(hold.float) ?? 0) + Math.min(charge, hold.amount));
  }
  // A trim leaves the float and `held` as a charge's share does, and charges nothing.
  for (const trim of mine.trims) consumed.set(trim.float, (consumed.get(trim.float) ?? 0) + trim.amount);
  if (charged) {
    const id = newId("ent");
    result.entries.set(account, id);
    yield* q.run(INSERT_ENTRY, {
      id,
      account,
      hold: null,
      kind: "usage",
      amount: -charged,
      reason: `llm usage: ${calls} call${calls === 1 ? "" : "s"}`,
      now,
    });
  }
  for (const [float, amount] of consumed) {
    if (!float.holdId) continue; // Float.none: nothing was reserved
    // A float swept under us (only after its expiry) already gave its amount back: the charge is then taken from
    // the balance alone.
    if (yield* q.run(CONSUME_FLOAT, { amount, expires, id: float.holdId })) unheld += amount;
    else gone.add(float);
  }
  for (const float of mine.answers) yield* q.run(ANSWER_ASK, { id: float.holdId });
  // A hold set back to its float's size: the hold row first (locked by the refresh), then the wallet, as above.
  for (const { float, amount } of mine.holdResets) {
    if (!live(float) || !(yield* q.run(REFRESH_FLOAT, { expires, id: float.holdId }))) {
      gone.add(float);
      continue;
    }
    const excess = Number((yield* q.get<{ amount: number }>(HOLD_AMOUNT, { id: float.holdId }))!.amount) - amount;
    if (excess > 0 && (yield* q.run(CONSUME_FLOAT, { amount: excess, expires, id: float.holdId }))) unheld += excess;
  }
  if (charged || unheld) yield* q.run(POST_WALLET, { actual: charged, amount: unheld, now, account });
}

/** Grows a wallet's float for its waiters (or tops it up), within what the wallet has; a new hold when it has none. */
function* growIn(q: TxQueries, grow: FloatGrow, live: (float: Float) => boolean, now: number, ttlMs: number) {
  const account = grow.accountId;
  const availableNow = function* () {
    const wallet = yield* q.get<{ balance: number; held: number }>(WALLET_OF, { account });
    return wallet ? Number(wallet.balance) - Number(wallet.held) : 0;
  };
  const float = grow.float && live(grow.float) ? grow.float : null;
  // Before the wallet is read: a float that has answered committed its trim with its answer, so the read sees it.
  const asked = { account, own: float?.holdId ?? "", since: now - ASK_WAIT_MS };
  const peersToAnswer = grow.asked ? Number((yield* q.get<{ n: number }>(PEERS_ASKED, asked))!.n) : null;
  let available = yield* availableNow();
  let granted = 0;
  let funded: boolean[] | null = null;
  if (available >= grow.need) {
    const extra = Math.min(grow.headroom, Math.floor((available - grow.need) / HEADROOM_SHARE));
    for (const amount of extra > 0 ? [grow.need + extra, grow.need] : [grow.need]) {
      if (amount === 0) break; // a top-up with no room for it: nothing to hold
      if (yield* q.run(HOLD_WALLET, { amount, now, account })) {
        granted = amount;
        break;
      }
    }
  }
  if (!granted && grow.amounts.length) {
    // Not all of them fit: each waiter on its own, in order, so only those that do not fit are refused. What the
    // float has free goes first, so a call is refused only when the float and the wallet together fall short.
    funded = [];
    let free = grow.free;
    for (const amount of grow.amounts) {
      const more = Math.max(0, amount - free);
      const ok = more === 0 || (yield* q.run(HOLD_WALLET, { amount: more, now, account })) > 0;
      funded.push(ok);
      if (!ok) continue;
      granted += more;
      free = Math.max(0, free - amount);
    }
  }
  let newHoldId: string | null = null;
  if (granted) {
    // Checked again: on Postgres the float may have been closed while this transaction awaited its statements.
    const grownInPlace =
      float !== null &&
      live(float) &&
      (yield* q.run(GROW_FLOAT, { amount: granted, expires: now + ttlMs, id: float.holdId })) > 0;
    if (!grownInPlace)
      newHoldId = (yield* insertHold(q, account, granted, "float", null, now, ttlMs, grow.newHoldId)).id;
  }
  if (funded) available = yield* availableNow();
  return { accountId: account, granted, newHoldId, funded, available, peersToAnswer } satisfies GrowOutcome;
}
