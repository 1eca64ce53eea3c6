// Entry of a media Bun Worker (listed as an extra entrypoint of `bun run build`, so the compiled binary has it).
// It connects to the database and says it has started; the engine itself (worker-engine.ts: its own connection
// through db/client.ts, catalog, adapters, Redis) is loaded only once the database holds media work
// (pending-work.ts), looked for as often as the engine looks for due tasks, and then runs until told to stop. A
// gateway that never serves a media task so keeps one small heap here instead of the engine's (docs/architecture.md,
// "Where the time goes").
import { createLogger, type Logger } from "../log";
import type { MetricEvent } from "./metrics";
import { mediaWorkPending, probeConnection } from "./pending-work";
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
  const probe = probeConnection(settings.databaseUrl);
  // The first look is made before "started": a database this worker cannot read fails its start.
  const pending = await mediaWorkPending(probe.exists, { results: false });
  const engine = engineWhenNeeded(probe, pending, log, settings, owner);
  stop = () => engine.stop();
  self.postMessage({ type: "started" } satisfies FromWorker);
};

/** Looks for media work every PROBE_MS and starts the engine at the first found; stop() ends either. */
function engineWhenNeeded(
  probe: ReturnType<typeof probeConnection>,
  pendingAtStart: boolean,
  log: Logger,
  settings: MediaSettings,
  owner: string,
) {
  let running = true;
  let timer: Timer | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopEngine: (() => Promise<void>) | undefined;
  let probing = true;
  let resultsLookedAt = 0;
  const next = (ms: number) => {
    if (running) timer = setTimeout(() => (round = look(false)), ms);
  };
  async function look(pending: boolean): Promise<void> {
    let wait = PROBE_MS;
    try {
      const now = Date.now();
      const results = now - resultsLookedAt >= settings.housekeepingMs;
      if (results) resultsLookedAt = now;
      if (pending || (await mediaWorkPending(probe.exists, { results, now }))) {
        const { startEngine } = await import("./worker-engine");
        if (!running) return;
        stopEngine = await startEngine({ log, settings, owner, post: (m) => self.postMessage(m) });
        probing = false;
        await probe.close();
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
  round = look(pendingAtStart);
  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await round;
      await stopEngine?.();
      if (probing) await probe.close();
    },
  };
}
