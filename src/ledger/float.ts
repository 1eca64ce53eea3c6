// The LLM path's float: per process and wallet, one durable pending hold (kind "float") that calls reserve from in
// memory, so an LLM call needs no database round trip before it goes upstream.
//
// Why it keeps the ledger's guarantees:
//   - no overspend: the float is a hold like any other, taken with the same guarded `held += x where available >= x`,
//     so another process (or a media task) can never spend what it covers; in memory the reservations of this
//     process never exceed its size (one thread: reserve is synchronous);
//   - exactly once: a call's settle or release happens once in memory (a flag) and writes the call's line: its usage
//     record (llm/records.ts), whose primary key is the call's request id, with what it reserved (`held`) and was
//     charged (`cost`);
//   - the books: the float's `amount` is what it still covers. A batch's settles take min(charge, reserved) off the
//     float and off `held`, and the charges off `balance`, in one transaction, with ONE entry per wallet (kind
//     `usage`) for the batch's charges, which the calls' lines name (entry_id) and sum to. So held = Σ pending holds,
//     balance = Σ entries, and each usage entry = −Σ its lines, at every commit (Ledger.check). One entry per batch
//     instead of a hold row and an entry per call: those two rows were ~15% of a json call's CPU (bench A/B);
//   - a crash: the float stays pending until its expiry (refreshed while it is in use) and the sweeper returns it,
//     like any hold a crash left; calls in flight at the crash are not charged.
// What changes for a customer: `held` shows the float (the calls in flight plus spare room) while this process
// serves the wallet and for LEDGER_FLOAT_IDLE_MS after, then it goes back to the wallet. Growth adds spare room of at
// most a quarter of what is available beyond the calls that asked for it; spare room the calls no longer use beyond
// that share goes back (llm/ledger-batch.ts `trims`). Another process (or a media task's hold) short of credits asks
// for the spare room back (float-asks.ts), so what the wallet can cover is not refused because of it.

import { sql } from "drizzle-orm";
import type { AppContext } from "../context";
import type { TxQueries } from "../db/client";
import { ApiError } from "../http/errors";
import { newId } from "../db/ids";
import { ANSWER_ASK, PEERS_ASKED } from "./float-asks";
import { HOLD_WALLET, INSERT_ENTRY, insertHold, POST_WALLET, WALLET_OF, type Hold, type Ledger } from "./service";

// The wallet's statements are the ledger's own (service.ts): guarded `held += x`, and `balance -= charged, held -= x`.
const p = sql.placeholder;
const GROW_FLOAT = sql`update holds set amount = amount + ${p("amount")}, expires_at = ${p("expires")}
  where id = ${p("id")} and status = ${"pending"}`;
const CONSUME_FLOAT = sql`update holds set amount = amount - ${p("amount")}, expires_at = ${p("expires")}
  where id = ${p("id")} and status = ${"pending"}`;
const REFRESH_FLOAT = sql`update holds set expires_at = ${p("expires")} where id = ${p("id")} and status = ${"pending"}`;
const HOLD_AMOUNT = sql`select amount from holds where id = ${p("id")}`;
// Takes an unseen float's id before voiding it. A commit reported failed may still be becoming visible (Postgres: its
// COMMIT under way when the connection dropped): the unique index makes this insert wait for it, and the void after
// it then finds its hold. One that never happened can no longer make the hold later.
const TAKE_HOLD_ID = sql`insert into holds (id, account_id, amount, status, kind, ref, created_at, expires_at, finalized_at)
  values (${p("id")}, ${p("account")}, ${0}, ${"voided"}, ${"float"}, ${null}, ${p("now")}, ${p("now")}, ${p("now")})
  on conflict (id) do nothing`;

/** One wallet's float in this process. `size` never exceeds the durable hold's amount (it shrinks first). */
export class Float {
  reserved = 0;
  /** its calls' finishes not yet written (queued, in a commit, or refused and retried): it is not released before */
  unwritten = 0;
  /** the last reservation's amount: one call's worth, the least spare room a trim leaves */
  lastAmount = 0;
  /** what the wallet had available beside the floats when last read (a commit reads it while trimming is in question) */
  walletAvailable: number | null = null;
  /** set when it stops taking reservations: released idle, or found swept */
  closed = false;
  /** set once its release is committed (its credits are back in the wallet) */
  released = false;
  /** its hold may hold more than `size` (a commit that grew or trimmed it was reported failed): set back at a commit */
  unsure = false;
  /** a hold a commit reported failed may have made (Float.unseen): its id is taken before it is voided */
  unseen = false;
  /** another process asked for its spare room (float-asks.ts): answered at the next commit */
  asked = false;
  constructor(
    readonly accountId: string,
    readonly holdId: string,
    public size: number,
    public lastActive: number,
    public refreshedAt: number,
  ) {}
  get free(): number {
    return this.size - this.reserved;
  }
  /** A float hold a commit reported failed may have made: never lent from; releasing it voids it if it exists. */
  static unseen(accountId: string, holdId: string): Float {
    const f = new Float(accountId, holdId, 0, 0, 0);
    f.closed = true;
    f.unseen = true;
    return f;
  }
  /** What zero-amount reservations hang on: no durable hold, never reserved from. */
  static none(accountId: string): Float {
    const f = new Float(accountId, "", 0, 0, 0);
    f.closed = true;
    return f;
  }
}

/** A call's reservation carved from a float: id (the call's request id, which keys its usage record), account, amount. */
export interface Reservation extends Hold {
  float: Float;
  finished: boolean;
}

export interface FloatFinish {
  res: Reservation;
  /** µcr to charge; null releases (nothing charged) */
  charge: number | null;
}

/**
 * Waiters of one wallet that the float could not cover: grow it by `need` (plus headroom when there is room). A
 * top-up of a float running low has no waiters: `need` 0, `amounts` empty, only headroom.
 */
export interface FloatGrow {
  accountId: string;
  float: Float | null;
  need: number;
  /** what the float has free beyond the calls already on it */
  free: number;
  headroom: number;
  /** the waiters' amounts, in order (used one by one when `need` does not fit) */
  amounts: number[];
  /**
   * The id a new float hold takes, should this growth create one: chosen before the commit, so that when a commit
   * is reported failed although it went through, the hold it made can still be found and given back.
   */
  newHoldId: string;
  /** its waiters asked other processes for their spare room: the commit first counts the floats yet to answer */
  asked?: boolean;
}

export interface GrowOutcome {
  accountId: string;
  granted: number;
  /** the new durable hold when a float was created (none existed, or the old one was gone) */
  newHoldId: string | null;
  /** per waiter, whether it was funded; null when the whole need was */
  funded: boolean[] | null;
  /** the wallet's available after the batch, for the 402 of waiters left unfunded */
  available: number;
  /** when its waiters had asked: the other floats on the wallet still to answer, counted before the growth */
  peersToAnswer: number | null;
}

/** Spare room a float gives back to its wallet (llm/ledger-batch.ts says when). */
export interface FloatTrim {
  float: Float;
  amount: number;
}

export interface FloatBatch {
  finishes: FloatFinish[];
  releases: Float[];
  refreshes: Float[];
  grows: FloatGrow[];
  trims: FloatTrim[];
  /** floats whose hold is set back to `amount`, their size once this batch's finishes are taken off */
  resyncs: FloatTrim[];
  /** accounts whose wallet's available amount the batch reads back (for the next trim) */
  observe: Set<string>;
  /** floats answering another process's ask: their spare room is trimmed in this batch, and the ask cleared */
  answers: Float[];
}

/** Headroom is capped at this share of what the wallet has beyond the calls asking. */
export const HEADROOM_SHARE = 4;

/**
 * The float's database work for one batch, in the caller's transaction. Wallets are visited in sorted order (on
 * Postgres, two processes' batches then lock them in the same order and cannot deadlock); per wallet: the calls
 * that finished (one `usage` entry for their charges, one update of each float and of the wallet), floats going
 * back, expiry refreshes, then growth for calls waiting on it. Returns the growth outcomes and, per wallet charged,
 * the id of its usage entry, which the calls' lines (usage records, written by the caller) name.
 */
export function* floatBatchIn(q: TxQueries, ledger: Ledger, b: FloatBatch, ttlMs: number) {
  const now = Date.now();
  const expires = now + ttlMs;
  type Mine = { finishes: FloatFinish[]; releases: Float[]; refreshes: Float[]; trims: FloatTrim[]; resyncs: FloatTrim[]; answers: Float[]; grow?: FloatGrow };
  const byAccount = new Map<string, Mine>();
  const of = (account: string) => byAccount.get(account) ?? byAccount.set(account, { finishes: [], releases: [], refreshes: [], trims: [], resyncs: [], answers: [] }).get(account)!;
  for (const f of b.finishes) of(f.res.accountId).finishes.push(f);
  for (const f of b.releases) of(f.accountId).releases.push(f);
  for (const f of b.refreshes) of(f.accountId).refreshes.push(f);
  for (const g of b.grows) of(g.accountId).grow = g;
  for (const t of b.trims) of(t.float.accountId).trims.push(t);
  for (const r of b.resyncs) of(r.float.accountId).resyncs.push(r);
  for (const f of b.answers) of(f.accountId).answers.push(f);
  const outcomes: GrowOutcome[] = [];
  const entries = new Map<string, string>();

  for (const account of [...byAccount.keys()].sort()) {
    const mine = byAccount.get(account)!;
    let charged = 0;
    let calls = 0;
    let unheld = 0;
    const consumed = new Map<Float, number>();
    for (const { res, charge } of mine.finishes) {
      if (!charge) continue;
      charged += charge;
      calls++;
      consumed.set(res.float, (consumed.get(res.float) ?? 0) + Math.min(charge, res.amount));
    }
    // A trim leaves the float and `held` as a charge's share does, and charges nothing.
    for (const t of mine.trims) consumed.set(t.float, (consumed.get(t.float) ?? 0) + t.amount);
    if (charged) {
      const id = newId("ent");
      entries.set(account, id);
      yield* q.run(INSERT_ENTRY, { id, account, hold: null, kind: "usage", amount: -charged, reason: `llm usage: ${calls} call${calls === 1 ? "" : "s"}`, now });
    }
    for (const [float, amount] of consumed) {
      if (!float.holdId) continue; // Float.none: nothing was reserved
      // A float swept under us (only after its expiry) already gave its amount back: the charge is then taken from
      // the balance alone.
      if (yield* q.run(CONSUME_FLOAT, { amount, expires, id: float.holdId })) unheld += amount;
      else float.closed = true;
    }
    for (const float of mine.answers) yield* q.run(ANSWER_ASK, { id: float.holdId });
    // A hold set back to its float's size: the hold row first (locked by the refresh), then the wallet, as above.
    for (const { float, amount } of mine.resyncs) {
      if (float.closed || !(yield* q.run(REFRESH_FLOAT, { expires, id: float.holdId }))) {
        float.closed = true;
        continue;
      }
      const excess = Number((yield* q.get<{ amount: number }>(HOLD_AMOUNT, { id: float.holdId }))!.amount) - amount;
      if (excess > 0 && (yield* q.run(CONSUME_FLOAT, { amount: excess, expires, id: float.holdId }))) unheld += excess;
    }
    if (charged || unheld) yield* q.run(POST_WALLET, { actual: charged, amount: unheld, now, account });

    for (const float of mine.releases) {
      if (float.unseen) yield* q.run(TAKE_HOLD_ID, { id: float.holdId, account, now });
      yield* ledger.voidIn(q, float.holdId);
    }
    for (const float of mine.refreshes) if (!(yield* q.run(REFRESH_FLOAT, { expires, id: float.holdId }))) float.closed = true;
    if (mine.grow) outcomes.push(yield* grow(q, mine.grow, now, ttlMs));
  }
  const available = new Map<string, number>();
  for (const account of b.observe) {
    const w = yield* q.get<{ balance: number; held: number }>(WALLET_OF, { account });
    if (w) available.set(account, Number(w.balance) - Number(w.held));
  }
  return { outcomes, entries, available };
}

function* grow(q: TxQueries, g: FloatGrow, now: number, ttlMs: number) {
  const account = g.accountId;
  const expires = now + ttlMs;
  const availableNow = function* () {
    const w = yield* q.get<{ balance: number; held: number }>(WALLET_OF, { account });
    return w ? Number(w.balance) - Number(w.held) : 0;
  };
  // Before the wallet is read: a float that has answered committed its trim with its answer, so the read sees it.
  const own = g.float && !g.float.closed ? g.float.holdId : "";
  const peersToAnswer = g.asked ? Number((yield* q.get<{ n: number }>(PEERS_ASKED, { account, own }))!.n) : null;
  let available = yield* availableNow();
  let granted = 0;
  let funded: boolean[] | null = null;
  if (available >= g.need) {
    const extra = Math.min(g.headroom, Math.floor((available - g.need) / HEADROOM_SHARE));
    for (const amount of extra > 0 ? [g.need + extra, g.need] : [g.need]) {
      if (amount === 0) break; // a top-up with no room for it: nothing to hold
      if (yield* q.run(HOLD_WALLET, { amount, now, account })) {
        granted = amount;
        break;
      }
    }
  }
  if (!granted && g.amounts.length) {
    // Not all of them fit: each waiter on its own, in order, so only those that do not fit are refused. What the
    // float has free goes first, so a call is refused only when the float and the wallet together fall short.
    funded = [];
    let free = g.free;
    for (const amount of g.amounts) {
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
    const live = g.float && !g.float.closed;
    if (!live || !(yield* q.run(GROW_FLOAT, { amount: granted, expires, id: g.float!.holdId }))) {
      newHoldId = (yield* insertHold(q, account, granted, "float", null, now, ttlMs, g.newHoldId)).id;
    }
  }
  if (funded) available = yield* availableNow();
  return { accountId: account, granted, newHoldId, funded, available, peersToAnswer } satisfies GrowOutcome;
}

/**
 * `op` (a media task's hold, an admin correction), once more when it was refused with `refusal` and this process's
 * idle LLM float for the account went back or other processes' floats were asked for their spare room: the wallet
 * may look short only because floats hold credits ahead for calls not yet made (what backs calls in flight stays).
 */
export async function withIdleFloatBack<T>(ctx: Pick<AppContext, "llmLedger">, accountId: string, refusal: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (!(e instanceof ApiError && e.code === refusal && (await ctx.llmLedger?.returnIdle(accountId)))) throw e;
    return op();
  }
}
