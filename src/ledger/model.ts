// What the LLM path's ledger (llm-ledger.ts) is built from: the settings it reads and its narrow dependencies.

import type { Config } from "../config";
import type { Db, Step, TxQueries } from "../db/client";
import type { Logger } from "../log";
import type { CallEnd } from "./float";
import type { Ledger } from "./service";

export interface LlmLedgerSettings {
  /** a float hold's lifetime, kept ahead while it is in use (HOLD_TTL_SECONDS) */
  holdTtlMs: number;
  /** LEDGER_FLOAT_IDLE_MS */
  floatIdleMs: number;
  /** LEDGER_COMMIT_INTERVAL_MS */
  commitIntervalMs: number;
}

export const llmLedgerSettingsOf = (
  config: Pick<Config, "holdTtlSeconds" | "floatIdleMs" | "ledgerCommitIntervalMs">,
): LlmLedgerSettings => ({
  holdTtlMs: config.holdTtlSeconds * 1000,
  floatIdleMs: config.floatIdleMs,
  commitIntervalMs: config.ledgerCommitIntervalMs,
});

export interface LlmLedgerDeps<E extends CallEnd> {
  db: Pick<Db, "tx" | "run" | "all" | "get">;
  ledger: Pick<Ledger, "voidIn">;
  log: Logger;
  settings: LlmLedgerSettings;
  /** writes the calls' lines (their usage records) in the commit's transaction, naming their wallet's usage entry */
  writeLines(q: TxQueries, ends: E[], entries: ReadonlyMap<string, string>): Generator<Step, void, any>;
  clock?: () => number;
}
