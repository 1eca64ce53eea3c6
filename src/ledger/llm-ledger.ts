// The LLM path's ledger: reservations from a per-wallet float in memory (float.ts), and a group commit
// (group-commit.ts) for everything that must reach the database. A call whose reservation fits its wallet's float
// goes upstream at once, with no database work; one that does not waits for the next commit, which is started at
// once and grows the float (or refuses the call with 402 when the wallet is short, after asking other processes'
// floats for their spare room: float-asks.ts). Calls' ends, with their usage records, are committed in groups, every
// LEDGER_COMMIT_INTERVAL_MS; an idle float goes back to the wallet after LEDGER_FLOAT_IDLE_MS.

import { ApiError } from "../http/errors";
import { metrics } from "../ops/metrics";
import { within } from "../ops/shutdown";
import { Float, type CallEnd, type FloatBatch, type GrowOutcome, type Reservation } from "./float";
import { FloatAsks } from "./float-asks";
import { FloatBook } from "./float-book";
import { writeFloatBatchIn, type FloatBatchResult } from "./float-writes";
import { GroupCommit } from "./group-commit";
import type { LlmLedgerDeps } from "./model";
import { Shortfalls, type Waiter } from "./shortfalls";
import { WriteRetries, type RetriedWrite } from "./write-retries";

const MAX_BATCH = 512;

export class LlmLedger<E extends CallEnd = CallEnd> {
  private readonly book: FloatBook;
  private waiters: Waiter[] = [];
  private ends: E[] = [];
  /** the ends in the group commit under way (at shutdown: they may or may not have been written) */
  private committing: E[] = [];
  private readonly commits: GroupCommit;
  private readonly retries: WriteRetries<E>;
  private readonly asks: FloatAsks;
  private readonly shortfalls: Shortfalls;
  private readonly maintenanceTimer: Timer;
  private closing = false;
  /** set once close() has logged what it could not write (WriteRetries.logUnwritten) */
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly deps: LlmLedgerDeps<E>) {
    this.now = deps.clock ?? Date.now;
    this.book = new FloatBook(deps.settings);
    this.commits = new GroupCommit(deps.settings.commitIntervalMs, {
      queued: () => this.waiters.length > 0 || this.ends.length > 0 || this.book.queued,
      urgent: () => this.waiters.length > 0 || this.ends.length >= MAX_BATCH || this.closing,
      commitNext: () => this.commitNext(),
    });
    this.retries = new WriteRetries<E>({
      log: deps.log,
      write: (write) => this.writeRetried(write),
      written: (end) => this.written([end]),
      abandoned: (end) => end.hold.float.written(),
    });
    this.asks = new FloatAsks(deps.db, (run) => this.commits.exclusive(run));
    this.shortfalls = new Shortfalls(this.asks, this.book, deps.log, {
      closing: () => this.closing,
      retry: (waiters) => {
        this.waiters.push(...waiters);
        this.commits.schedule(true);
      },
      answerSoon: () => this.commits.schedule(true),
    });
    this.maintenanceTimer = setInterval(
      () => this.maintainFloats(),
      Math.max(10, Math.min(250, deps.settings.floatIdleMs)),
    );
    this.maintenanceTimer.unref();
  }

  /**
   * Reserve `amount` for an LLM call: at once when the wallet's float covers it, else after the next commit grows
   * the float. Rejects with the ledger's 402 (insufficient_credits) when the wallet cannot cover it.
   */
  hold(accountId: string, amount: number, ref: string): Promise<Reservation> {
    // Nothing to reserve (a model priced at zero): no float needed; a charge it still states comes off the balance.
    if (amount <= 0) return Promise.resolve(Float.none(accountId).reserve(0, ref, this.now()));
    // The free path: reserved in memory, an already-resolved promise.
    const reservation = this.book.reserve(accountId, amount, ref, this.now());
    if (reservation) return Promise.resolve(reservation);
    return new Promise<Reservation>((resolve, reject) => {
      this.waiters.push({ accountId, amount, ref, asked: null, resolve, reject });
      this.commits.schedule(true); // a call waits on this commit
    });
  }

  /** Whether a call of `amount` on the wallet would take the free path now: reserved in memory, no commit waited for. */
  isFreePath(accountId: string, amount: number): boolean {
    if (amount <= 0) return true;
    const float = this.book.live(accountId);
    return float !== null && float.free >= amount;
  }

  /** Posts the call's charge (or voids its reservation, charge null) and writes its usage record, once. */
  postOrVoid(end: E): void {
    if (!end.hold.float.end(end.hold, end.charge, this.now())) return;
    this.ends.push(end);
    this.commits.schedule(this.ends.length >= MAX_BATCH); // a full batch does not wait out the interval
  }

  /**
   * For another feature's hold that did not fit (a media task, an admin correction): gives this process's float for
   * the wallet back if no call is using it, and asks other processes' floats on it for their spare room (true when
   * either may have freed something, so the hold is worth trying again).
   */
  async returnIdle(accountId: string, maxMs = 250): Promise<boolean> {
    const [mine, theirs] = await Promise.all([
      this.returnOwnIdle(accountId, maxMs),
      this.shortfalls.askOthers(accountId, maxMs),
    ]);
    return mine || theirs;
  }

  /** Within `maxMs`: a commit held up elsewhere makes it answer false, not hang. */
  private async returnOwnIdle(accountId: string, maxMs: number): Promise<boolean> {
    const until = this.now() + maxMs;
    const float = this.book.live(accountId);
    if (float?.reserved !== 0) return false;
    await this.committedFor(accountId, maxMs); // its calls' charges first: the hold covers them until they are written
    if (float.closed || !float.isUnused()) return false;
    this.book.retire(float);
    this.commits.schedule(true);
    // True only once the void is committed: a commit that fails leaves it to a retry, its credits still held.
    return (await within(this.drain(), Math.max(0, until - this.now()))) && float.voided;
  }

  /**
   * Resolves once everything queued so far is committed (GET /v1/usage reads after it), or its commit failed; not
   * once the loop goes idle, which under steady load on Postgres it may never be. Commits take each queue from its
   * head, so what is queued now is in the commit under way (if any) and the next ones.
   */
  drain(): Promise<void> {
    const backlog = Math.max(this.ends.length, this.waiters.length, this.book.voidsOrRefreshesQueued ? 1 : 0);
    return this.commits.drain(Math.ceil(backlog / MAX_BATCH));
  }

  /**
   * For a reader of one account's records or balance (GET /v1/usage, GET /v1/credits, the dashboard, the admin
   * API): once that account's calls answered so far are committed, or after `maxMs`. Bounded, and at once when the
   * account has nothing queued: a commit held up elsewhere must not hold up every account's reads.
   */
  async committedFor(accountId: string, maxMs = 250): Promise<void> {
    const until = this.now() + maxMs;
    const left = () => Math.max(0, until - this.now());
    const ofAccount = (end: E) => end.hold.accountId === accountId;
    if (this.ends.some(ofAccount) || this.committing.some(ofAccount)) await within(this.drain(), left());
    // A charge the database refused waits for its retry (the first comes 100 ms after).
    while (this.retries.hasFor(accountId) && left() > 0) {
      await within(this.retries.runDue(), left());
      if (this.retries.hasFor(accountId)) await Bun.sleep(Math.min(10, left()));
    }
  }

  /**
   * On shutdown: no new floats; each goes back to the wallet once its calls are done and their charges written,
   * within `deadlineMs`. Every wait is bounded (a database may stop answering): the last part of the deadline is kept
   * for a last attempt at what the database refused, and whatever is still not written is logged call by call.
   * Floats left behind stay held until the sweeper voids them, as after a crash.
   */
  async close(deadlineMs = 10_000): Promise<void> {
    clearInterval(this.maintenanceTimer);
    this.shortfalls.stop();
    this.closing = true; // what ends from now on (calls cut off at the end of the grace period) is not held back
    const until = this.now() + deadlineMs;
    const logBy = until - Math.min(500, deadlineMs / 8);
    const lastTry = logBy - Math.min(1000, deadlineMs / 4);
    this.retries.stopBy(logBy);
    const waited = (promise: Promise<unknown>, by: number) => within(promise, Math.max(0, by - this.now()));
    // A void queued for a commit waiting out its interval, or taken by a pass of retries: stopping would leave it out.
    const unfinished = () =>
      this.book.floats.size ||
      this.book.queued ||
      this.commits.busy ||
      this.retries.pending ||
      this.retries.passing ||
      this.ends.length ||
      this.committing.length;
    while (unfinished() && this.now() < logBy) {
      this.book.retireUnused();
      this.commits.schedule();
      const last = this.now() >= lastTry;
      const by = last ? logBy : lastTry;
      if (!(await waited(this.drain(), by))) break;
      // Refused charges wait out their backoff while there is time; in the last part, each pass attempts them all.
      if (!(await waited(this.retries.runDue(last, by), by))) break;
      if (unfinished()) await Bun.sleep(20);
    }
    // Whatever is still not known to be written is logged call by call; a commit still under way then ends without
    // retrying or logging again.
    this.retries.logUnwritten(this.committing, this.ends);
    this.closed = true;
    this.commits.stop();
  }

  /** Every few ms: return idle floats, keep the others' expiry ahead of the sweeper, retry refused writes. */
  private maintainFloats() {
    if (this.book.maintain(this.now())) this.commits.schedule();
    if (this.retries.pending) void this.retries.runDue();
  }

  private async commitNext(): Promise<void> {
    const ends = this.ends.splice(0, MAX_BATCH);
    this.committing = ends;
    try {
      await this.commitBatch(this.waiters.splice(0, MAX_BATCH), ends);
    } finally {
      this.committing = [];
    }
  }

  /** The transaction of a batch: the floats' writes, then the calls' lines naming their wallet's usage entry. */
  private writeBatch(batch: FloatBatch, ends: E[]): Promise<FloatBatchResult> {
    const { db, ledger, writeLines, settings } = this.deps;
    const now = this.now();
    return this.commits.exclusive(() =>
      db.tx(function* (q) {
        const result = yield* writeFloatBatchIn(q, ledger, batch, now, settings.holdTtlMs);
        yield* writeLines(q, ends, result.entries);
        return result;
      }),
    );
  }

  private async writeRetried(write: RetriedWrite<E>): Promise<void> {
    const result = await this.writeBatch(write.batch, write.end ? [write.end] : []);
    for (const float of result.gone) float.close();
    for (const float of write.batch.voids) float.markVoided();
  }

  private async commitBatch(queued: Waiter[], ends: E[]): Promise<void> {
    // Ends since they queued may have freed enough: those are served now, the rest grow the float.
    const waiters = queued.filter((waiter) => !this.tryReserve(waiter));
    const batch = this.book.planBatch(waiters, ends, (accountId) => this.asks.isLean(accountId), this.closing);
    let result: FloatBatchResult;
    try {
      result = await this.writeBatch(batch, ends);
    } catch (e) {
      return this.commitFailed(batch, waiters, ends, e);
    }
    // Committed: only now does memory follow what the transaction found and did.
    this.book.committed(batch, result);
    this.written(ends);
    for (const outcome of result.outcomes)
      this.applyGrowth(
        outcome,
        waiters.filter((waiter) => waiter.accountId === outcome.accountId),
      );
  }

  /**
   * Nothing of the batch is known to be committed. Waiting calls fail; the rest is written one piece at a time, so
   * that a single bad one cannot keep the others from the ledger, and retried until the database takes it
   * (write-retries.ts). A refresh is asked for again by maintainFloats; a top-up, at the next commit.
   */
  private async commitFailed(batch: FloatBatch, waiters: Waiter[], ends: E[], error: unknown): Promise<void> {
    const unconfirmed = this.book.failed(batch);
    // After shutdown logged its calls (close), nothing is logged or retried on a database closing under it.
    if (!this.closed)
      this.deps.log.error("llm ledger batch failed", {
        error: String(error),
        waiting: waiters.length,
        finishes: ends.length,
      });
    const unavailable = new ApiError(
      503,
      "ledger_unavailable",
      "The gateway could not reserve credits for this request just now; nothing was charged. Retry shortly.",
      {
        type: "service_unavailable",
      },
    );
    for (const waiter of waiters) waiter.reject(unavailable);
    if (!this.closed) await this.retries.attemptEach(unconfirmed, ends, batch.voids);
  }

  /** Ends now in the ledger: counted in the settled-credits metric, and no longer keeping their floats. */
  private written(ends: E[]): void {
    let total = 0;
    for (const end of ends) {
      if (end.charge) total += end.charge;
      end.hold.float.written();
    }
    metrics.creditsPosted(total, "llm");
  }

  private tryReserve(waiter: Waiter): boolean {
    const reservation = this.book.reserve(waiter.accountId, waiter.amount, waiter.ref, this.now());
    if (reservation) waiter.resolve(reservation);
    return reservation !== null;
  }

  /** After a commit: apply the growth, then serve the wallet's waiters in order. */
  private applyGrowth(outcome: GrowOutcome, waiters: Waiter[]) {
    const float = this.book.applyGrowth(outcome, this.now());
    const short: Waiter[] = [];
    waiters.forEach((waiter, i) => {
      if (outcome.funded && !outcome.funded[i]) return short.push(waiter);
      if (this.tryReserve(waiter)) return;
      this.waiters.push(waiter); // someone took the growth first (possible while a Postgres commit is in flight): again
    });
    if (short.length) this.shortfalls.handle(outcome, short, float);
    if (this.waiters.length) this.commits.schedule();
  }
}
