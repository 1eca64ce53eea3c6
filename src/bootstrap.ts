import { Accounts } from "./accounts/service";
import { loadCatalog } from "./catalog/service";
import type { Config } from "./config";
import type { AppContext } from "./context";
import { openDatabase } from "./db/client";
import { Ledger } from "./ledger/service";
import { MemoryRateLimiter, RedisRateLimiter } from "./limits/rate-limit";
import { connectRedis } from "./limits/redis";
import { MemoryTaskTokens, RedisTaskTokens } from "./limits/task-tokens";
import { createLogger, type Logger } from "./log";

/** Opens the database (applying migrations), Redis when configured, and builds the services. */
export async function createContext(config: Config, log: Logger = createLogger(config.logLevel)): Promise<AppContext> {
  const catalog = loadCatalog(config.catalogPath);
  const db = await openDatabase(config.databaseUrl, { backgroundCheckpoints: { onError: (message) => log.error("sqlite checkpoints", { error: message }) } });
  const ledger = new Ledger(db);
  const accounts = new Accounts(db, ledger);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  const limiter = redis ? new RedisRateLimiter(redis) : new MemoryRateLimiter();
  const taskTokens = redis ? new RedisTaskTokens(redis) : new MemoryTaskTokens();
  return { config, db, ledger, accounts, limiter, taskTokens, catalog, log, redis, beforeClose: [] };
}

export async function closeContext(ctx: AppContext) {
  for (const f of ctx.beforeClose.splice(0)) await f();
  ctx.redis?.close();
  await ctx.db.close();
}
