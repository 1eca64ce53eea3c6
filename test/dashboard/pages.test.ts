import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";

// What the pages show from the tables the LLM and media features fill. Rows are written here the way those
// features will write them (same columns), to pin the pages' queries, filters and escaping.

let gw: TestGateway;
let user: Awaited<ReturnType<typeof dashboardUser>>;
let session: Awaited<ReturnType<typeof signIn>>;
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;

beforeAll(async () => {
  gw = await startGateway();
  user = await dashboardUser(gw, 100);
  session = await signIn(gw, user.email);
  const usage = (id: string, model: string, at: number, cost: number, input: number, output: number) =>
    gw.ctx.db.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, upstream_status,
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, latency_ms, ttfb_ms, created_at)
      values (${"use_" + id}, ${"req_" + id}, ${user.accountId}, ${user.keyId}, ${model}, ${"/v1/chat/completions"}, ${"openai"}, ${"ok"}, ${200},
        ${input}, ${output}, ${0}, ${0}, ${cost}, ${420}, ${90}, ${at})`);
  await usage("a1", "gpt-5.2", today + 3_600_000, 2_500_000, 1000, 200);
  await usage("a2", "gpt-5.2", today - DAY + 3_600_000, 1_000_000, 500, 100);
  await usage("b1", "gemini-<b>x</b>", today + 7_200_000, 750_000, 300, 30);
  await usage("old", "gpt-5.2", today - 60 * DAY, 9_000_000, 1, 1);
  const other = await gw.account(5);
  await gw.ctx.db.run(sql`insert into usage_records (id, request_id, account_id, key_id, model, endpoint, provider, status, input_tokens, output_tokens,
      cache_read_tokens, cache_write_tokens, cost, created_at)
    values (${"use_other"}, ${"req_other_account"}, ${other.accountId}, ${other.keyId}, ${"gpt-5.2"}, ${"/v1/chat/completions"}, ${"openai"}, ${"ok"}, ${1}, ${1}, ${0}, ${0}, ${1}, ${today})`);

  const task = (id: string, state: string, result: object | null, cost: number | null) =>
    gw.ctx.db.run(sql`insert into tasks (id, account_id, key_id, model, state, param, input, callback_url, estimate, cost, route_index, attempts,
        next_poll_at, deadline_at, created_at, updated_at, result_json, results_expired)
      values (${id}, ${user.accountId}, ${user.keyId}, ${"google/nano-banana"}, ${state}, ${"{}"}, ${"{}"}, ${"https://hooks.example.com/cb"}, ${4_000_000}, ${cost},
        ${0}, ${0}, ${Date.now()}, ${Date.now()}, ${Date.now()}, ${Date.now()}, ${result ? JSON.stringify(result) : null}, ${0})`);
  // A task for the webhook deliveries below. The Tasks page is tested on tasks the engine really ran (tasks.test.ts).
  await task("task_done", "success", null, 3_000_000);
  await gw.ctx.db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, status_code, error, duration_ms, created_at)
    values (${"cbd_1"}, ${"task_done"}, ${user.accountId}, ${"https://hooks.example.com/cb"}, ${3}, ${"failed"}, ${500}, ${"HTTP 500"}, ${35}, ${Date.now()})`);
});
afterAll(() => gw.stop());

const get = async (path: string) => {
  const r = await fetch(gw.url + path, { headers: { cookie: session.cookie } });
  expect(r.status).toBe(200);
  return r.text();
};

describe("Usage", () => {
  test("the spend chart counts media tasks too: the finished task is in it and in the totals by model", async () => {
    // this account has a finished media task (task_done, 3 credits) that the usage records do not hold
    const page = await get("/dashboard/usage");
    expect(page).toContain('aria-label="Spend per day (credits, UTC; LLM calls and media tasks)"');
    const task = await gw.ctx.db.get<any>(sql`select model, cost from tasks where id = ${"task_done"}`);
    expect(page).toContain(`${task.model}: ${Number(task.cost) / 1e6}</title>`);
  });

  test("charts by day and model, totals by model, and the request log of this account only (last 30 days)", async () => {
    const page = await get("/dashboard/usage");
    expect(page.match(/<svg role="img"/g)).toHaveLength(2);
    expect(page).toContain("gpt-5.2: 2.5</title>"); // today's spend segment
    expect(page).toContain("req_a1");
    expect(page).toContain("req_a2");
    expect(page).toContain("req_b1");
    expect(page).not.toContain("req_old"); // older than the default range
    expect(page).not.toContain("req_other_account");
    expect(page).toContain("gemini-&lt;b&gt;x&lt;/b&gt;"); // escaped, never markup
    expect(page).not.toContain("<b>x</b>");
    expect(page).toMatch(/<td>gpt-5\.2<\/td><td>2<\/td><td>1,500<\/td><td>300<\/td><td>0<\/td><td>3\.5<\/td>/);
  });

  test("filters: model, date range and request id", async () => {
    const byModel = await get("/dashboard/usage?model=gpt-5.2");
    expect(byModel).toContain("req_a1");
    expect(byModel).not.toContain("req_b1");
    const d = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const yesterday = await get(`/dashboard/usage?from=${d(today - DAY)}&to=${d(today - DAY)}`);
    expect(yesterday).toContain("req_a2");
    expect(yesterday).not.toContain("req_a1");
    const old = await get(`/dashboard/usage?from=${d(today - 61 * DAY)}&to=${d(today)}`);
    expect(old).toContain("req_old");
    const one = await get("/dashboard/usage?request_id=req_b1");
    expect(one).toContain("req_b1");
    expect(one).not.toContain("req_a1");
    expect(await get("/dashboard/usage?request_id=req_other_account")).toContain("No requests match");
  });
});

describe("Wallet", () => {
  test("wallet shows available and held credits and the ledger", async () => {
    const hold = await gw.ctx.ledger.hold(user.accountId, 10_000_000, "llm", null, 60_000);
    const page = await get("/dashboard");
    expect(page).toMatch(/id="available"><strong>90<\/strong>/);
    expect(page).toContain("10 credits (1 in flight)");
    expect(page).toContain("initial credits");
    await gw.ctx.ledger.void(hold.id);
  });
});

describe("Webhooks", () => {
  test("recent deliveries, and Redeliver queues a new pending delivery for the task", async () => {
    const page = await get("/dashboard/settings/webhooks");
    expect(page).toContain("HTTP 500");
    const r = await fetch(gw.url + "/dashboard/settings/webhooks/deliveries/cbd_1/redeliver", {
      method: "POST",
      headers: { cookie: session.cookie, origin: gw.url },
      body: new URLSearchParams({ _csrf: session.csrf }),
      redirect: "manual",
    });
    expect(r.status).toBe(303);
    const rows = await gw.ctx.db.all<any>(
      sql`select * from callback_deliveries where task_id = ${"task_done"} order by created_at`,
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({
      state: "pending",
      attempt: 1,
      url: "https://hooks.example.com/cb",
      account_id: user.accountId,
    });
    expect(await get(r.headers.get("location")!)).toContain("Redelivery of task task_done queued.");
  });

  test("the signing key is shown once: on the page after rotating, not after a reload", async () => {
    const r = await fetch(gw.url + "/dashboard/settings/webhooks/key", {
      method: "POST",
      headers: { cookie: session.cookie, origin: gw.url },
      body: new URLSearchParams({ _csrf: session.csrf }),
      redirect: "manual",
    });
    expect(r.status).toBe(303);
    const flash = /^(sy_new_webhook_key=[^;]+)/.exec(r.headers.get("set-cookie")!)![1]!;
    const shown = await fetch(gw.url + "/dashboard/settings/webhooks", {
      headers: { cookie: `${session.cookie}; ${flash}` },
    });
    const key = /id="new-webhook-key">([^<]+)/.exec(await shown.text())![1]!;
    expect(key).toBe((await gw.ctx.accounts.webhookSecret(user.accountId))!);
    expect(shown.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await get("/dashboard/settings/webhooks")).not.toContain(key);
  });
});
