// Entry of a media Bun Worker (listed as an extra entrypoint of `bun run build`, so the compiled binary has it).
// It opens its own database connection and says it has started; the engine itself (worker-engine.ts: catalog,
// adapters, Redis) is loaded only once the database holds media work (pending-work.ts), looked for as often as the
// engine looks for due tasks, and then runs until told to stop. A gateway that never serves a media task so keeps
// one small heap here instead of the engine's (docs/architecture.md, "Where the time goes").
import { openDatabase, type Db } from "../db/client";
import { createLogger, type Logger } from "../log";
import type { MetricEvent } from "./metrics";
import { mediaWorkPending } from "./pending-work";
import type { MediaSettings } from "./settings";

declare const self: Worker;

export type ToWorker = { type: "start"; settings: MediaSettings; owner: string } | { type: "stop" };
export type FromWorker =
  | { type: "started" }
  | { type: "stopped" }
  /** the engine has started (there was media work) */
  | { type: "engine" }
  | { type: "tokens"; op: "release" | "refresh"; keyId: string; taskId: string; ttlMs: number }
  | MetricEvent;

/** How often an idle worker looks for media work: as often as a running engine looks for due tasks. */
const PROBE_MS = 200;

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
  const engine = engineWhenNeeded(db, log, settings, owner);
  stop = async () => {
    await engine.stop();
    await db.close();
  };
  self.postMessage({ type: "started" } satisfies FromWorker);
};

/** Looks for media work every PROBE_MS and starts the engine at the first found; stop() ends either. */
function engineWhenNeeded(db: Db, log: Logger, settings: MediaSettings, owner: string) {
  let running = true;
  let timer: Timer | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopEngine: (() => Promise<void>) | undefined;
  let resultsLookedAt = 0;
  const next = (ms: number) => {
    if (running) timer = setTimeout(() => (round = look()), ms);
  };
  async function look(): Promise<void> {
    let wait = PROBE_MS;
    try {
      const now = Date.now();
      const results = now - resultsLookedAt >= settings.housekeepingMs;
      if (results) resultsLookedAt = now;
      if (await mediaWorkPending(db, { results, now })) {
        const { startEngine } = await import("./worker-engine");
        if (!running) return;
        stopEngine = await startEngine({ db, log, settings, owner, post: (m) => self.postMessage(m) });
        log.info("media engine started: the database holds media work");
        self.postMessage({ type: "engine" } satisfies FromWorker);
        return;
      }
    } catch (e) {
      log.error("media engine could not start; trying again", { error: String((e as Error)?.message ?? e) });
      wait = settings.housekeepingMs;
    }
    next(wait);
  }
  round = look();
  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await round;
      await stopEngine?.();
    },
  };
}
