// The usage record of one LLM call, and what to do with its reservation. Committed in groups by ledger/llm-ledger.ts.
// The record is also the call's line in the ledger (db/tables.ts): its id is the call's request id, `held` what the
// call reserved, `cost` what it was charged, `entry_id` the wallet's usage entry of the batch that charged it.

import { sql } from "drizzle-orm";
import { storableText, type TxQueries } from "../db/client";
import type { Reservation } from "../ledger/float";
import type { TokenUsage } from "./usage";

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
const COLUMNS = [
  "id",
  "request_id",
  "account_id",
  "key_id",
  "model",
  "endpoint",
  "provider",
  "status",
  "upstream_status",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cache_write_1h_tokens",
  "web_search_calls",
  "cost",
  "held",
  "entry_id",
  "latency_ms",
  "ttfb_ms",
  "error",
  "created_at",
];
/** Compiled once (db/client.ts): it runs for every LLM call. */
const INSERT_RECORD = sql`insert into usage_records (${sql.raw(COLUMNS.join(", "))}) values (${sql.join(
  COLUMNS.map((c) => p(c)),
  sql`, `,
)})`;

/** `entries`: the usage entry of each wallet the batch charged (ledger/float-writes.ts). */
function* insertRecord(q: TxQueries, end: Finish, entries: ReadonlyMap<string, string>) {
  const record = end.record;
  const usage = record.usage;
  yield* q.run(INSERT_RECORD, {
    id: record.requestId,
    held: end.hold.amount,
    entry_id: end.charge ? entries.get(end.hold.accountId)! : null,
    request_id: record.requestId,
    account_id: record.accountId,
    key_id: record.keyId,
    model: record.model,
    endpoint: record.endpoint,
    provider: record.provider,
    status: record.status,
    upstream_status: record.upstreamStatus,
    input_tokens: usage?.input ?? 0,
    output_tokens: usage?.output ?? 0,
    cache_read_tokens: usage?.cacheRead ?? 0,
    cache_write_tokens: usage?.cacheWrite ?? 0,
    cache_write_1h_tokens: usage?.cacheWrite1h ?? 0,
    web_search_calls: usage?.webSearches ?? 0,
    cost: record.cost,
    latency_ms: record.latencyMs,
    ttfb_ms: record.ttfbMs,
    error: record.error && storableText(record.error),
    created_at: record.endedAt ?? Date.now(),
  });
}

/** The calls' lines, in the ledger's group commit transaction (ledger/llm-ledger.ts), after the floats' writes. */
export function* insertRecordsIn(q: TxQueries, ends: Finish[], entries: ReadonlyMap<string, string>) {
  for (const end of ends) yield* insertRecord(q, end, entries);
}
