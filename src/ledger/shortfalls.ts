// A wallet short of credits, across processes (float-asks.ts): this process asks the others' floats for their spare
// room before it refuses a call, and looks for their asks on its own floats. A call is tried again until every float
// asked has answered (then what the wallet has is what it truly has) or ASK_WAIT_MS has passed, then refused with
// what the wallet and this process's float have: what other floats still hold backs calls in flight.

import type { Logger } from "../log";
import type { Float, GrowOutcome, Reservation } from "./float";
import { ASK_POLL_MS, ASK_RETRY_MS, ASK_WAIT_MS, type FloatAsks } from "./float-asks";
import type { FloatBook } from "./float-book";
import { insufficient } from "./service";

/** A call waiting for its float to grow. */
export interface Waiter {
  accountId: string;
  amount: number;
  ref: string;
  /** when it asked other processes' floats for their spare room (null: not yet) */
  asked: number | null;
  resolve(reservation: Reservation): void;
  reject(error: unknown): void;
}

export class Shortfalls {
  /** looks for other processes' asks on this process's floats */
  private readonly pollTimer: Timer;
  /** set while a look for asks is under way */
  private polling = false;

  constructor(
    private readonly asks: FloatAsks,
    private readonly book: FloatBook,
    private readonly log: Logger,
    private readonly owner: { closing(): boolean; retry(waiters: Waiter[]): void; answerSoon(): void },
  ) {
    this.pollTimer = setInterval(() => this.pollAsks(), ASK_POLL_MS);
    this.pollTimer.unref();
  }

  stop(): void {
    clearInterval(this.pollTimer);
  }

  /** Asks other processes' floats on the wallet for their spare room and waits for their answers; false on failure. */
  askOthers(accountId: string, maxMs: number): Promise<boolean> {
    return this.asks.askAndWait(accountId, this.book.live(accountId)?.holdId ?? "", maxMs).catch((e) => {
      this.log.warn("llm float ask failed", { account_id: accountId, error: String(e) });
      return false;
    });
  }

  /** Looks for other processes' asks on this process's floats; one look at a time. */
  private pollAsks() {
    if (this.polling || this.owner.closing() || !this.book.floats.size) return;
    this.polling = true;
    this.asks
      .asked(this.book.floats)
      .then((asked) => {
        for (const float of this.book.asked(asked)) this.asks.makeLean(float.accountId);
        if (asked.length) this.owner.answerSoon(); // someone waits on the answer
      })
      // A database that does not answer: the commits report it; the next look tries again.
      .catch(() => {})
      .finally(() => (this.polling = false));
  }

  /** `float`: this process's float on the wallet after the commit (its free room counts in the refusal). */
  handle(outcome: GrowOutcome, waiters: Waiter[], float: Float | undefined): void {
    const now = Date.now();
    const live = float && !float.closed ? float : null;
    const refuse = (waiter: Waiter) =>
      waiter.reject(insufficient(waiter.amount, outcome.available + (live ? Math.max(0, live.free) : 0)));
    const again = (retried: Waiter[], ms: number) =>
      setTimeout(() => {
        if (this.owner.closing()) return retried.forEach(refuse);
        this.owner.retry(retried);
      }, ms);
    if (this.owner.closing()) return waiters.forEach(refuse);
    if (outcome.peersToAnswer === null) {
      // Not asked yet. Tried again even when no other float was there to ask: one may have gone back meanwhile.
      for (const waiter of waiters) waiter.asked = now;
      void this.asks
        .ask(outcome.accountId, live?.holdId ?? "")
        .catch((e) => this.log.warn("llm float ask failed", { account_id: outcome.accountId, error: String(e) }))
        .then(() => again(waiters, 0));
      return;
    }
    const waiting =
      outcome.peersToAnswer > 0 ? waiters.filter((waiter) => now - (waiter.asked ?? now) < ASK_WAIT_MS) : [];
    for (const waiter of waiters) if (!waiting.includes(waiter)) refuse(waiter);
    for (const waiter of waiting) waiter.asked ??= now;
    if (waiting.length) again(waiting, ASK_RETRY_MS);
  }
}
