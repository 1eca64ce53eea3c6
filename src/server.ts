import { buildApp } from "./app";
import { closeContext, createContext } from "./bootstrap";
import { CatalogError } from "./catalog/service";
import { ConfigError, FEW_REQUEST_SLOTS, loadConfig, withoutCredentials, type Config } from "./config";
import { DatabaseOpenError } from "./db/client";
import { SWEPT_HOLD_KINDS } from "./ledger/service";
import { serverLimitOf } from "./http/body-limits";
import { createLogger } from "./log";
import { startMedia } from "./media/workers";
import { SERVER_IDLE_TIMEOUT_SECONDS } from "./llm/timeouts";
import { CLOSE_DEADLINE_MS, closeNow, gracefulStop, onShutdown, within } from "./ops/shutdown";
import { Idempotency } from "./http/idempotency";

// Entry: read config → open db (+ migrate) → build app → listen → start background work; stop gracefully.

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(1);
  }
  throw e;
}
const log = createLogger(config.logLevel);
const ctx = await createContext(config, log).catch((e) => {
  // What an operator must fix (a bad catalog, a database that cannot be reached) in one line, without a stack trace.
  const what =
    e instanceof CatalogError
      ? "invalid model catalog"
      : e instanceof ConfigError
        ? "invalid configuration"
        : e instanceof DatabaseOpenError || (e as { code?: string })?.code?.startsWith("ERR_POSTGRES")
          ? `cannot open the database ${withoutCredentials(config.databaseUrl)} (DATABASE_URL)`
          : null;
  if (!what) throw e;
  console.error(`switchyard could not start: ${what}: ${(e as Error).message}`);
  process.exit(1);
});
// idleTimeout: the most Bun allows; an LLM call lifts it for its connection while it waits on its upstream, whose own
// timeouts govern it (llm/timeouts.ts), and restores it after. maxRequestBodySize: a backstop above
// MAX_REQUEST_BODY_MB, whose 413 is ours, in the caller's protocol (http/body-limits.ts).
// reusePort off (Elysia turns it on): a second gateway started on a port in use must fail, not quietly take half of
// the first one's connections.
const app = buildApp(ctx);
try {
  app.listen({
    port: config.port,
    hostname: config.host,
    idleTimeout: SERVER_IDLE_TIMEOUT_SECONDS,
    maxRequestBodySize: serverLimitOf(config.body),
    reusePort: false,
  });
} catch (e) {
  console.error(
    `switchyard could not start: cannot listen on ${config.host}:${config.port} (HOST, PORT): ${(e as Error).message}`,
  );
  await closeContext(ctx).catch(() => {});
  process.exit(1);
}

// Media tasks: polling, completion and callbacks run in Bun Workers (state in the database).
// A task step in progress finishes (or is cut off at the grace period); anything unfinished resumes at the next start.
// Its workers take a moment to start: a shutdown meanwhile waits for them, then stops them.
const mediaStarting = startMedia(ctx);
onShutdown(async () => (await mediaStarting.catch(() => null))?.stop(), "media workers");

// LLM holds and floats (ledger/float.ts) left behind by a crash are voided once they expire (SWEPT_HOLD_KINDS says
// why task holds are not).
// Idempotency keys past their 24 h are forgotten on the same round.
const idempotencyKeys = new Idempotency(ctx.db);
const sweeper = setInterval(() => {
  ctx.ledger.sweepExpired(Date.now(), SWEPT_HOLD_KINDS).then(
    (n) => n && log.info("released expired holds", { count: n }),
    (e) => log.error("hold sweep failed", { error: String(e) }),
  );
  idempotencyKeys.sweepExpired().catch((e) => log.error("idempotency key sweep failed", { error: String(e) }));
}, config.sweepIntervalSeconds * 1000);
onShutdown(() => clearInterval(sweeper), "hold sweeper");

// SIGTERM/SIGINT: stop taking connections, let in-flight requests and streams finish, stop background work (hooks
// registered with onShutdown in ops/shutdown.ts), all within SHUTDOWN_GRACE_SECONDS; then close the database.
// A second signal while waiting exits at once.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) {
    log.warn("second signal: exiting now", { signal });
    process.exit(1);
  }
  stopping = true;
  const graceMs = config.shutdownGraceMs;
  log.info("shutting down", { signal, grace_seconds: graceMs / 1000 });
  const result = await gracefulStop(app.server!, graceMs, log);
  const closing = closeContext(ctx).catch((e) => log.error("closing the services failed", { error: String(e) }));
  if (!(await within(closing, CLOSE_DEADLINE_MS))) {
    log.error("the database did not close in time: exiting without it", { deadline_ms: CLOSE_DEADLINE_MS });
    process.exit(1);
  }
  log.info("stopped", result);
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

// Awaited only here, after the signal handlers are in place: a signal that arrives while the media workers start
// must still stop the gateway gracefully, not kill it with its streams cut. Workers that cannot start stop the
// gateway (unless a shutdown is already under way, which ends the process itself).
try {
  await mediaStarting;
} catch (e) {
  if (stopping) await new Promise(() => {}); // the shutdown under way exits the process
  stopping = true; // a signal from here on exits at once (exit 1), as a second one does
  console.error(`switchyard could not start: media workers: ${(e as Error).message}`);
  await closeNow(app.server!, log); // its streams end with their protocol's error event, as at a grace period's end
  await within(closeContext(ctx), CLOSE_DEADLINE_MS);
  process.exit(1);
}
if (!stopping) {
  if (config.upstreamRequestSlots < FEW_REQUEST_SLOTS) {
    log.warn("few upstream request slots", {
      slots: config.upstreamRequestSlots,
      hint: "Bun lets this many upstream requests out at once and queues the rest behind them, streams included; set BUN_CONFIG_MAX_HTTP_REQUESTS=16384 in the gateway's environment",
    });
  }
  log.info("switchyard listening", {
    url: `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${app.server!.port}`,
    database: ctx.db.dialect,
    limits: ctx.redis ? "redis" : "in-process",
    models: ctx.catalog.llmList.length + ctx.catalog.mediaList.length,
    admin_api: config.adminToken ? "enabled" : "disabled (set ADMIN_TOKEN)",
  });
}
