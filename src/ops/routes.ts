import { Elysia, StatusMap, t } from "elysia";
import { bearerToken, safeEqual } from "../http/tokens";
import type { AppContext } from "../context";
import { ApiError } from "../http/errors";
import { requestMarkOf, type RequestMark } from "../http/base";
import { metricsContentType, observeRequest, scrape } from "./metrics";

// What an operator runs the gateway with: an access log line and request metrics for every answer, readiness
// (database and Redis reachable) for load balancers, and Prometheus metrics.

const CHECK_TIMEOUT_MS = 2_000;

const ReadyResponse = t.Object(
  {
    status: t.Union([t.Literal("ok"), t.Literal("degraded"), t.Literal("unavailable")]),
    checks: t.Record(t.String(), t.String(), { description: "Each dependency: `ok`, `error` or `not configured`." }),
    failed: t.Optional(
      t.Array(t.String(), {
        description: "The dependencies that failed, without which this instance cannot serve (503).",
      }),
    ),
    degraded: t.Optional(
      t.Array(t.String(), {
        description: "The dependencies that failed but that this instance serves without (200): `redis`.",
      }),
    ),
  },
  {
    examples: [
      { status: "unavailable", checks: { database: "error", redis: "ok" }, failed: ["database"] },
      { status: "degraded", checks: { database: "ok", redis: "error" }, degraded: ["redis"] },
    ],
  },
);

export function opsRoutes(ctx: AppContext) {
  const metricsToken = ctx.config.metricsToken;

  return new Elysia({ name: "ops", detail: { tags: ["Operations"] } })
    .onAfterResponse({ as: "global" }, accessLogAndMetrics(ctx))
    .get("/readyz", async ({ set }) => readiness(ctx, set), {
      response: { 200: ReadyResponse, 503: ReadyResponse },
      detail: {
        summary:
          "Ready to serve: 200 when the database answers (`degraded` naming Redis when only Redis does not); 503 names what failed",
      },
    })
    .get(
      "/metrics",
      async ({ request }) => {
        if (metricsToken) {
          if (!safeEqual(bearerToken(request.headers), metricsToken))
            throw new ApiError(401, "invalid_metrics_token", "Missing or wrong metrics token (METRICS_TOKEN).");
        }
        return new Response(await scrape(ctx.db), { headers: { "content-type": metricsContentType } });
      },
      {
        response: { 200: t.String({ description: "Prometheus text exposition format." }) },
        detail: {
          summary:
            "Prometheus metrics (requests, latency, upstream errors, open holds, credits settled, task states, callbacks)",
          description: "Open unless METRICS_TOKEN is set; then send `Authorization: Bearer <METRICS_TOKEN>`.",
        },
      },
    );
}

/** After every answer of the app: the request metrics, then the access log line. */
function accessLogAndMetrics(ctx: AppContext) {
  return (c: any) =>
    // Label by the matched pattern (`/v1/models/*`), never the raw path: raw paths would explode the series.
    logRequest(
      ctx,
      requestMarkOf(c.request),
      c.request.method,
      c.route || "unmatched",
      c.path,
      statusOf(c.response, c.set.status),
    );
}

/**
 * One answer's request metrics and access log line; `mark` is the request's id and arrival (http/base.ts), `route`
 * the matched pattern.
 */
export function logRequest(
  ctx: AppContext,
  mark: RequestMark | undefined,
  method: string,
  route: string,
  path: string,
  status: number,
): void {
  const seconds = mark === undefined ? 0 : (performance.now() - mark.startedAt) / 1000;
  observeRequest(method, route, status, seconds);
  // At LOG_LEVEL=warn and above there is no access log: its line is not even put together (docs/architecture.md,
  // "Where the time goes", has what that was measured to save).
  if (!ctx.log.enabled("info")) return;
  // Only these fields: headers (keys, cookies), bodies and query strings never reach the log.
  ctx.log.info("request", {
    request_id: mark?.id,
    method,
    route,
    path: loggedPath(path),
    status,
    duration_ms: Math.round(seconds * 1000 * 10) / 10,
  });
}

async function readiness(ctx: AppContext, set: { status?: number | string }) {
  const checks: Record<string, string> = {};
  checks.database = await probe(() => ctx.db.ping(), "database", ctx);
  // ping() also starts a reconnect when Redis is down, so readiness comes back as soon as Redis does.
  checks.redis = ctx.redis ? await probe(() => ctx.redis!.ping(), "redis", ctx) : "not configured";
  // Without its database an instance cannot serve: 503. Without Redis it serves with limits counted in process
  // (README, Limits): still ready, so that an outage of the shared Redis does not take every instance out of
  // the load balancer at once; `degraded` names it, and the fallback metric counts it.
  const failed = Object.keys(checks).filter((k) => checks[k] === "error");
  const fatal = failed.filter((k) => k !== "redis");
  if (fatal.length) {
    set.status = 503;
    return { status: "unavailable" as const, checks, failed };
  }
  if (failed.length) return { status: "degraded" as const, checks, degraded: failed };
  return { status: "ok" as const, checks };
}

/** The path as logged: a result file's token is a credential (whoever has the URL has the file), so it is masked. */
export function loggedPath(path: string): string {
  return path.replace(/^\/files\/[^/]+/, "/files/***");
}

function statusOf(response: unknown, setStatus: number | string | undefined): number {
  if (response instanceof Response) return response.status;
  if (typeof setStatus === "number") return setStatus;
  if (typeof setStatus === "string") return (StatusMap as Record<string, number>)[setStatus] ?? 200;
  return 200;
}

async function probe(fn: () => Promise<unknown>, name: string, ctx: AppContext): Promise<string> {
  let timer: Timer | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS))),
    ]);
    return "ok";
  } catch (e) {
    // The detail goes to the log only: error texts can name hosts and users.
    ctx.log.warn("readiness check failed", { check: name, error: String((e as Error)?.message ?? e) });
    return "error";
  } finally {
    clearTimeout(timer);
  }
}
