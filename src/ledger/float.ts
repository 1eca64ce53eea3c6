// The LLM path's float: per process and wallet, one durable pending hold (kind "float") that calls take reservations
// from in memory, so an LLM call needs no database round trip before it goes upstream. How it keeps the ledger's
// guarantees (no overspend, exactly-once post, the books balance) is in docs/architecture.md, "The ledger".
// The Float's state changes only through its methods; the group commit (llm-ledger.ts) calls the ones that follow a
// database write only once that write is committed.

import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import type { Hold } from "./service";

/** One wallet's float in this process. `size` never exceeds the durable hold's amount (it shrinks first). */
export class Float {
  #size: number;
  #reserved = 0;
  #unwritten = 0;
  #lastReservation = 0;
  #walletAvailable: number | null = null;
  #closed = false;
  #voided = false;
  #holdMayExceedSize = false;
  #unconfirmed = false;
  #asked = false;
  #lastActive: number;
  #refreshedAt: number;

  constructor(
    readonly accountId: string,
    readonly holdId: string,
    size: number,
    now: number,
  ) {
    this.#size = size;
    this.#lastActive = now;
    this.#refreshedAt = now;
  }

  /** A float hold a commit reported failed may have made: never lent from; voiding it takes its id first. */
  static unconfirmed(accountId: string, holdId: string): Float {
    const float = new Float(accountId, holdId, 0, 0);
    float.#closed = true;
    float.#unconfirmed = true;
    return float;
  }

  /** What zero-amount reservations hang on: no durable hold, never reserved from. */
  static none(accountId: string): Float {
    const float = new Float(accountId, "", 0, 0);
    float.#closed = true;
    return float;
  }

  /** What its hold covers, as far as this process knows once its queued writes are committed. */
  get size(): number {
    return this.#size;
  }
  /** What its calls in flight have reserved. */
  get reserved(): number {
    return this.#reserved;
  }
  get free(): number {
    return this.#size - this.#reserved;
  }
  /** Its calls' ends not yet written (queued, in a commit, or refused and retried): it is not voided before. */
  get unwritten(): number {
    return this.#unwritten;
  }
  /** The last reservation's amount: one call's worth, the least spare room a trim leaves. */
  get lastReservation(): number {
    return this.#lastReservation;
  }
  /** What the wallet had available beside the floats when a commit last read it (null: not read yet). */
  get walletAvailable(): number | null {
    return this.#walletAvailable;
  }
  /** It takes no more reservations: going back to the wallet, or found gone from the database. */
  get closed(): boolean {
    return this.#closed;
  }
  /** Its void is committed: its credits are back in the wallet. */
  get voided(): boolean {
    return this.#voided;
  }
  /** A commit reported failed may have grown its hold, or not made a trim: set back to its size at a later commit. */
  get holdMayExceedSize(): boolean {
    return this.#holdMayExceedSize;
  }
  /** Its hold may or may not exist (Float.unconfirmed). */
  get unconfirmed(): boolean {
    return this.#unconfirmed;
  }
  /** Another process asked for its spare room (float-asks.ts): answered at the next commit. */
  get asked(): boolean {
    return this.#asked;
  }

  /** A call's reservation, when the float has room for it (the caller checks `free`). */
  reserve(amount: number, ref: string, now: number): Reservation {
    this.#reserved += amount;
    this.#lastReservation = amount;
    this.#lastActive = now;
    // No id of its own: the call's line in the ledger is its usage record, keyed by the request id (`ref`).
    return { id: ref, accountId: this.accountId, amount, float: this, ended: false };
  }

  /**
   * A call ends: its reservation leaves the float, and what it is charged (up to what it reserved) leaves the size,
   * ahead of the commit that takes it off the hold, so it is never lent again. False when it had ended already.
   */
  end(reservation: Reservation, charge: number | null, now: number): boolean {
    if (reservation.ended) return false;
    reservation.ended = true;
    this.#reserved -= reservation.amount;
    if (charge) this.#size -= Math.min(charge, reservation.amount);
    this.#lastActive = now;
    this.#unwritten++;
    return true;
  }

  /** A call's end is in the ledger (or given up): it no longer keeps the float from going back. */
  written(): void {
    this.#unwritten--;
  }

  /** Spare room going back to the wallet: shrunk before its commit, so no call borrows what the hold gives back. */
  shrink(amount: number): FloatTrim {
    this.#size -= amount;
    return { float: this, amount };
  }

  /** A committed growth of its hold. */
  grown(amount: number, now: number): void {
    this.#size += amount;
    this.#refreshedAt = now;
  }

  close(): void {
    this.#closed = true;
  }

  markVoided(): void {
    this.#voided = true;
  }

  /** Idle long enough to go back: no call in flight, every end written, none for `idleMs`. */
  isIdle(now: number, idleMs: number): boolean {
    return this.isUnused() && now - this.#lastActive >= idleMs;
  }

  /** No call in flight and every end written: its hold covers nothing but spare room. */
  isUnused(): boolean {
    return this.#reserved === 0 && this.#unwritten === 0;
  }

  /** Its expiry should move ahead of the sweeper (a third of the hold's lifetime since the last refresh). */
  refreshDue(now: number, ttlMs: number): boolean {
    return now - this.#refreshedAt >= ttlMs / 3;
  }

  refreshing(now: number): void {
    this.#refreshedAt = now;
  }

  /** A refresh that was not committed: asked for again at the next look. */
  refreshFailed(): void {
    this.#refreshedAt = 0;
  }

  holdMayBeLarger(): void {
    this.#holdMayExceedSize = true;
  }

  holdReset(): void {
    this.#holdMayExceedSize = false;
  }

  /** Marks it asked; false when it already was (or it is closed). */
  markAsked(): boolean {
    if (this.#closed || this.#asked) return false;
    this.#asked = true;
    return true;
  }

  /** The ask was answered, or is to be found again by a later look. */
  clearAsked(): void {
    this.#asked = false;
  }

  observeWallet(available: number): void {
    this.#walletAvailable = available;
  }
}

/** A call's reservation taken from a float: id (the call's request id, which keys its usage record), account, amount. */
export interface Reservation extends Hold {
  float: Float;
  /** set once by Float.end: a second end does nothing */
  ended: boolean;
}

/** A call's end as the float sees it: its reservation and what to post (null voids it: nothing charged). */
export interface ReservationEnd {
  hold: Reservation;
  charge: number | null;
}

/** A call's end as the group commit sees it: with its line (the call's usage record, written beside the post). */
export interface CallEnd extends ReservationEnd {
  record: { requestId: string; accountId: string };
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

/** Spare room a float gives back to its wallet (float-plans.ts says when). */
export interface FloatTrim {
  float: Float;
  amount: number;
}

/** The floats' database work of one commit (float-writes.ts writes it). */
export interface FloatBatch {
  ends: ReservationEnd[];
  voids: Float[];
  refreshes: Float[];
  grows: FloatGrow[];
  trims: FloatTrim[];
  /** floats whose hold is set back to `amount`, their size once this batch's ends are taken off */
  holdResets: FloatTrim[];
  /** accounts whose wallet's available amount the batch reads back (for the next trim) */
  walletReads: Set<string>;
  /** floats answering another process's ask: their spare room is trimmed in this batch, and the ask cleared */
  answers: Float[];
}

export const emptyFloatBatch = (): FloatBatch => ({
  ends: [],
  voids: [],
  refreshes: [],
  grows: [],
  trims: [],
  holdResets: [],
  walletReads: new Set(),
  answers: [],
});

/** Headroom is capped at this share of what the wallet has beyond the calls asking. */
export const HEADROOM_SHARE = 4;

/**
 * `op` (a media task's hold, an admin correction), once more when it was refused with `refusal` and this process's
 * idle LLM float for the account went back or other processes' floats were asked for their spare room: the wallet
 * may look short only because floats hold credits ahead for calls not yet made (what backs calls in flight stays).
 */
export async function withIdleFloatBack<T>(
  ctx: Pick<AppContext, "llmLedger">,
  accountId: string,
  refusal: string,
  op: () => Promise<T>,
): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (!(e instanceof ApiError && e.code === refusal && (await ctx.llmLedger.returnIdle(accountId)))) throw e;
    return op();
  }
}
