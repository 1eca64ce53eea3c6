// Group commit for LLM holds. The commit, not the statements, is what a hold costs on SQLite (the profile showed
// BEGIN/COMMIT at about a quarter of the CPU under load), so the holds requested in one event-loop turn are taken
// in one transaction, each with the ledger's own guarded step, and every request waits for that commit before it
// goes upstream. Nothing is weakened: each hold is still the conditional `held += x where available >= x`, in
// order, inside a committed transaction; a refused hold (402) refuses only its own request.

import type { AppContext } from "../context.ts";
import type { Hold } from "../ledger/service.ts";

interface Pending {
  accountId: string;
  amount: number;
  ref: string;
  ttlMs: number;
  resolve(h: Hold): void;
  reject(e: unknown): void;
}

const MAX_BATCH = 256;

export class HoldBatcher {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private ctx: AppContext) {}

  hold(accountId: string, amount: number, ref: string, ttlMs: number): Promise<Hold> {
    return new Promise<Hold>((resolve, reject) => {
      this.queue.push({ accountId, amount, ref, ttlMs, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const ledger = this.ctx.ledger;
      const outcomes: Array<{ hold?: Hold; error?: unknown }> = [];
      try {
        await this.ctx.db.tx(function* (q) {
          for (const p of batch) {
            // A refusal is thrown by holdIn after a guarded UPDATE that changed nothing: catching it here leaves
            // the transaction clean for the others.
            try {
              outcomes.push({ hold: yield* ledger.holdIn(q, p.accountId, p.amount, "llm", p.ref, p.ttlMs) });
            } catch (error) {
              outcomes.push({ error });
            }
          }
        });
      } catch (e) {
        // The transaction itself failed (database error): nothing in it was committed; every request fails.
        for (const p of batch) p.reject(e);
        continue;
      }
      batch.forEach((p, i) => (outcomes[i]!.error !== undefined ? p.reject(outcomes[i]!.error) : p.resolve(outcomes[i]!.hold!)));
    }
  }
}
