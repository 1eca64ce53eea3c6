// The LLM path's ledger: reservations from a per-wallet float in memory (ledger/float.ts says why that keeps the
// ledger's guarantees), and a group commit for everything that must reach the database.
//
// A call whose reservation fits its wallet's float goes upstream at once, with no database work. One that does not
// waits for the next commit, which is started at once and grows the float (or refuses the call with 402 when the
// wallet is short). Settles and releases, with their usage records, are queued and committed in groups: everything
// finished within LEDGER_COMMIT_INTERVAL_MS goes into ONE transaction (profiled: BEGIN, COMMIT and the pages it
// writes cost as much as the rows, so fewer, larger commits are cheaper per call; nothing waits on them but readers
// of the records, and drain() starts the commit at once for those). An idle float goes back to the wallet after
// LEDGER_FLOAT_IDLE_MS. A crash loses at most the finishes of one interval; the float stays pending until its
// expiry and the sweeper returns it, so a customer is never overcharged. A call the wallet cannot cover beside other
// processes' floats asks them for their spare room before it is refused (ledger/float-asks.ts).

import type { AppContext } from "../context.ts";
import { ApiError } from "../http/errors.ts";
import { insufficient } from "./service.ts";
import { Float, type FloatBatch, type FloatFinish, type GrowOutcome, type Reservation } from "./float.ts";
import { ASK_POLL_MS, ASK_RETRY_MS, ASK_WAIT_MS, FloatAsks } from "./float-asks.ts";
import { metrics } from "../ops/metrics.ts";
import { batchIn, type Finish } from "../llm/records.ts";
import { growsFor, refills, resyncs, trims } from "./float-plans.ts";
import { describeFinish, LedgerRetries } from "./write-retries.ts";
import { within } from "../ops/shutdown.ts";

interface Waiter {
  accountId: string;
  amount: number;
  ref: string;
  /** when it asked other processes' floats for their spare room (null: not yet) */
  asked: number | null;
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
  /** looks for other processes' asks on this process's floats */
  private askTimer: Timer;
  /** set while run() waits out the commit interval: starts the commit now */
  private hurry: (() => void) | null = null;
  private closing = false;
  /** set once close() has logged what it could not write (see logUnwritten) */
  private closed = false;
  private readonly ttlMs: number;
  private readonly idleMs: number;
  private readonly intervalMs: number;
  private readonly retries: LedgerRetries;
  /** the finishes of the group commit under way (at shutdown: they may or may not have been written) */
  private committing: Finish[] = [];
  /** the last ledger transaction begun (exclusive) */
  private turn: Promise<unknown> = Promise.resolve();
  private readonly asks: FloatAsks;
  /** floats another process asked for their spare room, answered at the next commit */
  private answers: Float[] = [];
  /** set while a look for asks is under way */
  private polling = false;

  constructor(private ctx: AppContext) {
    this.ttlMs = ctx.config.holdTtlSeconds * 1000;
    this.idleMs = ctx.config.floatIdleMs;
    this.intervalMs = ctx.config.ledgerCommitIntervalMs;
    this.retries = new LedgerRetries(
      ctx,
      this.ttlMs,
      { written: (f) => this.written([f]), abandoned: (f) => f.hold.float.unwritten-- },
      (run) => this.exclusive(run),
    );
    this.asks = new FloatAsks(ctx.db, (run) => this.exclusive(run));
    this.timer = setInterval(() => this.tend(), Math.max(10, Math.min(250, this.idleMs)));
    this.timer.unref();
    this.askTimer = setInterval(() => this.pollAsks(), ASK_POLL_MS);
    this.askTimer.unref();
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
      this.waiters.push({ accountId, amount, ref, asked: null, resolve, reject });
      this.schedule(true); // a call waits on this commit
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
    float.unwritten++;
    this.finishes.push(f);
    this.schedule(this.finishes.length >= MAX_BATCH); // a full batch does not wait out the interval
  }

  /**
   * For another feature's hold that did not fit (a media task, an admin correction): gives this process's float for
   * the wallet back if no call is using it, and asks other processes' floats on it for their spare room (true when
   * either may have freed something, so the hold is worth trying again).
   */
  async returnIdle(accountId: string, maxMs = 250): Promise<boolean> {
    const [mine, theirs] = await Promise.all([this.returnOwnIdle(accountId, maxMs), this.askOthers(accountId, maxMs)]);
    return mine || theirs;
  }

  /**
   * Gives the wallet's float back now if no call is using it (true when one went back), before LEDGER_FLOAT_IDLE_MS
   * would return it anyway. Within `maxMs`: a commit held up elsewhere makes it answer false, not hang.
   */
  private async returnOwnIdle(accountId: string, maxMs: number): Promise<boolean> {
    const until = Date.now() + maxMs;
    const f = this.floats.get(accountId);
    if (!f || f.closed || f.reserved !== 0) return false;
    await this.settledFor(accountId, maxMs); // its calls' charges first: the hold covers them until they are written
    if (f.closed || f.reserved !== 0 || f.unwritten !== 0) return false;
    this.retire(f);
    this.schedule(true);
    // True only once the release is committed: a commit that fails leaves it to a retry, its credits still held.
    return (await within(this.drain(), Math.max(0, until - Date.now()))) && f.released;
  }

  /** Asks other processes' floats on the wallet for their spare room and waits for their answers (float-asks.ts). */
  private askOthers(accountId: string, maxMs: number): Promise<boolean> {
    const f = this.floats.get(accountId);
    return this.asks.askAndWait(accountId, f && !f.closed ? f.holdId : "", maxMs).catch((e) => {
      this.ctx.log.warn("llm float ask failed", { account_id: accountId, error: String(e) });
      return false;
    });
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
    this.schedule(true);
    return new Promise((resolve) => this.drains.push({ until, resolve }));
  }

  /**
   * For a reader of one account's records or balance (GET /v1/usage, GET /v1/credits, the dashboard, the admin
   * API): once that account's calls answered so far are committed, or after `maxMs`. Bounded, and at once when the
   * account has nothing queued: a commit held up elsewhere (a wallet row locked by another session, a SQLite lock)
   * must not hold up every account's reads, nor a reader polling its balance cut every commit interval short.
   */
  async settledFor(accountId: string, maxMs = 250): Promise<void> {
    const until = Date.now() + maxMs;
    const left = () => Math.max(0, until - Date.now());
    const mine = (f: Finish) => f.hold.accountId === accountId;
    if (this.finishes.some(mine) || this.committing.some(mine)) await within(this.drain(), left());
    // A charge the database refused waits for its retry (the first comes 100 ms after).
    while (this.retries.hasFor(accountId) && left() > 0) {
      await within(this.retries.runDue(), left());
      if (this.retries.hasFor(accountId)) await Bun.sleep(Math.min(10, left()));
    }
  }

  /**
   * On shutdown: no new floats; each goes back to the wallet once its calls are done and their charges written, within
   * `deadlineMs`. No wait is trusted to end in time (a database that stopped answering, a SQLite lock held
   * elsewhere): each is bounded, the last part of the deadline is kept for a last attempt at what the database
   * refused, and whatever is still not written by then is logged call by call for the operator, before server.ts's
   * own deadline exits the process. Floats left behind stay held until the sweeper returns them, as after a crash.
   */
  async close(deadlineMs = 10_000): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.askTimer);
    this.closing = true; // what finishes from now on (calls cut off at the end of the grace period) is not held back
    const until = Date.now() + deadlineMs;
    const logBy = until - Math.min(500, deadlineMs / 8);
    const lastTry = logBy - Math.min(1000, deadlineMs / 4);
    this.retries.stopBy(logBy);
    const waited = (p: Promise<unknown>, by: number) => within(p, Math.max(0, by - Date.now()));
    const unfinished = () => this.floats.size || this.retries.pending || this.finishes.length || this.committing.length;
    while (unfinished() && Date.now() < logBy) {
      this.retireIdle();
      this.schedule();
      const last = Date.now() >= lastTry;
      const by = last ? logBy : lastTry;
      if (!(await waited(this.drain(), by))) break;
      // Refused charges wait out their backoff while there is time; in the last part, each pass attempts them all.
      if (!(await waited(this.retries.runDue(last, by), by))) break;
      if (unfinished()) await Bun.sleep(20);
    }
    this.logUnwritten();
  }

  /** At shutdown, the calls whose charges are not known to be written: one line each, for the operator. */
  private logUnwritten() {
    const logged = new Set(this.retries.abandonAll().map((p) => p.finish)); // refused, not attempted again in time
    const log = (f: Finish, maybe: boolean) => {
      if (logged.has(f)) return;
      logged.add(f);
      this.ctx.log.error("llm ledger write abandoned at shutdown", {
        ...describeFinish(f),
        ...(maybe ? { may_have_been_written: true } : { never_attempted: true }),
      });
    };
    // In a commit or an attempt still under way: the operator checks for the usage record before charging by hand.
    for (const f of this.committing) log(f, true);
    for (const p of this.retries.attempting) if (p.finish) log(p.finish, true);
    for (const f of this.finishes) log(f, false);
    this.closed = true; // a commit still under way ends without retrying or logging again; nothing new is begun
  }

  /**
   * One ledger transaction of this process at a time: the group commit's or a retried piece's. On Postgres they run
   * on two connections, and a piece charging a float (its hold row, then the wallet) beside a commit growing it (the
   * wallet, then its hold row) deadlocked.
   */
  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    const mine = this.turn.then(run, run);
    this.turn = mine.catch(() => {});
    return mine;
  }

  private reserve(f: Float, amount: number, ref: string): Reservation {
    f.reserved += amount;
    f.lastAmount = amount;
    f.lastActive = Date.now();
    // No id of its own: the call's line in the ledger is its usage record, keyed by the request id (`ref`).
    return { id: ref, accountId: f.accountId, amount, float: f, finished: false };
  }

  private retire(f: Float) {
    f.closed = true;
    this.floats.delete(f.accountId);
    this.releases.push(f);
  }

  /** Retires every float no call is using and whose charges are all written; returns how many. */
  private retireIdle(): number {
    let n = 0;
    for (const f of this.floats.values()) {
      if (f.reserved !== 0 || f.unwritten !== 0) continue;
      this.retire(f);
      n++;
    }
    return n;
  }

  /** Every few ms: return idle floats, and keep the expiry of the others ahead of the sweeper. */
  private tend() {
    const now = Date.now();
    let queued = false;
    for (const f of this.floats.values()) {
      // Not while a charge of its calls is unwritten (queued, committing, or refused and retried): its hold covers it.
      if (f.reserved === 0 && f.unwritten === 0 && now - f.lastActive >= this.idleMs) {
        this.retire(f);
        queued = true;
      } else if (now - f.refreshedAt >= this.ttlMs / 3) {
        // Every float still here, not only one with a call in flight at this moment: calls that come and go between
        // two looks, all released (an upstream failing fast), keep it from going idle but charge nothing, which
        // would move its expiry; swept while still in use, it would go on lending credits its hold no longer holds.
        f.refreshedAt = now;
        this.refreshes.push(f);
        queued = true;
      }
    }
    if (queued) this.schedule();
    if (this.retries.pending) void this.retries.runDue();
  }

  /** Looks for other processes' asks on this process's floats (ledger/float-asks.ts); one look at a time. */
  private pollAsks() {
    if (this.polling || this.closing || !this.floats.size) return;
    this.polling = true;
    this.asks
      .asked(this.floats)
      .then((asked) => {
        for (const f of asked) {
          if (f.closed || f.asked) continue;
          f.asked = true;
          this.asks.makeLean(f.accountId);
          this.answers.push(f);
        }
        if (asked.length) this.schedule(true); // someone waits on the answer
      })
      // A database that does not answer: the commits report it; the next look tries again.
      .catch(() => {})
      .finally(() => (this.polling = false));
  }

  /** `now`: someone waits on the commit (a call for its float, a reader of the records): skip the interval. */
  private schedule(now = false) {
    if (this.running) {
      if (now) this.hurry?.();
      return;
    }
    // Only with something to commit: run() would return at once, and `running` be left set to its settled promise,
    // which would keep every later schedule() from starting a commit (close() schedules with nothing queued).
    if (this.queued()) this.running = this.run(now);
  }

  private queued(): boolean {
    return this.waiters.length > 0 || this.finishes.length > 0 || this.releases.length > 0 || this.refreshes.length > 0 || this.answers.length > 0;
  }

  private async run(now: boolean): Promise<void> {
    try {
      while (this.queued() && !this.closed) {
        await this.pause(now);
        if (this.closed) break; // close() has logged what was queued as never attempted
        now = false;
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

  /**
   * Before each commit: let the rest of this turn's requests join it, and unless someone waits on it (a call for
   * its float, a drain, shutdown) or a full batch is queued, those of the next LEDGER_COMMIT_INTERVAL_MS too. Also
   * between back-to-back commits, so that on Postgres, where calls keep finishing while a commit awaits the
   * network, batches stay as large; a backlog of full batches is committed back to back, as fast as it can be.
   */
  private pause(now: boolean): Promise<void> {
    const waitedOn = now || this.waiters.length > 0 || this.drains.length > 0 || this.finishes.length >= MAX_BATCH || this.closing;
    if (waitedOn || this.intervalMs === 0) return new Promise<void>((r) => setImmediate(r));
    return this.interval();
  }

  /** LEDGER_COMMIT_INTERVAL_MS, or less when schedule(true) hurries it (still after the rest of this turn). */
  private interval(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.hurry = null;
        resolve();
      }, this.intervalMs);
      this.hurry = () => {
        this.hurry = null;
        clearTimeout(timer);
        setImmediate(resolve);
      };
    });
  }

  /** Resolves the drain() calls whose commits have all ended. */
  private wake() {
    const ready = this.drains.filter((d) => d.until <= this.ended);
    this.drains = this.drains.filter((d) => d.until > this.ended);
    for (const d of ready) d.resolve();
  }

  private async commit(queued: Waiter[], finishes: Finish[]): Promise<void> {
    this.committing = finishes;
    try {
      await this.commitBatch(queued, finishes);
    } finally {
      this.committing = [];
    }
  }

  private async commitBatch(queued: Waiter[], finishes: Finish[]): Promise<void> {
    const ledger = this.ctx.ledger;
    const ttl = this.ttlMs;
    // Finishes since they queued may have freed enough: those are served now, the rest grow the float.
    const waiters = queued.filter((w) => !this.tryReserve(w));
    const growing = new Set(waiters.map((w) => w.accountId)); // their floats are grown; no top-up or trim beside (a lean one still trims)
    const lean = (accountId: string) => this.asks.isLean(accountId);
    const trimmed = trims(this.floats, growing, lean); // before growth reckons what the floats have free
    const resynced = resyncs(this.floats, finishes);
    // A float whose hold may hold more than its size (a failed commit's trim) answers only with its resync: cleared
    // before, the ask would tell the asker that spare room is back in the wallet while its hold still holds it.
    const answers = this.answers.splice(0).filter((f) => {
      if (f.closed) return false;
      if (!f.unsure || resynced.some((r) => r.float === f)) return true;
      f.asked = false; // found again by a later look, once its charges are written
      return false;
    });
    const batch: FloatBatch = {
      finishes: finishes.map((f): FloatFinish => ({ res: f.hold, charge: f.charge })),
      releases: this.releases.splice(0),
      refreshes: this.refreshes.splice(0),
      // No top-ups while closing: the floats are on their way back.
      grows: [...growsFor(this.floats, waiters, lean), ...(this.closing ? [] : refills(this.floats, growing, lean))],
      ...trimmed,
      resyncs: resynced,
      answers,
    };
    let outcomes: GrowOutcome[];
    let available: Map<string, number>;
    try {
      ({ outcomes, available } = await this.exclusive(() => this.ctx.db.tx((q) => batchIn(q, ledger, batch, finishes, ttl))));
    } catch (e) {
      for (const f of answers) f.asked = false; // not answered: the next look finds the ask again
      // Nothing of the batch was committed. Waiting calls fail; the rest is written one piece at a time, so that a
      // single bad one cannot keep the others from the ledger, and retried until the database takes it
      // (ledger-retries.ts). A refresh is asked for again by tend(); a top-up, at the next commit.
      // After shutdown logged its calls (logUnwritten), nothing is logged or retried on a database closing under it.
      if (!this.closed) this.ctx.log.error("llm ledger batch failed", { error: String(e), waiting: waiters.length, finishes: finishes.length });
      const unavailable = new ApiError(503, "ledger_unavailable", "The gateway could not reserve credits for this request just now; nothing was charged. Retry shortly.", {
        type: "service_unavailable",
      });
      for (const w of waiters) w.reject(unavailable);
      if (this.closed) return;
      for (const f of batch.refreshes) f.refreshedAt = 0; // asked for again at the tender's next look
      // Growth the database may have made unseen, and trims it may not have made: a float's hold may hold more
      // than its size. It goes on lending (its size never exceeds its hold) and its hold is set back to its size at
      // a later commit (resyncs). A new float's hold, if the commit made one, is given back by its id.
      for (const g of batch.grows) if (g.float) g.float.unsure = true;
      for (const t of batch.trims) t.float.unsure = true;
      const unseen = batch.grows.map((g) => Float.unseen(g.accountId, g.newHoldId)); // one piece for all of them
      if (unseen.length) await this.retries.attempt({ batch: { ...emptyBatch(), releases: unseen }, finish: null });
      for (const [i, f] of finishes.entries()) await this.retries.attempt({ batch: { ...emptyBatch(), finishes: [batch.finishes[i]!] }, finish: f });
      for (const r of batch.releases) await this.retries.attempt({ batch: { ...emptyBatch(), releases: [r] }, finish: null });
      return;
    }
    this.written(finishes);
    for (const f of answers) f.asked = false;
    for (const f of batch.releases) f.released = true;
    for (const r of batch.resyncs) r.float.unsure = false;
    for (const [account, amount] of available) {
      const f = this.floats.get(account);
      if (f) f.walletAvailable = amount;
    }
    for (const o of outcomes) this.settleGrowth(o, waiters.filter((w) => w.accountId === o.accountId));
  }

  /** Finishes now in the ledger: counted in the settled-credits metric, and no longer keeping their floats. */
  private written(finishes: Finish[]): void {
    let total = 0;
    for (const f of finishes) {
      if (f.charge) total += f.charge;
      f.hold.float.unwritten--;
    }
    metrics.creditsSettled(total, "llm");
  }

  private tryReserve(w: Waiter): boolean {
    const f = this.floats.get(w.accountId);
    if (!f || f.closed || f.free < w.amount) return false;
    w.resolve(this.reserve(f, w.amount, w.ref));
    return true;
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
    const short: Waiter[] = [];
    waiters.forEach((w, i) => {
      if (o.funded && !o.funded[i]) return short.push(w);
      if (this.tryReserve(w)) return;
      this.waiters.push(w); // someone took the growth first (possible while a Postgres commit is in flight): again
    });
    if (short.length) this.whenShort(o, short, f);
    if (this.waiters.length) this.schedule();
  }

  /**
   * Waiters the wallet could not cover. Other processes' floats may hold spare room on it: they are asked for it
   * (ledger/float-asks.ts) and the waiters tried again, until every float asked has answered (then what the wallet
   * has is what it truly has) or ASK_WAIT_MS has passed. Refused with what the wallet and this process's float
   * have: another process's spare room is back in the wallet by then, and what it still holds backs calls in flight.
   */
  private whenShort(o: GrowOutcome, waiters: Waiter[], f: Float | undefined) {
    const now = Date.now();
    const refuse = (w: Waiter) => w.reject(insufficient(w.amount, o.available + (f && !f.closed ? Math.max(0, f.free) : 0)));
    const again = (ws: Waiter[], ms: number) =>
      setTimeout(() => {
        if (this.closing) return ws.forEach(refuse);
        this.waiters.push(...ws);
        this.schedule(true);
      }, ms);
    if (this.closing) return waiters.forEach(refuse);
    if (o.peersToAnswer === null) {
      // Not asked yet. Tried again even when no other float was there to ask: one may have gone back meanwhile.
      for (const w of waiters) w.asked = now;
      const own = f && !f.closed ? f.holdId : "";
      void this.asks
        .ask(o.accountId, own)
        .catch((e) => this.ctx.log.warn("llm float ask failed", { account_id: o.accountId, error: String(e) }))
        .then(() => again(waiters, 0));
      return;
    }
    const waiting = o.peersToAnswer > 0 ? waiters.filter((w) => now - (w.asked ?? now) < ASK_WAIT_MS) : [];
    for (const w of waiters) if (!waiting.includes(w)) refuse(w);
    for (const w of waiting) w.asked ??= now;
    if (waiting.length) again(waiting, ASK_RETRY_MS);
  }
}

const emptyBatch = (): FloatBatch => ({ finishes: [], releases: [], refreshes: [], grows: [], trims: [], resyncs: [], observe: new Set(), answers: [] });
