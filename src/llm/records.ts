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
/**
 * Records per insert: as many of the largest as fit, then the next size for the rest, so a commit of n records runs
 * at most n / 32 + 5 statements (on Postgres each one is a round trip).
 */
export const RECORDS_PER_INSERT = [32, 16, 8, 4, 2, 1];
const insertOf = (rows: number) => {
  const row = sql`(${sql.join(
    COLUMNS.map((c) => p(c)),
    sql`, `,
  )})`;
  const values = sql.join(new Array<SQL>(rows).fill(row), sql`, `);
  return sql`insert into usage_records (${sql.raw(COLUMNS.join(", "))}) values ${values}`;
};
/** Compiled once (db/client.ts): they run for every LLM call; values given in order (recordValues). */
const INSERTS = RECORDS_PER_INSERT.map((rows) => ({ rows, statement: insertOf(rows) }));

/**
 * Writes one record's values into `out` from `at`, in COLUMNS' order; returns where the next record's go. By index
 * into an array of the statement's size, which is cheaper than pushing 22 values at a time. `entries`: the usage
 * entry of each wallet charged.
 */
function recordValues(out: unknown[], at: number, end: Finish, entries: ReadonlyMap<string, string>): number {
  const record = end.record;
  const usage = record.usage;
  out[at++] = record.requestId; // id
  out[at++] = record.requestId;
  out[at++] = record.accountId;
  out[at++] = record.keyId;
  out[at++] = record.model;
  out[at++] = record.endpoint;
  out[at++] = record.provider;
  out[at++] = record.status;
  out[at++] = record.upstreamStatus;
  out[at++] = usage?.input ?? 0;
  out[at++] = usage?.output ?? 0;
  out[at++] = usage?.cacheRead ?? 0;
  out[at++] = usage?.cacheWrite ?? 0;
  out[at++] = usage?.cacheWrite1h ?? 0;
  out[at++] = usage?.webSearches ?? 0;
  out[at++] = record.cost;
  out[at++] = end.hold.amount; // held
  out[at++] = end.charge ? entries.get(end.hold.accountId)! : null; // entry_id
  out[at++] = record.latencyMs;
  out[at++] = record.ttfbMs;
  out[at++] = record.error && storableText(record.error);
  out[at++] = record.endedAt ?? Date.now(); // created_at
  return at;
}

/**
 * The calls' lines, in the ledger's group commit transaction (ledger/llm-ledger.ts), after the floats' writes, a
 * multi-row insert at a time (RECORDS_PER_INSERT): on Postgres each statement is a round trip (SQLite costs about
 * the same either way). A record already written fails its statement, and with it the transaction, as it would alone.
 */
export function* insertRecordsIn(q: TxQueries, ends: Finish[], entries: ReadonlyMap<string, string>) {
  let i = 0;
  for (const { rows, statement } of INSERTS) {
    for (; i + rows <= ends.length; i += rows) {
      const values = new Array<unknown>(rows * COLUMNS.length);
      for (let j = i, at = 0; j < i + rows; j++) at = recordValues(values, at, ends[j]!, entries);
      yield* q.run(statement, values);
    }
  }
}
