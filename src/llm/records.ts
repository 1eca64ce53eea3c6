// After an answer: settle or release the hold and write the usage record, off the response path.
//
// Finished requests queue here and are committed in groups (one transaction for everything that finished in the
// same event-loop turn): the ledger keeps its guarantees (each settle/release is the ledger's own guarded step,
// exactly once), the database sees a fraction of the commits. A crash loses at most the queue of one turn; those
// holds stay pending and the sweeper releases them (HOLD_TTL_SECONDS), so the customer is never overcharged.

import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { newId } from "../db/ids.ts";
import type { TxQueries } from "../db/client.ts";
import type { TokenUsage } from "./usage.ts";

export interface UsageRecord {
  requestId: string;
  accountId: string;
  keyId: string;
  model: string;
  endpoint: string;
  provider: string;
  status: string;
  upstreamStatus: number | null;
  usage: TokenUsage | null;
  cost: number;
  latencyMs: number | null;
  ttfbMs: number | null;
  error: string | null;
}

export interface Finish {
  holdId: string;
  /** µcr to post; null voids the hold */
  charge: number | null;
  record: UsageRecord;
}

const BATCH = 256;

export class Finalizer {
  private queue: Finish[] = [];
  private running: Promise<void> | null = null;

  constructor(private ctx: AppContext) {}

  push(f: Finish): void {
    this.queue.push(f);
    if (!this.running) this.running = this.run();
  }

  /** Resolves once everything queued so far is committed (GET /v1/usage and tests read after it). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    // Let the rest of this turn's finished requests join the batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, BATCH);
        try {
          await this.commit(batch);
        } catch (e) {
          // One bad item must not take the others with it: retry them one by one.
          this.ctx.log.error("llm finalize batch failed; retrying singly", { error: String(e), size: batch.length });
          for (const f of batch) await this.commit([f]).catch((err) => this.ctx.log.error("llm finalize failed", { hold: f.holdId, request_id: f.record.requestId, error: String(err) }));
        }
      }
    } finally {
      this.running = null;
    }
  }

  private commit(batch: Finish[]): Promise<void> {
    const ledger = this.ctx.ledger;
    return this.ctx.db.tx(function* (q) {
      for (const f of batch) {
        if (f.charge === null) yield* ledger.releaseIn(q, f.holdId);
        else yield* ledger.settleIn(q, f.holdId, f.charge, "llm usage");
        yield* insertRecord(q, f.record);
      }
    });
  }
}

export function* insertRecord(q: TxQueries, r: UsageRecord) {
  const u = r.usage;
  yield* q.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, upstream_status,
      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, latency_ms, ttfb_ms, error, created_at)
    values (${newId("use")}, ${r.requestId}, ${r.accountId}, ${r.keyId}, ${r.model}, ${r.endpoint}, ${r.provider}, ${r.status}, ${r.upstreamStatus},
      ${u?.input ?? 0}, ${u?.output ?? 0}, ${u?.cacheRead ?? 0}, ${u?.cacheWrite ?? 0}, ${r.cost}, ${r.latencyMs}, ${r.ttfbMs}, ${r.error}, ${Date.now()})`);
}
