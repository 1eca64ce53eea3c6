// The LLM path's ledger: reservations from a per-wallet float in memory (ledger/float.ts says why that keeps the
// ledger's guarantees), and a group commit for everything that must reach the database.
//
// A call whose reservation fits its wallet's float goes upstream at once, with no database work. One that does not
// waits for the next commit, which grows the float (or refuses the call with 402 when the wallet is short). Settles
// and releases, with their usage records, are queued and committed in groups: everything asked for in one event-loop
// turn goes into ONE transaction (profiled: the commit and the pages it writes, not the statements, are what a
// ledger write costs). An idle float goes back to the wallet after LEDGER_FLOAT_IDLE_MS. A crash loses at most the
// finishes of one turn; the float stays pending until its expiry and the sweeper returns it, so a customer is never
// overcharged.

import type { AppContext } from "../context.ts";
import { ApiError } from "../http/errors.ts";
import { insufficient } from "../ledger/service.ts";
import { Float, floatBatchIn, type FloatBatch, type FloatFinish, type FloatGrow, type GrowOutcome, type Reservation } from "../ledger/float.ts";
import { metrics } from "../ops/metrics.ts";
import { insertRecord, type Finish } from "./records.ts";

interface Waiter {
  accountId: string;
  amount: number;
  ref: string;
  resolve(r: Reservation): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 512;

export class LedgerBatch {
  private floats = new Map<string, Float>();
  private waiters: Waiter[] = [];
  private finishes: Finish[] = [];
  private releases: Float[] = [];
  private refreshes: Float[] = [];
  private running: Promise<void> | null = null;
  // For drain(): commits begun and ended (a failed one ends too), and the drain() calls waiting for a commit's end.
  private started = 0;
  private ended = 0;
  private drains: Array<{ until: number; resolve(): void }> = [];
  private timer: Timer;
  private readonly ttlMs: number;
  private readonly idleMs: number;

  constructor(private ctx: AppContext) {
    this.ttlMs = ctx.config.holdTtlSeconds * 1000;
    this.idleMs = ctx.config.floatIdleMs;
    this.timer = setInterval(() => this.tend(), Math.max(10, Math.min(250, this.idleMs)));
    this.timer.unref();
  }

  /**
   * Reserve `amount` for an LLM call: at once when the wallet's float covers it, else after the next commit grows
   * the float. Rejects with the ledger's 402 (insufficient_credits) when the wallet cannot cover it.
   */
  hold(accountId: string, amount: number, ref: string): Reservation | Promise<Reservation> {
    // Nothing to reserve (a model priced at zero): no float needed; a charge it still states comes off the balance.
    if (amount <= 0) return this.reserve(Float.none(accountId), 0, ref);
    const f = this.floats.get(accountId);
    if (f && !f.closed && f.free >= amount) return this.reserve(f, amount, ref);
    return new Promise<Reservation>((resolve, reject) => {
      this.waiters.push({ accountId, amount, ref, resolve, reject });
      this.schedule();
    });
  }

  /** Settle (charge) or release (charge null) a call's reservation and write its usage record, once. */
  finish(f: Finish): void {
    const r = f.hold;
    if (r.finished) return;
    r.finished = true;
    const float = r.float;
    float.reserved -= r.amount;
    if (f.charge) float.size -= Math.min(f.charge, r.amount); // the database follows at the commit
    float.lastActive = Date.now();
    this.finishes.push(f);
    this.schedule();
  }

  /**
   * Gives the wallet's float back now if no call is using it (true when one went back): another feature's hold
   * (a media task) may need what it reserved, before LEDGER_FLOAT_IDLE_MS would return it anyway.
   */
  async returnIdle(accountId: string): Promise<boolean> {
    const f = this.floats.get(accountId);
    if (!f || f.closed || f.reserved !== 0) return false;
    this.retire(f);
    this.schedule();
    await this.drain();
    return true;
  }

  /**
   * Resolves once everything queued so far is committed (GET /v1/usage reads after it), or its commit failed.
   * Not once the loop goes idle: under steady load on Postgres, calls finish while every commit awaits the network,
   * so the loop may never be idle. Commits take each queue from its head, so what is queued now is in the commit
   * under way (if any) and in the next ones: one, or more when more than MAX_BATCH finishes or waiters are queued.
   */
  drain(): Promise<void> {
    const backlog = Math.max(this.finishes.length, this.waiters.length, this.releases.length || this.refreshes.length ? 1 : 0);
    const until = this.started + Math.ceil(backlog / MAX_BATCH);
    if (this.ended >= until) return Promise.resolve();
    this.schedule();
    return new Promise((resolve) => this.drains.push({ until, resolve }));
  }

  /** On shutdown: no new floats; each goes back to the wallet once its calls are done (or the deadline passes). */
  async close(deadlineMs = 10_000): Promise<void> {
    clearInterval(this.timer);
    const until = Date.now() + deadlineMs;
    while (this.floats.size && Date.now() < until) {
      for (const f of this.floats.values()) if (f.reserved === 0) this.retire(f);
      this.schedule();
      await this.drain();
      if (this.floats.size) await Bun.sleep(20);
    }
    await this.drain();
  }

  private reserve(f: Float, amount: number, ref: string): Reservation {
    f.reserved += amount;
    f.lastActive = Date.now();
    // No id of its own: the call's line in the ledger is its usage record, keyed by the request id (`ref`).
    return { id: ref, accountId: f.accountId, amount, float: f, finished: false };
  }

  private retire(f: Float) {
    f.closed = true;
    this.floats.delete(f.accountId);
    this.releases.push(f);
  }

  /** Every few ms: return idle floats, and keep the expiry of floats with calls in flight ahead of the sweeper. */
  private tend() {
    const now = Date.now();
    let queued = false;
    for (const f of this.floats.values()) {
      if (f.reserved === 0 && now - f.lastActive >= this.idleMs) {
        this.retire(f);
        queued = true;
      } else if (f.reserved > 0 && now - f.refreshedAt >= this.ttlMs / 3) {
        f.refreshedAt = now;
        this.refreshes.push(f);
        queued = true;
      }
    }
    if (queued) this.schedule();
  }

  private schedule() {
    if (!this.running) this.running = this.run();
  }

  private async run(): Promise<void> {
    // Let the rest of this turn's requests join the batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.waiters.length || this.finishes.length || this.releases.length || this.refreshes.length) {
        this.started++;
        try {
          await this.commit(this.waiters.splice(0, MAX_BATCH), this.finishes.splice(0, MAX_BATCH));
        } finally {
          this.ended++;
          if (this.drains.length) this.wake();
        }
      }
    } finally {
      this.running = null;
    }
  }

  /** Resolves the drain() calls whose commits have all ended. */
  private wake() {
    const ready = this.drains.filter((d) => d.until <= this.ended);
    this.drains = this.drains.filter((d) => d.until > this.ended);
    for (const d of ready) d.resolve();
  }

  private async commit(queued: Waiter[], finishes: Finish[]): Promise<void> {
    const ledger = this.ctx.ledger;
    const ttl = this.ttlMs;
    // Finishes since they queued may have freed enough: those are served now, the rest grow the float.
    const waiters = queued.filter((w) => !this.tryReserve(w));
    const batch: FloatBatch = {
      finishes: finishes.map((f): FloatFinish => ({ res: f.hold, charge: f.charge })),
      releases: this.releases.splice(0),
      refreshes: this.refreshes.splice(0),
      grows: this.growsFor(waiters),
    };
    let outcomes: GrowOutcome[];
    try {
      outcomes = await this.ctx.db.tx(function* (q) {
        const { outcomes, entries } = yield* floatBatchIn(q, ledger, batch, ttl);
        for (const f of finishes) yield* insertRecord(q, f, entries);
        return outcomes;
      });
    } catch (e) {
      // Nothing of the batch was committed. Waiting calls fail; the rest is retried one piece at a time, so that a
      // single bad one cannot keep the others from the ledger (a refresh is simply asked for again by tend()).
      this.ctx.log.error("llm ledger batch failed", { error: String(e), waiting: waiters.length, finishes: finishes.length });
      const unavailable = new ApiError(503, "ledger_unavailable", "The gateway could not reserve credits for this request just now; nothing was charged. Retry shortly.", {
        type: "service_unavailable",
      });
      for (const w of waiters) w.reject(unavailable);
      for (const [i, f] of finishes.entries()) await this.retry({ ...emptyBatch(), finishes: [batch.finishes[i]!] }, f);
      for (const r of batch.releases) await this.retry({ ...emptyBatch(), releases: [r] }, null);
      return;
    }
    countSettled(finishes);
    for (const o of outcomes) this.settleGrowth(o, waiters.filter((w) => w.accountId === o.accountId));
  }

  private async retry(piece: FloatBatch, f: Finish | null) {
    const ledger = this.ctx.ledger;
    const ttl = this.ttlMs;
    await this.ctx.db
      .tx(function* (q) {
        const { entries } = yield* floatBatchIn(q, ledger, piece, ttl);
        if (f) yield* insertRecord(q, f, entries);
      })
      .then(() => f && countSettled([f]))
      .catch((err) => this.ctx.log.error("llm ledger write failed", { request_id: f?.record.requestId, error: String(err) }));
  }

  private tryReserve(w: Waiter): boolean {
    const f = this.floats.get(w.accountId);
    if (!f || f.closed || f.free < w.amount) return false;
    w.resolve(this.reserve(f, w.amount, w.ref));
    return true;
  }

  /** One growth request per wallet: what its waiters need beyond the float's free part, and room to spare. */
  private growsFor(waiters: Waiter[]): FloatGrow[] {
    const byAccount = new Map<string, number[]>();
    for (const w of waiters) (byAccount.get(w.accountId) ?? byAccount.set(w.accountId, []).get(w.accountId)!).push(w.amount);
    return [...byAccount].map(([accountId, amounts]) => {
      const float = this.floats.get(accountId) ?? null;
      const total = amounts.reduce((a, b) => a + b, 0);
      const free = float && !float.closed ? Math.max(0, float.free) : 0;
      const need = total - free; // > 0: commit() served the waiters the float covers
      return { accountId, float, need, free, headroom: Math.max(need, float?.size ?? 0), amounts };
    });
  }

  /** After a commit: apply the growth, then serve the wallet's waiters in order. */
  private settleGrowth(o: GrowOutcome, waiters: Waiter[]) {
    let f = this.floats.get(o.accountId);
    if (o.newHoldId) {
      if (f) f.closed = true; // gone from the database; its calls in flight settle against the balance
      const now = Date.now();
      f = new Float(o.accountId, o.newHoldId, o.granted, now, now);
      this.floats.set(o.accountId, f);
    } else if (f && o.granted) {
      f.size += o.granted;
      f.refreshedAt = Date.now();
    }
    waiters.forEach((w, i) => {
      if (o.funded && !o.funded[i]) return w.reject(insufficient(w.amount, o.available + (f && !f.closed ? Math.max(0, f.free) : 0)));
      if (this.tryReserve(w)) return;
      this.waiters.push(w); // someone took the growth first (possible while a Postgres commit is in flight): again
    });
    if (this.waiters.length) this.schedule();
  }
}

/** The settled-credits metric counts charges once committed: a finish whose writes failed charged nobody. */
function countSettled(finishes: Finish[]) {
  for (const f of finishes) if (f.charge) metrics.creditsSettled(f.charge, "llm");
}

const emptyBatch = (): FloatBatch => ({ finishes: [], releases: [], refreshes: [], grows: [] });
