// Calls the wallet could not cover at a commit. Other processes' floats may hold spare room on it: they are asked for
// it (float-asks.ts) and the calls tried again, until every float asked has answered (then what the wallet has is
// what it truly has) or ASK_WAIT_MS has passed. Refused with what the wallet and this process's float have: another
// process's spare room is back in the wallet by then, and what it still holds backs calls in flight.

import type { Logger } from "../log";
import type { Float, GrowOutcome, Reservation } from "./float";
import { ASK_RETRY_MS, ASK_WAIT_MS, type FloatAsks } from "./float-asks";
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
  constructor(
    private readonly asks: FloatAsks,
    private readonly log: Logger,
    private readonly owner: { closing(): boolean; retry(waiters: Waiter[]): void },
  ) {}

  /** `float`: this process's float on the wallet after the commit (its free room counts in the refusal). */
  handle(outcome: GrowOutcome, waiters: Waiter[], float: Float | undefined): void {
    const now = Date.now();
    const live = float && !float.closed ? float : null;
    const refuse = (waiter: Waiter) => waiter.reject(insufficient(waiter.amount, outcome.available + (live ? Math.max(0, live.free) : 0)));
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
    const waiting = outcome.peersToAnswer > 0 ? waiters.filter((waiter) => now - (waiter.asked ?? now) < ASK_WAIT_MS) : [];
    for (const waiter of waiters) if (!waiting.includes(waiter)) refuse(waiter);
    for (const waiter of waiting) waiter.asked ??= now;
    if (waiting.length) again(waiting, ASK_RETRY_MS);
  }
}
