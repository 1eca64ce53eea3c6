import type { Db } from "../../src/db/client";
import { LlmLedger } from "../../src/ledger/llm-ledger";
import type { LlmLedgerSettings } from "../../src/ledger/model";
import type { Reservation } from "../../src/ledger/float";
import type { Ledger } from "../../src/ledger/service";
import { insertRecordsIn, type Finish, type UsageRecord } from "../../src/llm/records";
import { silentLogger, type Logger } from "../../src/log";
import { closeBatches, useLedgerDatabase, type LedgerDatabase } from "./services";

/** A process's LLM ledger over `db` as bootstrap builds it, with the settings a test states (long idle, 10 ms commits). */
export function newLlmLedger(
  db: Pick<Db, "tx" | "run" | "all" | "get">,
  ledger: Pick<Ledger, "voidIn">,
  settings: Partial<LlmLedgerSettings> = {},
  log: Logger = silentLogger,
): LlmLedger<Finish> {
  return new LlmLedger<Finish>({
    db,
    ledger,
    log,
    settings: { holdTtlMs: 900_000, floatIdleMs: 60_000, commitIntervalMs: 10, ...settings },
    writeLines: insertRecordsIn,
  });
}

/** A call's reservation taken on the free path (from the float, in memory): the test fails when it would wait. */
export function fromFloat(
  ledger: LlmLedger<Finish>,
  accountId: string,
  amount: number,
  ref: string,
): Promise<Reservation> {
  if (!ledger.isFreePath(accountId, amount)) throw new Error(`the float should cover ${amount} µcr on ${accountId}`);
  return ledger.hold(accountId, amount, ref);
}

/** A plain successful call's usage record charged `cost` µcr, as the ledger tests post them; `fields` override. */
export function usageRecord(
  accountId: string,
  requestId: string,
  cost: number,
  fields: Partial<UsageRecord> = {},
): UsageRecord {
  return {
    requestId,
    accountId,
    keyId: "key_t",
    model: "m",
    endpoint: "/v1/chat/completions",
    provider: "openai",
    status: "ok",
    upstreamStatus: 200,
    usage: null,
    cost,
    latencyMs: 1,
    ttfbMs: 1,
    error: null,
    ...fields,
  };
}

/**
 * useLedgerDatabase for a block that runs LLM ledgers: those pushed onto the returned list are closed (their last
 * commits need the database) before the database is dropped.
 */
export function useLlmLedgerDatabase(name: "sqlite" | "pg", use: (t: LedgerDatabase) => void): LlmLedger<Finish>[] {
  const batches: LlmLedger<Finish>[] = [];
  useLedgerDatabase(name, use, () => closeBatches(batches));
  return batches;
}
