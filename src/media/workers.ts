// Starts the media engine for a gateway: MEDIA_WORKERS Bun Workers (each with its own database connection), or the
// engine on the main thread when MEDIA_WORKERS=0 or the database is `:memory:` (a worker could not see it).
import type { AppContext } from "../context";
import { TokenReleases } from "../limits/task-tokens";
import { Engine } from "./engine";
import { applyMetric, directMetrics } from "./metrics";
import { mediaSettingsOf, type MediaSettings } from "./settings";
import { createStorage } from "./storage";
import type { FromWorker, ToWorker } from "./worker";
import { workerUrl } from "../worker-url";

const WORKER_URL = workerUrl("media/worker.ts");

export interface MediaRuntime {
  mode: "workers" | "in-process";
  /** The main-thread engine (in-process mode only): tests may drive it with tick(). */
  engine?: Engine;
  /** How many engines run: a worker starts its own only once there is media work (worker.ts). */
  engines(): number;
  stop(): Promise<void>;
}

export async function startMedia(
  ctx: AppContext,
  overrides: Record<string, string> = {},
  opts: { autostart?: boolean } = {},
): Promise<MediaRuntime> {
  const settings = mediaSettingsOf(ctx.config, overrides);
  const owner = () => `${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  if (settings.workers === 0 || settings.databaseUrl === ":memory:") {
    const engine = new Engine({
      db: ctx.db,
      ledger: ctx.ledger,
      log: ctx.log,
      owner: owner(),
      settings,
      catalog: ctx.catalog,
      storage: createStorage(settings.storage),
      tokens: ctx.taskTokens,
      webhookSecret: (id) => ctx.accounts.webhookSecret(id),
      metrics: directMetrics,
    });
    if (opts.autostart !== false) engine.start();
    return { mode: "in-process", engine, engines: () => 1, stop: () => engine.stop() };
  }
  // All of them or none: one that cannot start stops those that did (left running, they would go on taking tasks
  // with nothing left to stop them, until the process exits mid-step).
  // The workers' token releases are carried out here; one refused (Redis away) is retried every housekeeping round.
  const tokenReleases = new TokenReleases(ctx.taskTokens, (taskId, e) =>
    ctx.log.warn("concurrency token not given back yet; retrying", {
      task_id: taskId,
      error: String((e as Error)?.message ?? e),
    }),
  );
  const retrying = setInterval(() => void tokenReleases.retry(), settings.housekeepingMs);
  retrying.unref();
  let engines = 0;
  const spawned = Array.from({ length: settings.workers }, () =>
    spawn(ctx, settings, owner(), tokenReleases, () => engines++),
  );
  const up = new Set<Worker>();
  for (const s of spawned)
    void s.started.then(
      () => up.add(s.worker),
      () => {},
    );
  try {
    await Promise.all(spawned.map((s) => s.started)); // fails at the first failure, not after the slowest
  } catch (e) {
    // Those that started are stopped (a step under way ends); those still starting, or failed, are terminated.
    await Promise.all(spawned.map((s) => (up.has(s.worker) ? stopWorker(s.worker) : s.worker.terminate())));
    clearInterval(retrying);
    throw e;
  }
  const workers = spawned.map((s) => s.worker);
  return {
    mode: "workers",
    engines: () => engines,
    async stop() {
      await Promise.all(workers.map((w) => stopWorker(w)));
      clearInterval(retrying);
    },
  };
}

/** A media worker, told to start; `started` settles when it has (or failed to). */
function spawn(
  ctx: AppContext,
  settings: MediaSettings,
  owner: string,
  tokenReleases: TokenReleases,
  engineStarted: () => void,
): { worker: Worker; started: Promise<void> } {
  const worker = new Worker(WORKER_URL);
  const started = new Promise<void>((resolve, reject) => {
    worker.addEventListener(
      "error",
      (e) => reject(new Error(`media worker failed to start: ${(e as ErrorEvent).message}`)),
      { once: true },
    );
    worker.addEventListener("message", (e: MessageEvent<FromWorker>) => e.data.type === "started" && resolve());
  });
  worker.addEventListener("message", (e: MessageEvent<FromWorker>) => {
    const m = e.data;
    if (m.type === "metric") return applyMetric(m);
    if (m.type === "engine") return engineStarted();
    if (m.type !== "tokens") return;
    if (m.op === "release") return void tokenReleases.release(m.keyId, m.taskId);
    ctx.taskTokens
      .refresh(m.keyId, m.taskId, m.ttlMs)
      .catch((err) => ctx.log.error("task token update failed", { error: String(err) }));
  });
  worker.addEventListener("error", (e) => ctx.log.error("media worker error", { error: (e as ErrorEvent).message }));
  worker.postMessage({ type: "start", settings, owner } satisfies ToWorker);
  return { worker, started };
}

async function stopWorker(w: Worker): Promise<void> {
  const stopped = new Promise<void>((resolve) =>
    w.addEventListener("message", (e: MessageEvent<FromWorker>) => e.data.type === "stopped" && resolve()),
  );
  w.postMessage({ type: "stop" } satisfies ToWorker);
  await Promise.race([stopped, Bun.sleep(5000)]);
  w.terminate();
}
