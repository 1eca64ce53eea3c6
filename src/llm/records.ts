// The usage record of one LLM call, and what to do with its hold. Committed in groups by ledger-batch.ts.

import { sql } from "drizzle-orm";
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

export function* insertRecord(q: TxQueries, r: UsageRecord) {
  const u = r.usage;
  yield* q.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, upstream_status,
      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, latency_ms, ttfb_ms, error, created_at)
    values (${newId("use")}, ${r.requestId}, ${r.accountId}, ${r.keyId}, ${r.model}, ${r.endpoint}, ${r.provider}, ${r.status}, ${r.upstreamStatus},
      ${u?.input ?? 0}, ${u?.output ?? 0}, ${u?.cacheRead ?? 0}, ${u?.cacheWrite ?? 0}, ${r.cost}, ${r.latencyMs}, ${r.ttfbMs}, ${r.error}, ${Date.now()})`);
}
