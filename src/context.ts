import type { Accounts } from "./accounts/service";
import type { Catalog } from "./catalog/service";
import type { Config } from "./config";
import type { Db } from "./db/client";
import type { LlmLedger } from "./ledger/llm-ledger";
import type { Ledger } from "./ledger/service";
import type { RateLimiter } from "./limits/rate-limit";
import type { RedisConnection } from "./limits/redis-connection";
import type { TaskTokens } from "./limits/task-tokens";
import type { Finish } from "./llm/records";
import type { Logger } from "./log";

/** The services every feature module is built from; assembled once in main.ts (or a test) and passed down. */
export interface AppContext {
  config: Config;
  db: Db;
  ledger: Ledger;
  accounts: Accounts;
  limiter: RateLimiter;
  /** Concurrency tokens of running media tasks (per key). */
  taskTokens: TaskTokens;
  catalog: Catalog;
  log: Logger;
  /** Set when REDIS_URL is: the self-healing link every Redis user goes through (limits/redis-connection.ts). */
  redis?: RedisConnection;
  /** Work to finish before the database closes (the LLM floats go back to their wallets). */
  beforeClose: Array<() => Promise<void> | void>;
  /**
   * This process's LLM ledger (ledger/llm-ledger.ts). Ended calls' charges and usage records are written in batches
   * (every LEDGER_COMMIT_INTERVAL_MS): a page or API that reads an account's records or balance waits for that
   * account's (committedFor, bounded), so a call just answered is in what it shows. Its floats are credits reserved
   * ahead for a wallet's next calls; a hold that does not fit beside one gets an idle one back first
   * (withIdleFloatBack), rather than refuse credits the wallet has.
   */
  llmLedger: LlmLedger<Finish>;
  /** The wall clock time-of-day prices are read by (catalog/peak.ts); absent: Date.now. Tests set it. */
  clock?: () => number;
  /** This process's key budgets on the LLM path (set by the LLM routes; accounts/key-budgets.ts). */
  keyBudgets?: { committedFor(keyId: string): Promise<void> };
}
