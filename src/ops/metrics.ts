import { sql } from "drizzle-orm";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import type { Db } from "../db/client";

// Prometheus metrics (prom-client). One registry per process: counters are process-wide, so any feature can call
// the small functions in `metrics` without holding a context. Gauges that describe the books (open holds, task
// states) are read from the database at scrape time instead, so every process reports the shared truth.

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "switchyard_" });

const upstreamErrors = new Counter({
  name: "switchyard_upstream_errors_total",
  help: "Failed upstream calls (LLM providers, media providers), by provider and kind.",
  labelNames: ["provider", "kind"] as const,
  registers: [registry],
});

const creditsPosted = new Counter({
  name: "switchyard_credits_settled_micro_credits_total",
  help: "Micro-credits charged by settled holds (1 credit = 1e6), by hold kind.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

const callbacks = new Counter({
  name: "switchyard_callback_deliveries_total",
  help: "Task callback delivery attempts, by outcome.",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

const holdsOpen = new Gauge({
  name: "switchyard_holds_open",
  help: "Pending holds right now (read from the database at scrape time), by kind.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

const holdsOpenMicros = new Gauge({
  name: "switchyard_holds_open_micro_credits",
  help: "Micro-credits reserved by pending holds (read from the database at scrape time), by kind.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

const taskStates = new Gauge({
  name: "switchyard_tasks",
  help: "Media tasks by state (read from the database at scrape time).",
  labelNames: ["state"] as const,
  registers: [registry],
});

// Known label values are always exported (as 0) so dashboards and alerts see the series before the first event.
const HOLD_KINDS = ["float", "llm", "task"];
const TASK_STATES = ["waiting", "generating", "success", "fail"];

/** What other features call. Each is cheap (an in-memory increment) and never throws. */
export const metrics = {
  /** An upstream call failed: `kind` is e.g. "status_5xx", "status_4xx", "timeout", "network". */
  upstreamError(provider: string, kind = "error") {
    upstreamErrors.inc({ provider, kind });
  },
  /** A hold was posted for `micros` micro-credits (call after a post that applied). */
  creditsPosted(micros: number, kind: "llm" | "task" = "llm") {
    if (micros > 0) creditsPosted.inc({ kind }, micros);
  },
  /** A callback delivery attempt ended: e.g. "delivered", "failed", "retry", "gave_up". */
  callback(outcome: string) {
    callbacks.inc({ outcome });
  },
};

// The request count and duration, kept in plain numbers per label set and rendered by the registry at scrape time.
// prom-client's Counter and Histogram hash their labels object on every inc and observe, even through a bound
// child, which shows in the profile of the metric every request touches (docs/architecture.md, "Where the time
// goes"). The sets are few: methods × route patterns (never raw paths) × statuses.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** observations per bucket (not cumulative); the last slot is above the largest bound */
  buckets: number[];
}
const requestSeries = new Map<string, RequestSeries>();

/** Called by the request hook in ops/routes.ts for every answered request. */
export function observeRequest(method: string, route: string, status: number, seconds: number) {
  const key = `${method} ${status} ${route}`;
  let s = requestSeries.get(key);
  if (!s) {
    s = {
      labels: { method, route, status: String(status) },
      count: 0,
      sum: 0,
      buckets: new Array(DURATION_BUCKETS.length + 1).fill(0),
    };
    requestSeries.set(key, s);
  }
  s.count++;
  s.sum += seconds;
  let i = 0;
  while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
  s.buckets[i]!++;
}

/** A request metric the registry renders from `values()` when scraped (the shape prom-client's own metrics give it). */
function requestMetric(
  name: string,
  help: string,
  type: "counter" | "histogram",
  values: () => Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>,
) {
  registry.registerMetric({
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
    reset: () => requestSeries.clear(),
  } as any);
}

requestMetric(
  "switchyard_http_requests_total",
  "HTTP requests answered, by method, route pattern and status.",
  "counter",
  () => [...requestSeries.values()].map((s) => ({ labels: s.labels, value: s.count })),
);

requestMetric(
  "switchyard_http_request_duration_seconds",
  "Time from request to response headers, by method, route pattern and status (streams: time to first byte).",
  "histogram",
  () => {
    const name = "switchyard_http_request_duration_seconds";
    const out: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of requestSeries.values()) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        out.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      out.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count });
      out.push({ metricName: `${name}_sum`, labels: s.labels, value: s.sum });
      out.push({ metricName: `${name}_count`, labels: s.labels, value: s.count });
    }
    return out;
  },
);

/** Refreshes the database-backed gauges, then renders the registry in Prometheus text format. */
export async function scrape(db: Db): Promise<string> {
  const holds = await db.all<{ kind: string; n: number; micros: number }>(
    sql`select kind, count(*) as n, coalesce(sum(amount), 0) as micros from holds where status = ${"pending"} group by kind`,
  );
  holdsOpen.reset();
  holdsOpenMicros.reset();
  for (const kind of HOLD_KINDS) {
    holdsOpen.set({ kind }, 0);
    holdsOpenMicros.set({ kind }, 0);
  }
  for (const h of holds) {
    holdsOpen.set({ kind: h.kind }, Number(h.n));
    holdsOpenMicros.set({ kind: h.kind }, Number(h.micros));
  }
  const tasks = await db.all<{ state: string; n: number }>(sql`select state, count(*) as n from tasks group by state`);
  taskStates.reset();
  for (const state of TASK_STATES) taskStates.set({ state }, 0);
  for (const t of tasks) taskStates.set({ state: t.state }, Number(t.n));
  return registry.metrics();
}

export const metricsContentType = registry.contentType;
