// Entry of a media Bun Worker (listed as an extra entrypoint of `bun run build`, so the compiled binary has it).
// It opens its own database connection (and Redis, when configured) and runs the engine until told to stop. With
// in-process concurrency tokens the tokens live on the main thread, so token changes are sent there as messages.
import { SecretBox } from "../accounts/secret-box";
import { Accounts } from "../accounts/service";
import { loadCatalog } from "../catalog-loader";
import { openDatabase } from "../db/client";
import { Ledger } from "../ledger/service";
import { connectRedis } from "../limits/redis";
import { RedisTaskTokens, type TaskTokens } from "../limits/task-tokens";
import { createLogger } from "../log";
import { Engine } from "./engine";
import { postingMetrics, type MetricEvent } from "./metrics";
import type { MediaSettings } from "./settings";
import { createStorage } from "./storage";

declare const self: Worker;

export type ToWorker = { type: "start"; settings: MediaSettings; owner: string } | { type: "stop" };
export type FromWorker =
  | { type: "started" }
  | { type: "stopped" }
  | { type: "tokens"; op: "release" | "refresh"; keyId: string; taskId: string; ttlMs: number }
  | MetricEvent;

/** Tokens held by the main thread: this worker only ever refreshes and releases them. */
class ParentTaskTokens implements TaskTokens {
  async acquire(): Promise<never> {
    throw new Error("tokens are acquired on the main thread");
  }
  async refresh(keyId: string, taskId: string, ttlMs: number) {
    self.postMessage({ type: "tokens", op: "refresh", keyId, taskId, ttlMs } satisfies FromWorker);
  }
  async release(keyId: string, taskId: string) {
    self.postMessage({ type: "tokens", op: "release", keyId, taskId, ttlMs: 0 } satisfies FromWorker);
  }
  async holders(): Promise<never[]> {
    return [];
  }
  async count(): Promise<number> {
    return 0;
  }
}

let stop: (() => Promise<void>) | undefined;

self.onmessage = async (e: MessageEvent<ToWorker>) => {
  if (e.data.type === "stop") {
    await stop?.();
    self.postMessage({ type: "stopped" } satisfies FromWorker);
    return;
  }
  const { settings, owner } = e.data;
  const log = createLogger(settings.logLevel);
  // A small pool: every gateway process runs MEDIA_WORKERS of these next to its own pool of 20.
  const db = await openDatabase(settings.databaseUrl, { poolSize: 4 });
  const ledger = new Ledger(db);
  const accounts = new Accounts(db, ledger, await SecretBox.fromSetting(settings.secretsKey));
  const redis = settings.redisUrl ? await connectRedis(settings.redisUrl) : undefined;
  const engine = new Engine({
    db,
    ledger,
    log,
    owner,
    settings,
    catalog: loadCatalog(settings.catalogPath),
    storage: createStorage(settings.storage),
    tokens: redis ? new RedisTaskTokens(redis) : new ParentTaskTokens(),
    webhookSecret: (id) => accounts.webhookSecret(id),
    metrics: postingMetrics((m) => self.postMessage(m)),
  });
  engine.start();
  stop = async () => {
    await engine.stop();
    redis?.close();
    await db.close();
  };
  self.postMessage({ type: "started" } satisfies FromWorker);
};
