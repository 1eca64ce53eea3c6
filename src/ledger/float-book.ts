// This process's floats, one per wallet, and what they ask of the next group commit: voids of floats going back,
// expiry refreshes, answers to other processes' asks, and the plans of float-plans.ts. It works out each batch's
// float work before the commit and applies what the commit did after it (llm-ledger.ts says when).

import { Float, type CallEnd, type FloatBatch, type GrowOutcome, type Reservation } from "./float";
import { growsFor, holdResets, refills, trims } from "./float-plans";
import type { FloatBatchResult } from "./float-writes";

export class FloatBook {
  readonly floats = new Map<string, Float>();
  private voids: Float[] = [];
  private refreshes: Float[] = [];
  /** floats another process asked for their spare room, answered at the next commit */
  private answers: Float[] = [];

  constructor(private readonly settings: { floatIdleMs: number; holdTtlMs: number }) {}

  /** Work for the next commit that no call waits on. */
  get queued(): boolean {
    return this.voids.length > 0 || this.refreshes.length > 0 || this.answers.length > 0;
  }

  /** Voids or refreshes are queued: the next commit carries them. */
  get voidsOrRefreshesQueued(): boolean {
    return this.voids.length > 0 || this.refreshes.length > 0;
  }

  /** The wallet's float, when it takes reservations. */
  live(accountId: string): Float | null {
    const float = this.floats.get(accountId);
    return float && !float.closed ? float : null;
  }

  /** A reservation from the wallet's float when it has room; null when the call must wait for growth. */
  reserve(accountId: string, amount: number, ref: string, now: number): Reservation | null {
    const float = this.live(accountId);
    return float && float.free >= amount ? float.reserve(amount, ref, now) : null;
  }

  /** Stops the float taking reservations and queues its void. */
  retire(float: Float): void {
    float.close();
    this.floats.delete(float.accountId);
    this.voids.push(float);
  }

  /** Shutdown: every float no call is using goes back. */
  retireUnused(): void {
    for (const float of this.floats.values()) if (float.isUnused()) this.retire(float);
  }

  /**
   * Idle floats go back; the others' expiry is kept ahead of the sweeper. True when something was queued. Every
   * float still here is refreshed, not only one with a call in flight at this moment: calls that come and go between
   * two looks, all voided, keep it from going idle but charge nothing, which would move its expiry.
   */
  maintain(now: number): boolean {
    let queued = false;
    for (const float of this.floats.values()) {
      // Not while a charge of its calls is unwritten (queued, committing, or refused and retried): its hold covers it.
      if (float.isIdle(now, this.settings.floatIdleMs)) {
        this.retire(float);
        queued = true;
      } else if (float.refreshDue(now, this.settings.holdTtlMs)) {
        float.refreshing(now);
        this.refreshes.push(float);
        queued = true;
      }
    }
    return queued;
  }

  /** Another process asked these floats for their spare room: answered at the next commit. Returns those newly asked. */
  asked(floats: Float[]): Float[] {
    const fresh = floats.filter((float) => float.markAsked());
    this.answers.push(...fresh);
    return fresh;
  }

  /** The floats' work of the next commit, besides the calls' ends (float-plans.ts). */
  planBatch(
    waiters: ReadonlyArray<{ accountId: string; amount: number; asked: number | null }>,
    ends: CallEnd[],
    isLean: (accountId: string) => boolean,
    closing: boolean,
  ): FloatBatch {
    const growing = new Set(waiters.map((waiter) => waiter.accountId)); // grown: no top-up or trim beside (a lean one still trims)
    const trimmed = trims(this.floats, growing, isLean); // before growth reckons what the floats have free
    const resets = holdResets(this.floats, ends);
    // A float whose hold may exceed its size (a failed commit's trim) answers only with its reset: cleared before,
    // the ask would tell the asker that spare room is back in the wallet while its hold still holds it.
    const answers = this.answers.splice(0).filter((float) => {
      if (float.closed) return false;
      if (!float.holdMayExceedSize || resets.some((reset) => reset.float === float)) return true;
      float.clearAsked(); // found again by a later look, once its charges are written
      return false;
    });
    return {
      ends,
      voids: this.voids.splice(0),
      refreshes: this.refreshes.splice(0),
      // No top-ups while closing: the floats are on their way back.
      grows: [...growsFor(this.floats, waiters, isLean), ...(closing ? [] : refills(this.floats, growing, isLean))],
      ...trimmed,
      holdResets: resets,
      answers,
    };
  }

  /** The batch is committed: memory follows what its transaction found and did (growth: applyGrowth). */
  committed(batch: FloatBatch, result: FloatBatchResult): void {
    for (const float of result.gone) float.close();
    for (const float of batch.answers) float.clearAsked();
    for (const float of batch.voids) float.markVoided();
    for (const reset of batch.holdResets) reset.float.holdReset();
    for (const [account, amount] of result.available) this.floats.get(account)?.observeWallet(amount);
  }

  /**
   * Nothing of the batch is known to be committed. Growth the database may have made unreported, and trims it may
   * not have made: a float's hold may exceed its size. It goes on lending (its size never exceeds its hold) and its
   * hold is set back to its size at a later commit (holdResets). Returns the floats whose hold the commit may have
   * made, to be voided by their ids.
   */
  failed(batch: FloatBatch): Float[] {
    for (const float of batch.answers) float.clearAsked(); // not answered: the next look finds the ask again
    for (const float of batch.refreshes) float.refreshFailed(); // asked for again at the next look
    for (const grow of batch.grows) grow.float?.holdMayBeLarger();
    for (const trim of batch.trims) trim.float.holdMayBeLarger();
    return batch.grows.map((grow) => Float.unconfirmed(grow.accountId, grow.newHoldId));
  }

  /** A committed growth: the float grown in place, or a new one for the wallet. Returns the wallet's float. */
  applyGrowth(outcome: GrowOutcome, now: number): Float | undefined {
    let float = this.floats.get(outcome.accountId);
    if (outcome.newHoldId) {
      float?.close(); // gone from the database; its calls in flight post against the balance
      float = new Float(outcome.accountId, outcome.newHoldId, outcome.granted, now);
      this.floats.set(outcome.accountId, float);
    } else if (float && outcome.granted) float.grown(outcome.granted, now);
    return float;
  }
}
