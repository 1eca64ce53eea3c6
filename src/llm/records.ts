// The usage record of one LLM call, and what to do with its reservation. Committed in groups by ledger/llm-ledger.ts.
// The record is also the call's line in the ledger (db/tables.ts): its id is the call's request id, `held` what the
// call reserved, `cost` what it was charged, `entry_id` the wallet's usage entry of the batch that charged it.

import { type SQL, sql } from "drizzle-orm";
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
// The columns of a record, in the order recordValues gives their values.
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
/** Records per multi-row insert: a batch's records go this many to a statement, the rest one by one. */
export const RECORDS_PER_INSERT = 32;
const insertOf = (rows: number) => {
  const row = sql`(${sql.join(
    COLUMNS.map((c) => p(c)),
    sql`, `,
  )})`;
  const values = sql.join(new Array<SQL>(rows).fill(row), sql`, `);
  return sql`insert into usage_records (${sql.raw(COLUMNS.join(", "))}) values ${values}`;
};
/** Compiled once (db/client.ts): they run for every LLM call; values given in order (recordValues). */
const INSERT_RECORD = insertOf(1);
const INSERT_RECORDS = insertOf(RECORDS_PER_INSERT);

/** Appends one record's values to `out`, in COLUMNS' order. `entries`: the usage entry of each wallet charged. */
function recordValues(out: unknown[], end: Finish, entries: ReadonlyMap<string, string>): void {
  const record = end.record;
  const usage = record.usage;
  out.push(
    record.requestId, // id
    record.requestId,
    record.accountId,
    record.keyId,
    record.model,
    record.endpoint,
    record.provider,
    record.status,
    record.upstreamStatus,
    usage?.input ?? 0,
    usage?.output ?? 0,
    usage?.cacheRead ?? 0,
    usage?.cacheWrite ?? 0,
    usage?.cacheWrite1h ?? 0,
    usage?.webSearches ?? 0,
    record.cost,
    end.hold.amount, // held
    end.charge ? entries.get(end.hold.accountId)! : null, // entry_id
    record.latencyMs,
    record.ttfbMs,
    record.error && storableText(record.error),
    record.endedAt ?? Date.now(), // created_at
  );
}

/**
 * The calls' lines, in the ledger's group commit transaction (ledger/llm-ledger.ts), after the floats' writes. One
 * statement per RECORDS_PER_INSERT records costs SQLite less per row than a statement each; the remainder goes one
 * by one, so only two statements are ever prepared. A record already written fails its statement, and with it the
 * transaction, as it would alone.
 */
export function* insertRecordsIn(q: TxQueries, ends: Finish[], entries: ReadonlyMap<string, string>) {
  let i = 0;
  for (; i + RECORDS_PER_INSERT <= ends.length; i += RECORDS_PER_INSERT) {
    const values: unknown[] = [];
    for (let j = i; j < i + RECORDS_PER_INSERT; j++) recordValues(values, ends[j]!, entries);
    yield* q.run(INSERT_RECORDS, values);
  }
  for (; i < ends.length; i++) {
    const values: unknown[] = [];
    recordValues(values, ends[i]!, entries);
    yield* q.run(INSERT_RECORD, values);
  }
}
