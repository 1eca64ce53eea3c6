// The usage record of one LLM call, and what to do with its reservation. Committed in groups by ledger/llm-ledger.ts.
// The record is also the call's line in the ledger (db/tables.ts): its id is the call's request id, `held` what the
// call reserved, `cost` what it was charged, `entry_id` the wallet's usage entry of the batch that charged it.

import { sql } from "drizzle-orm";
import { storableText, type TxQueries } from "../db/client.ts";
import type { Reservation } from "../ledger/float.ts";
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
  /** when the call ended (Unix ms): the record's created_at, not when a later commit wrote it */
  endedAt?: number;
}

export interface Finish {
  hold: Reservation;
  /** µcr to post; null voids the hold */
  charge: number | null;
  record: UsageRecord;
}

const p = sql.placeholder;
const COLUMNS = ["id", "request_id", "account_id", "key_id", "model", "endpoint", "provider", "status", "upstream_status", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "web_search_calls", "cost", "held", "entry_id", "latency_ms", "ttfb_ms", "error", "created_at"];
/** Compiled once (db/client.ts): it runs for every LLM call. */
const INSERT_RECORD = sql`insert into usage_records (${sql.raw(COLUMNS.join(", "))}) values (${sql.join(COLUMNS.map((c) => p(c)), sql`, `)})`;

/** `entries`: the usage entry of each wallet the batch charged (ledger/float-writes.ts). */
function* insertRecord(q: TxQueries, f: Finish, entries: ReadonlyMap<string, string>) {
  const r = f.record;
  const u = r.usage;
  yield* q.run(INSERT_RECORD, {
    id: r.requestId, held: f.hold.amount, entry_id: f.charge ? entries.get(f.hold.accountId)! : null, request_id: r.requestId, account_id: r.accountId, key_id: r.keyId, model: r.model, endpoint: r.endpoint, provider: r.provider,
    status: r.status, upstream_status: r.upstreamStatus, input_tokens: u?.input ?? 0, output_tokens: u?.output ?? 0, cache_read_tokens: u?.cacheRead ?? 0,
    cache_write_tokens: u?.cacheWrite ?? 0, cache_write_1h_tokens: u?.cacheWrite1h ?? 0, web_search_calls: u?.webSearches ?? 0, cost: r.cost, latency_ms: r.latencyMs, ttfb_ms: r.ttfbMs, error: r.error && storableText(r.error), created_at: r.endedAt ?? Date.now(),
  });
}

/** The calls' lines, in the ledger's group commit transaction (ledger/llm-ledger.ts), after the floats' writes. */
export function* insertRecordsIn(q: TxQueries, finishes: Finish[], entries: ReadonlyMap<string, string>) {
  for (const f of finishes) yield* insertRecord(q, f, entries);
}
