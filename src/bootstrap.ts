import { SecretBox } from "./accounts/secret-box";
import { Accounts } from "./accounts/service";
import { loadCatalog } from "./catalog-loader";
import { utcDay } from "./catalog/lifecycle";
import { HOLIDAY_NOTICE_DAYS, holidayListsEnding } from "./catalog/peak";
import { ConfigError, type Config } from "./config";
import type { AppContext } from "./context";
import { openDatabase } from "./db/client";
import { LlmLedger } from "./ledger/llm-ledger";
import { llmLedgerSettingsOf } from "./ledger/model";
import { Ledger } from "./ledger/service";
import { MemoryRateLimiter, RedisRateLimiter } from "./limits/rate-limit";
import { connectRedis } from "./limits/redis";
import { MemoryTaskTokens, RedisTaskTokens } from "./limits/task-tokens";
import { insertRecordsIn } from "./llm/records";
import { createLogger, type Logger } from "./log";
import { LEDGER_CLOSE_MS } from "./ops/shutdown";

/**
 * Opens the database (applying migrations), Redis when configured, and builds the services. `redis: false` leaves
 * Redis out whatever REDIS_URL says (the CLI: it neither limits requests nor runs tasks, and must work while Redis
 * is down); the limits are then the in-process ones. `poolSize`: Postgres connections, DATABASE_POOL_SIZE by default.
 */
export async function createContext(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  opts: { redis?: boolean; poolSize?: number } = {},
): Promise<AppContext> {
  const catalog = loadCatalog(config.catalogPath, config.catalogDay);
  for (const ending of holidayListsEnding(catalog.llmList, utcDay(catalog.now())))
    log.warn(
      ending.days_left < 0
        ? "a time-of-day price schedule's holiday list has ended: weekday holidays bill at the peak price"
        : `a time-of-day price schedule's holiday list ends within ${HOLIDAY_NOTICE_DAYS} days: list the next year's holidays (pricing.peak.holidays, CATALOG_PATH)`,
      ending,
    );
  const db = await openDatabase(config.databaseUrl, {
    poolSize: opts.poolSize ?? config.databasePoolSize,
    backgroundCheckpoints: { onError: (message) => log.error("sqlite checkpoints", { error: message }) },
  });
  const ledger = new Ledger(db);
  const accounts = new Accounts(db, ledger, await SecretBox.fromSetting(config.secretsKey));
  const unknown = await accounts.unknownSealingKeys();
  if (unknown.length) {
    await db.close();
    // Started anyway, every callback of those accounts would go out unsigned or not at all.
    throw new ConfigError(
      `SECRETS_KEY does not hold the key(s) ${unknown.join(", ")} that sealed stored webhook signing keys: list them after the new key (SECRETS_KEY=new,old)`,
    );
  }
  // Never fails: a gateway started while Redis is down serves, and picks Redis up when it comes (limits/redis.ts).
  const redis = config.redisUrl && opts.redis !== false ? await connectRedis(config.redisUrl, log) : undefined;
  const limiter = redis ? new RedisRateLimiter(redis, { log }) : new MemoryRateLimiter();
  const taskTokens = redis ? new RedisTaskTokens(redis) : new MemoryTaskTokens();
  const llmLedger = new LlmLedger({
    db,
    ledger,
    log,
    settings: llmLedgerSettingsOf(config),
    writeLines: insertRecordsIn,
  });
  return {
    config,
    db,
    ledger,
    accounts,
    limiter,
    taskTokens,
    catalog,
    log,
    redis,
    llmLedger,
    beforeClose: [() => llmLedger.close(LEDGER_CLOSE_MS)],
  };
}

/**
 * Finishes what the services hold in memory (beforeClose: the LLM ledger commits its queued charges and gives its
 * floats back) and closes Redis and the database. The server bounds it with a deadline (server.ts): what was not
 * committed then is what a crash leaves (ledger/float.ts): floats stay held until they expire, calls are not charged.
 */
export function closeContext(ctx: AppContext): Promise<void> {
  // Once: a second caller (a signal during a failed start's close) waits for the first, rather than closing the
  // database under the ledger's own close.
  let closing = closings.get(ctx);
  if (!closing) {
    closing = (async () => {
      try {
        for (const f of ctx.beforeClose.splice(0)) await f();
      } finally {
        // Even when a step failed: Redis and the database are closed all the same (the failure is still reported).
        ctx.redis?.close();
        await ctx.db.close();
      }
    })();
    closings.set(ctx, closing);
  }
  return closing;
}
const closings = new WeakMap<AppContext, Promise<void>>();
