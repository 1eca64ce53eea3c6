// The media engine of one Bun Worker (worker.ts), loaded only once there is media work (pending-work.ts): its own
// database connection, the ledger, accounts (webhook signing keys), the catalog, storage, Redis when configured, and
// the engine. With in-process concurrency tokens the tokens live on the main thread, so token
// changes are sent there as messages.
import { SecretBox } from "../accounts/secret-box";
import { Accounts } from "../accounts/service";
import { loadCatalog } from "../catalog-loader";
import { openDatabase } from "../db/client";
import { Ledger } from "../ledger/service";
import { connectRedis } from "../limits/redis";
import { RedisTaskTokens, type TaskTokens } from "../limits/task-tokens";
import type { Logger } from "../log";
import { Engine } from "./engine";
import { postingMetrics } from "./metrics";
import type { MediaSettings } from "./settings";
import { createStorage } from "./storage";
import type { FromWorker } from "./worker";

/** Tokens held by the main thread: this worker only ever refreshes and releases them. */
class ParentTaskTokens implements TaskTokens {
  constructor(private post: (m: FromWorker) => void) {}
  async acquire(): Promise<never> {
    throw new Error("tokens are acquired on the main thread");
  }
  async refresh(keyId: string, taskId: string, ttlMs: number) {
    this.post({ type: "tokens", op: "refresh", keyId, taskId, ttlMs });
  }
  async release(keyId: string, taskId: string) {
    this.post({ type: "tokens", op: "release", keyId, taskId, ttlMs: 0 });
  }
  async holders(): Promise<never[]> {
    return [];
  }
  async count(): Promise<number> {
    return 0;
  }
}

/** Starts the engine; the returned stop lets its steps in progress finish and closes Redis and the database. */
export async function startEngine(deps: {
  log: Logger;
  settings: MediaSettings;
  owner: string;
  post: (m: FromWorker) => void;
}): Promise<() => Promise<void>> {
  const { log, settings, post } = deps;
  // A small pool: every gateway process runs MEDIA_WORKERS of these next to its own pool of 20.
  const db = await openDatabase(settings.databaseUrl, { poolSize: 4 });
  let secrets: SecretBox;
  try {
    secrets = await SecretBox.fromSetting(settings.secretsKey);
  } catch (e) {
    await db.close(); // the worker tries again later, with a connection of its own again
    throw e;
  }
  const ledger = new Ledger(db);
  const accounts = new Accounts(db, ledger, secrets);
  const redis = settings.redisUrl ? await connectRedis(settings.redisUrl) : undefined;
  const engine = new Engine({
    db,
    ledger,
    log,
    owner: deps.owner,
    settings,
    catalog: loadCatalog(settings.catalogPath),
    storage: createStorage(settings.storage),
    tokens: redis ? new RedisTaskTokens(redis) : new ParentTaskTokens(post),
    webhookSecret: (id) => accounts.webhookSecret(id),
    metrics: postingMetrics(post),
  });
  engine.start();
  return async () => {
    await engine.stop();
    redis?.close();
    await db.close();
  };
}
