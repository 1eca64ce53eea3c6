// The pieces of a failed group commit (one call's finish with its usage record, or one float going back), written
// on their own and, while the database refuses them, retried with a backoff. A commit can fail for a moment (a
// Postgres failover or a dropped connection, SQLite busy past its timeout), and a call that was answered must still
// be charged, once: before, a piece that failed its one retry was only logged, and its charge was gone.
//
// Once is kept by the usage record's primary key (the request id), written in the same transaction as the charge:
// should an attempt have committed although the driver reported an error, the next one is refused whole as a
// duplicate, which counts as done. A release is guarded by the hold's `pending` status. Pieces still refused after
// MAX_ATTEMPTS (~3 minutes), or at shutdown, are logged with what they were, for the operator to reconcile.

import type { AppContext } from "../context.ts";
import { isUniqueViolation } from "../db/client.ts";
import type { FloatBatch } from "./float.ts";
import { batchIn, type Finish } from "../llm/records.ts";

export interface Piece {
  batch: FloatBatch;
  finish: Finish | null;
}

interface Queued extends Piece {
  attempts: number;
  due: number;
}

const MAX_ATTEMPTS = 14;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;

const backoffMs = (attempts: number) => Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1));

export class LedgerRetries {
  private queue: Queued[] = [];
  private current: Promise<void> | null = null;
  /** the pieces being attempted now (at shutdown: they may or may not have been written) */
  readonly attempting = new Set<Piece>();
  /** the pieces a pass has taken from the queue and not yet attempted (at shutdown: never attempted again) */
  private taken: Queued[] = [];
  /** no attempt starts after this (set by shutdown) */
  private stopAt = Infinity;
  /** set once shutdown has logged what is left: an attempt still under way then ends without a word */
  private closed = false;

  constructor(
    private ctx: AppContext,
    private ttlMs: number,
    /** a finish's charge is in the ledger; or it was given up (its float may then go back) */
    private on: { written(f: Finish): void; abandoned(f: Finish): void },
    /** runs a transaction when no other ledger transaction of this process is under way (LedgerBatch.exclusive) */
    private exclusive: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
  ) {}

  /** Whether a charge of this account waits for a retry (queued, taken by a pass, or being attempted). */
  hasFor(accountId: string): boolean {
    const of = (p: Piece) => p.finish?.hold.accountId === accountId;
    if (this.queue.some(of) || this.taken.some(of)) return true;
    for (const p of this.attempting) if (of(p)) return true;
    return false;
  }

  get pending(): number {
    return this.queue.length;
  }

  /**
   * Writes the piece now; refused, it is queued for a later attempt (or given up after the last one). `closing`: an
   * attempt of shutdown's last passes, which neither counts towards giving up nor logs each refusal (abandonAll
   * logs what is left, once).
   */
  async attempt(piece: Piece, attempts = 0, closing = false): Promise<void> {
    const { ledger } = this.ctx;
    const ttl = this.ttlMs;
    try {
      this.attempting.add(piece);
      await this.exclusive(() => this.ctx.db.tx((q) => batchIn(q, ledger, piece.batch, piece.finish ? [piece.finish] : [], ttl)));
      if (piece.finish) this.on.written(piece.finish);
      for (const f of piece.batch.releases) f.released = true;
    } catch (err) {
      if (this.closed) return; // shutdown has logged it already (it may have been written)
      if (piece.finish && isUniqueViolation(err)) {
        this.on.written(piece.finish); // an earlier attempt did commit, unseen: the call is charged (and uncounted)
        return;
      }
      if (closing) {
        this.queue.push({ ...piece, attempts, due: Date.now() });
        return;
      }
      const n = attempts + 1;
      const what = describe(piece);
      if (n >= MAX_ATTEMPTS) {
        this.ctx.log.error("llm ledger write abandoned", { ...what, attempts: n, error: String(err) });
        if (piece.finish) this.on.abandoned(piece.finish);
        return;
      }
      this.ctx.log.error("llm ledger write failed", { ...what, attempt: n, retry_in_ms: backoffMs(n), error: String(err) });
      this.queue.push({ ...piece, attempts: n, due: Date.now() + backoffMs(n) });
    } finally {
      this.attempting.delete(piece);
    }
  }

  /** At shutdown: no attempt starts after `at`, in a pass under way or a later one. */
  stopBy(at: number): void {
    this.stopAt = at;
  }

  /**
   * Attempts the pieces whose backoff has passed, one at a time, in order; not after `until`. `all` (shutdown's
   * last passes): every piece, as `closing` attempts. A pass under way is waited for first: at shutdown its attempts
   * must end before the database closes.
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
    const due = all ? this.queue.splice(0) : this.queue.filter((r) => r.due <= now);
    if (!all) this.queue = this.queue.filter((r) => r.due > now);
    this.taken = due;
    try {
      while (this.taken.length) {
        if (Date.now() >= Math.min(until, this.stopAt)) {
          this.queue.push(...this.taken.splice(0)); // out of time: left for abandonAll
          return;
        }
        const r = this.taken.shift()!;
        await this.attempt(r, r.attempts, all);
      }
    } finally {
      this.taken = [];
    }
  }

  /** At shutdown, after a last attempt: what is still refused is logged, one line each, and dropped. Returns it. */
  abandonAll(): Piece[] {
    this.closed = true;
    const left = [...this.queue.splice(0), ...this.taken.splice(0)];
    for (const r of left) this.ctx.log.error("llm ledger write abandoned at shutdown", { ...describe(r), attempts: r.attempts });
    return left;
  }
}

/** What the operator needs to charge a call by hand, or to find a float still held. */
function describe(p: Piece): Record<string, unknown> {
  return p.finish ? describeFinish(p.finish) : { float_holds: p.batch.releases.map((r) => r.holdId) };
}

export function describeFinish(f: Finish): Record<string, unknown> {
  return { request_id: f.record.requestId, account_id: f.record.accountId, charge: f.charge, held: f.hold.amount };
}
