import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { metrics } from "../../src/ops/metrics";
import { startGateway, type TestGateway } from "../support/gateway";

// /metrics parsed as Prometheus text exposition format by a small strict parser (every line must be a comment,
// a HELP/TYPE line or a sample), then checked to move with traffic and to read the books from the database.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const name = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  // prom-client writes NaN as "Nan"; Prometheus parses float specials case-insensitively, so both are accepted.
  const sampleLine = new RegExp(
    `^(${name})(?:\\{(.*)\\})? (-?(?:[0-9.]+(?:e[+-]?\\d+)?|[Nn]a[Nn]|\\+Inf|-Inf))(?: -?\\d+)?$`,
  );
  const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("# HELP ")) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = sampleLine.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const rest = (m[2] ?? "").replace(labelRe, (_, k, v) => ((labels[k] = v), ""));
    if (rest.trim() !== "") throw new Error(`bad labels in ${JSON.stringify(line)}`);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

const value = (s: Sample[], name: string, labels: Record<string, string> = {}) =>
  s
    .filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((a, x) => a + x.value, 0);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.stop());

async function scrape() {
  const r = await fetch(gw.url + "/metrics");
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("text/plain");
  return parsePrometheus(await r.text());
}

describe("/metrics", () => {
  test("parses as Prometheus text with the documented metric families", async () => {
    const { types } = await scrape();
    expect(types.get("switchyard_http_requests_total")).toBe("counter");
    expect(types.get("switchyard_http_request_duration_seconds")).toBe("histogram");
    expect(types.get("switchyard_upstream_errors_total")).toBe("counter");
    expect(types.get("switchyard_holds_open")).toBe("gauge");
    expect(types.get("switchyard_credits_settled_micro_credits_total")).toBe("counter");
    expect(types.get("switchyard_tasks")).toBe("gauge");
    expect(types.get("switchyard_callback_deliveries_total")).toBe("counter");
  });

  test("the request counter and latency histogram move, labelled by route pattern and status", async () => {
    const before = (await scrape()).samples;
    const { key } = await gw.account(10);
    for (let i = 0; i < 3; i++) await fetch(gw.url + "/v1/models/claude-sonnet-4-5");
    await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } });
    await fetch(gw.url + "/v1/credits");
    await fetch(gw.url + "/no/such/route/42");
    const after = (await scrape()).samples;
    const delta = (labels: Record<string, string>) =>
      value(after, "switchyard_http_requests_total", labels) - value(before, "switchyard_http_requests_total", labels);
    expect(delta({ route: "/v1/models/*", status: "200", method: "GET" })).toBe(3);
    expect(delta({ route: "/v1/credits", status: "200" })).toBe(1);
    expect(delta({ route: "/v1/credits", status: "401" })).toBe(1);
    expect(delta({ route: "unmatched", status: "404" })).toBe(1);
    // raw paths never become labels
    // (the route label only: a status label of 429, from any other test in this process, contains "42" too)
    expect(
      after.some((s) => (s.labels.route ?? "").includes("claude-sonnet") || (s.labels.route ?? "").includes("42")),
    ).toBe(false);
    const count = (s: Sample[]) =>
      value(s, "switchyard_http_request_duration_seconds_count", { route: "/v1/models/*" });
    expect(count(after) - count(before)).toBe(3);
    expect(value(after, "switchyard_http_request_duration_seconds_bucket", { route: "/v1/models/*", le: "+Inf" })).toBe(
      count(after),
    );
  });

  test("open holds and task states are read from the database at scrape time", async () => {
    const { accountId } = await gw.account(100);
    const h1 = await gw.ctx.ledger.hold(accountId, 2_000_000, "llm", null, 60_000);
    await gw.ctx.ledger.hold(accountId, 3_000_000, "task", null, 60_000);
    let s = (await scrape()).samples;
    expect(value(s, "switchyard_holds_open", { kind: "llm" })).toBe(1);
    expect(value(s, "switchyard_holds_open", { kind: "task" })).toBe(1);
    expect(value(s, "switchyard_holds_open_micro_credits", { kind: "task" })).toBe(3_000_000);
    expect(value(s, "switchyard_tasks", { state: "generating" })).toBe(0);
    await gw.ctx.ledger.post(h1.id, 1_000_000);
    const { sql } = await import("drizzle-orm");
    const now = Date.now();
    await gw.ctx.db.run(sql`insert into tasks (id, account_id, key_id, model, state, param, input, estimate, route_index, attempts, next_poll_at, deadline_at, created_at, updated_at, results_expired)
      values (${"task_m1"}, ${accountId}, ${"key_x"}, ${"m"}, ${"generating"}, ${"{}"}, ${"{}"}, ${1}, ${0}, ${0}, ${now}, ${now}, ${now}, ${now}, ${0})`);
    s = (await scrape()).samples;
    expect(value(s, "switchyard_holds_open", { kind: "llm" })).toBe(0);
    // The LLM floats' series exists (as 0) before the first float, so dashboards and alerts can rely on it.
    expect(s.some((x) => x.name === "switchyard_holds_open" && x.labels.kind === "float" && x.value === 0)).toBe(true);
    expect(value(s, "switchyard_tasks", { state: "generating" })).toBe(1);
  });

  test("the functions other features call move their counters", async () => {
    const before = (await scrape()).samples;
    metrics.upstreamError("openai", "status_5xx");
    metrics.upstreamError("openai", "status_5xx");
    metrics.creditsPosted(1_500_000, "llm");
    metrics.callback("delivered");
    metrics.callback("failed");
    const after = (await scrape()).samples;
    const d = (n: string, l: Record<string, string>) => value(after, n, l) - value(before, n, l);
    expect(d("switchyard_upstream_errors_total", { provider: "openai", kind: "status_5xx" })).toBe(2);
    expect(d("switchyard_credits_settled_micro_credits_total", { kind: "llm" })).toBe(1_500_000);
    expect(d("switchyard_callback_deliveries_total", { outcome: "delivered" })).toBe(1);
    expect(d("switchyard_callback_deliveries_total", { outcome: "failed" })).toBe(1);
  });
});

describe("METRICS_TOKEN", () => {
  test("when set, /metrics needs it", async () => {
    const g = await startGateway({ METRICS_TOKEN: "metrics-token-0123456789" });
    try {
      expect((await fetch(g.url + "/metrics")).status).toBe(401);
      expect(
        (await fetch(g.url + "/metrics", { headers: { authorization: "Bearer wrong-token-0123456789ab" } })).status,
      ).toBe(401);
      expect(
        (await fetch(g.url + "/metrics", { headers: { authorization: "Bearer metrics-token-0123456789" } })).status,
      ).toBe(200);
    } finally {
      await g.stop();
    }
  });
});
