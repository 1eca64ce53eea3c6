// Group commit for the LLM path's ledger work. The commit, not the statements, is most of what a hold or a
// settle costs on SQLite (profiled under load: BEGIN/COMMIT was the largest single item), so everything the LLM
// routes ask of the ledger in one event-loop turn — new holds, and settles/releases with their usage records —
// goes into ONE transaction (Ledger.batchIn: the ledger's own guarded steps, `held += x where available >= x` and
// `where status = 'pending'`, exactly once, with one wallet update per account), committed before anyone relies
// on it: a request goes upstream only after its hold's commit. A refused hold (402) refuses only its own request.
// A crash loses at most the finishes of one turn; their holds stay pending and the sweeper releases them
// (HOLD_TTL_SECONDS), so a customer is never overcharged.

import type { AppContext } from "../context.ts";
import type { BatchOutcome, Hold } from "../ledger/service.ts";
import { insertRecord, type Finish } from "./records.ts";

interface PendingHold {
  accountId: string;
  amount: number;
  ref: string;
  ttlMs: number;
  resolve(h: Hold): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 512;

export class LedgerBatch {
  private holds: PendingHold[] = [];
  private finishes: Finish[] = [];
  private running: Promise<void> | null = null;

  constructor(private ctx: AppContext) {}

  /** Reserve `amount` for an LLM call; resolves once committed, rejects with the ledger's 402 when short. */
  hold(accountId: string, amount: number, ref: string, ttlMs: number): Promise<Hold> {
    return new Promise<Hold>((resolve, reject) => {
      this.holds.push({ accountId, amount, ref, ttlMs, resolve, reject });
      this.schedule();
    });
  }

  /** Settle or release a hold and write its usage record (fire and forget; see drain). */
  finish(f: Finish): void {
    this.finishes.push(f);
    this.schedule();
  }

  /** Resolves once everything queued so far is committed (GET /v1/usage reads after it). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private schedule() {
    if (!this.running) this.running = this.run();
  }

  private async run(): Promise<void> {
    // Let the rest of this turn's requests join the batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.holds.length || this.finishes.length) {
        const holds = this.holds.splice(0, MAX_BATCH);
        const finishes = this.finishes.splice(0, MAX_BATCH);
        await this.commit(holds, finishes);
      }
    } finally {
      this.running = null;
    }
  }

  private async commit(holds: PendingHold[], finishes: Finish[]): Promise<void> {
    const ledger = this.ctx.ledger;
    let outcome: BatchOutcome;
    try {
      outcome = await this.ctx.db.tx(function* (q) {
        const out = yield* ledger.batchIn(q, "llm", finishes.map((f) => ({ hold: f.hold, charge: f.charge, reason: "llm usage" })), holds);
        for (const f of finishes) yield* insertRecord(q, f.record);
        return out;
      });
    } catch (e) {
      // The database failed; nothing of the batch was committed. Holds fail their requests; finishes are
      // retried one by one so a single bad one cannot keep the others from the ledger.
      for (const p of holds) p.reject(e);
      this.ctx.log.error("llm ledger batch failed", { error: String(e), holds: holds.length, finishes: finishes.length });
      for (const f of finishes) {
        await this.ctx.db
          .tx(function* (q) {
            if (f.charge === null) yield* ledger.releaseIn(q, f.hold.id);
            else yield* ledger.settleIn(q, f.hold.id, f.charge, "llm usage");
            yield* insertRecord(q, f.record);
          })
          .catch((err) => this.ctx.log.error("llm finalize failed", { hold: f.hold.id, request_id: f.record.requestId, error: String(err) }));
      }
      return;
    }
    holds.forEach((p, i) => {
      const o = outcome.holds[i]!;
      if ("hold" in o) p.resolve(o.hold);
      else p.reject(o.error);
    });
  }
}
