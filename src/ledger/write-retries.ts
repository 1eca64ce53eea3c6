// The writes of a failed group commit (a call's end with its usage record, or floats going back), each on its own
// and retried with a backoff while the database refuses it: a call that was answered must still be charged, once.
// Once is kept by the usage record's primary key (the request id), written in the same transaction as the charge: an
// attempt that committed unreported makes the next one a duplicate, which counts as done. A void is guarded by the
// hold's `pending` status. What is still refused after MAX_ATTEMPTS, or at shutdown, is logged for the operator.

import { isUniqueViolation } from "../db/client";
import type { Logger } from "../log";
import { emptyFloatBatch, type CallEnd, type Float, type FloatBatch } from "./float";

/** One write of a failed commit: a call's end (with its line), or floats going back (`end` null). */
export interface RetriedWrite<E extends CallEnd = CallEnd> {
  batch: FloatBatch;
  end: E | null;
}

interface Queued<E extends CallEnd> extends RetriedWrite<E> {
  attempts: number;
  due: number;
}

export interface WriteRetriesDeps<E extends CallEnd> {
  log: Logger;
  /** writes it in one transaction (exclusive of the group commit), applying what it changes in memory once committed */
  write(write: RetriedWrite<E>): Promise<void>;
  /** a call's end is in the ledger */
  written(end: E): void;
  /** a call's end was given up (its float may then go back) */
  abandoned(end: E): void;
}

const MAX_ATTEMPTS = 14;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;

const backoffMs = (attempts: number) => Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1));

export class WriteRetries<E extends CallEnd = CallEnd> {
  private queue: Queued<E>[] = [];
  private current: Promise<void> | null = null;
  /** the writes being attempted now (at shutdown: they may or may not have been written) */
  readonly attempting = new Set<RetriedWrite<E>>();
  /** the writes a pass has taken from the queue and not yet attempted (at shutdown: never attempted again) */
  private taken: Queued<E>[] = [];
  /** no attempt starts after this (set by shutdown) */
  private stopAt = Infinity;
  /** set once shutdown has logged what is left: an attempt still under way then ends without a word */
  private closed = false;

  constructor(private readonly deps: WriteRetriesDeps<E>) {}

  /** Whether a charge of this account waits for a retry (queued, taken by a pass, or being attempted). */
  hasFor(accountId: string): boolean {
    const ofAccount = (write: RetriedWrite<E>) => write.end?.hold.accountId === accountId;
    if (this.queue.some(ofAccount) || this.taken.some(ofAccount)) return true;
    for (const write of this.attempting) if (ofAccount(write)) return true;
    return false;
  }

  get pending(): number {
    return this.queue.length;
  }

  /** A pass over the queue is under way. */
  get passing(): boolean {
    return this.current !== null;
  }

  /**
   * Writes it now; refused, it is queued for a later attempt (or given up after the last one). `closing`: an
   * attempt of shutdown's last passes, which neither counts towards giving up nor logs each refusal (abandonAll
   * logs what is left, once).
   */
  async attempt(write: RetriedWrite<E>, attempts = 0, closing = false): Promise<void> {
    try {
      this.attempting.add(write);
      await this.deps.write(write);
      if (write.end) this.deps.written(write.end);
    } catch (err) {
      if (this.closed) return; // shutdown has logged it already (it may have been written)
      if (write.end && isUniqueViolation(err)) {
        this.deps.written(write.end); // an earlier attempt did commit, unreported: the call is charged (and uncounted)
        return;
      }
      if (closing) {
        this.queue.push({ ...write, attempts, due: Date.now() });
        return;
      }
      const attempt = attempts + 1;
      const what = describeWrite(write);
      if (attempt >= MAX_ATTEMPTS) {
        this.deps.log.error("llm ledger write abandoned", { ...what, attempts: attempt, error: String(err) });
        if (write.end) this.deps.abandoned(write.end);
        return;
      }
      this.deps.log.error("llm ledger write failed", {
        ...what,
        attempt,
        retry_in_ms: backoffMs(attempt),
        error: String(err),
      });
      this.queue.push({ ...write, attempts: attempt, due: Date.now() + backoffMs(attempt) });
    } finally {
      this.attempting.delete(write);
    }
  }

  /**
   * A failed commit's writes, each on its own so that a single bad one cannot keep the others from the ledger: the
   * holds of floats the commit may have made (`unconfirmed`, voided by their ids: one write for all of them), each
   * call's end, each float going back.
   */
  async attemptEach(unconfirmed: Float[], ends: E[], voids: Float[]): Promise<void> {
    if (unconfirmed.length) await this.attempt({ batch: { ...emptyFloatBatch(), voids: unconfirmed }, end: null });
    for (const end of ends) await this.attempt({ batch: { ...emptyFloatBatch(), ends: [end] }, end });
    for (const float of voids) await this.attempt({ batch: { ...emptyFloatBatch(), voids: [float] }, end: null });
  }

  /** At shutdown: no attempt starts after `at`, in a pass under way or a later one. */
  stopBy(at: number): void {
    this.stopAt = at;
  }

  /**
   * Attempts the writes whose backoff has passed, one at a time, in order; not after `until`. `all` (shutdown's last
   * passes): every write, as `closing` attempts. A pass under way is waited for first: at shutdown its attempts must
   * end before the database closes.
   */
  async runDue(all = false, until = Infinity): Promise<void> {
    if (this.current) {
      await this.current;
      if (!all) return;
    }
    if (this.queue.length === 0) return;
    this.current = this.pass(all, until);
    try {
      await this.current;
    } finally {
      this.current = null;
    }
  }

  private async pass(all: boolean, until: number): Promise<void> {
    const now = Date.now();
    until = Math.min(until, this.stopAt);
    const due = all ? this.queue.splice(0) : this.queue.filter((queued) => queued.due <= now);
    if (!all) this.queue = this.queue.filter((queued) => queued.due > now);
    this.taken = due;
    try {
      while (this.taken.length) {
        if (Date.now() >= Math.min(until, this.stopAt)) {
          this.queue.push(...this.taken.splice(0)); // out of time: left for abandonAll
          return;
        }
        const next = this.taken.shift()!;
        await this.attempt(next, next.attempts, all);
      }
    } finally {
      this.taken = [];
    }
  }

  /**
   * At shutdown, after a last attempt: every call whose charge is not known to be written, one line each, for the
   * operator. Those in a commit (`committing`) or an attempt still under way may have been written: the operator
   * checks for the usage record before charging by hand. `queued`: ends no commit has taken yet.
   */
  logUnwritten(committing: E[], queued: E[]): void {
    const logged = new Set(this.abandonAll().map((write) => write.end)); // refused, not attempted again in time
    const log = (end: E, maybe: boolean) => {
      if (logged.has(end)) return;
      logged.add(end);
      this.deps.log.error("llm ledger write abandoned at shutdown", {
        ...describeCallEnd(end),
        ...(maybe ? { may_have_been_written: true } : { never_attempted: true }),
      });
    };
    for (const end of committing) log(end, true);
    for (const write of this.attempting) if (write.end) log(write.end, true);
    for (const end of queued) log(end, false);
  }

  /** What is still refused is logged, one line each, and dropped. Returns it. */
  private abandonAll(): RetriedWrite<E>[] {
    this.closed = true;
    const left = [...this.queue.splice(0), ...this.taken.splice(0)];
    for (const queued of left)
      this.deps.log.error("llm ledger write abandoned at shutdown", {
        ...describeWrite(queued),
        attempts: queued.attempts,
      });
    return left;
  }
}

/** What the operator needs to charge a call by hand, or to find a float still held. */
function describeWrite(write: RetriedWrite): Record<string, unknown> {
  return write.end ? describeCallEnd(write.end) : { float_holds: write.batch.voids.map((float) => float.holdId) };
}

export function describeCallEnd(end: CallEnd): Record<string, unknown> {
  return {
    request_id: end.record.requestId,
    account_id: end.record.accountId,
    charge: end.charge,
    held: end.hold.amount,
  };
}
