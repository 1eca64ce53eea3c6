// Callbacks: the SSRF guard (at creation and again at delivery), retries with every attempt recorded, redelivery of
// any due pending row, and result-file retention.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { client, startMediaGateway, startReceiver, waitFor } from "./support";

const strict = await startMediaGateway({ CALLBACK_ALLOW_PRIVATE: "false" });
const gw = await startMediaGateway({ CALLBACK_MAX_ATTEMPTS: "3", RESULT_RETENTION_DAYS: "0.00002" }); // ≈ 1.7 s
const hook = startReceiver();
afterAll(async () => {
  await strict.stop();
  await gw.stop();
  hook.stop();
});

const deliveries = (taskId: string) =>
  gw.ctx.db.all<any>(
    sql`select attempt, state, status_code, error, duration_ms from callback_deliveries where task_id = ${taskId} order by attempt, created_at`,
  );

describe("callback URL guard", () => {
  const refused = [
    "http://127.0.0.1:9/hook",
    "http://localhost:9/hook",
    "http://10.0.0.5/x",
    "http://172.16.3.4/x",
    "http://192.168.1.10/x",
    "http://100.64.0.1/x",
    "http://169.254.169.254/latest/meta-data",
    "http://0.0.0.0/x",
    "http://[::1]/x",
    "http://[fd00::1]/x",
    "http://[fe80::1]/x",
    "http://[::ffff:127.0.0.1]/x",
    "ftp://8.8.8.8/x",
    "not a url",
    // other spellings, and IPv6 forms that carry an IPv4 address: integer, IPv4-translated, 6to4, Teredo, NAT64
    "http://2130706433/x",
    "http://[::ffff:0:7f00:1]/x",
    "http://[2002:a9fe:a9fe::]/latest/meta-data",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x",
    "http://[64:ff9b::a00:5]/x",
    "http://192.0.2.1/x",
  ];
  test.each(refused)("%s is refused at creation with 422 naming the field; nothing created", async (url) => {
    const c = client(strict, (await strict.account(100)).key);
    const n = await c.createTask("z-image", { prompt: "x" }, { callBackUrl: url });
    expect(n.status).toBe(422);
    expect(n.json.msg).toContain("callBackUrl");
    const a = await c.call("POST", "/v1/images/generations", { model: "z-image", prompt: "x", callback_url: url });
    expect(a.status).toBe(422);
    expect(a.json.error.param).toBe("callback_url");
    expect((await strict.ctx.db.get<any>(sql`select count(*) as n from tasks`)).n).toBe(0);
    expect((await c.credits()).held_credits).toBe(0);
  });

  test("a public literal address is accepted", async () => {
    const c = client(strict, (await strict.account(100)).key);
    expect((await c.createTask("z-image", { prompt: "x" }, { callBackUrl: "http://8.8.8.8/hook" })).status).toBe(200);
  });

  test("checked again at delivery: a URL that became private is refused there and recorded, not retried", async () => {
    const c = client(strict, (await strict.account(100)).key);
    const id = (await c.createTask("z-image", { prompt: "x" }, { callBackUrl: "http://8.8.8.8/hook" })).json.data
      .taskId;
    await c.waitRecord(id);
    // Simulate DNS changing after creation: the stored URL now points at loopback.
    await strict.ctx.db.run(
      sql`update callback_deliveries set url = ${hook.url}, state = ${"pending"}, next_attempt_at = ${0}, attempt = ${1} where task_id = ${id}`,
    );
    const rows = await waitFor(
      async () => {
        const r = await strict.ctx.db.all<any>(sql`select state, error from callback_deliveries where task_id = ${id}`);
        return r.every((x) => x.state !== "pending") && r.some((x) => x.error?.includes("non-public")) ? r : undefined;
      },
      5000,
      "refused delivery",
    );
    expect(rows.some((r: any) => r.state === "failed" && r.error.includes("127.0.0.1"))).toBe(true);
    expect(hook.received.some((r) => r.body?.taskId === id)).toBe(false);
  });
});

describe("delivery", () => {
  test("a failing receiver is retried with backoff; every attempt is a visible row", async () => {
    const c = client(gw, (await gw.account(100)).key);
    hook.failNext(500, 503);
    const id = (await c.createTask("z-image", { prompt: "x" }, { callBackUrl: hook.url })).json.data.taskId;
    const rows = await waitFor(
      async () => {
        const r = await deliveries(id);
        return r.some((x) => x.state === "delivered") ? r : undefined;
      },
      5000,
      "delivery",
    );
    expect(rows.map((r: any) => [r.attempt, r.state, r.status_code])).toEqual([
      [1, "failed", 500],
      [2, "failed", 503],
      [3, "delivered", 200],
    ]);
    expect(rows[0].error).toContain("500");
    expect(hook.received.filter((r) => r.body?.taskId === id)).toHaveLength(3);
  });

  test("retries stop after CALLBACK_MAX_ATTEMPTS", async () => {
    const c = client(gw, (await gw.account(100)).key);
    hook.failNext(500, 500, 500, 500);
    const id = (await c.createTask("z-image", { prompt: "x" }, { callBackUrl: hook.url })).json.data.taskId;
    await waitFor(
      async () => (await deliveries(id)).filter((r) => r.state === "failed").length === 3,
      5000,
      "3 failures",
    );
    await Bun.sleep(400);
    const rows = await deliveries(id);
    expect(rows.map((r: any) => r.state)).toEqual(["failed", "failed", "failed"]);
    hook.received.length = 0;
    hook.failNext(); // (queue drained below)
  });

  test("a new pending row (the dashboard's Redeliver) is picked up and sent", async () => {
    const c = client(gw, (await gw.account(100)).key);
    const id = (await c.createTask("z-image", { prompt: "x" }, { callBackUrl: hook.url })).json.data.taskId;
    await waitFor(async () => (await deliveries(id)).some((r) => r.state === "delivered"), 5000, "first delivery");
    const { accountId, url } = (await gw.ctx.db.get<any>(
      sql`select account_id as "accountId", url from callback_deliveries where task_id = ${id}`,
    ))!;
    await gw.ctx.db.run(sql`insert into callback_deliveries (id, task_id, account_id, url, attempt, state, created_at, next_attempt_at)
      values (${"cbd_manual"}, ${id}, ${accountId}, ${url}, ${1}, ${"pending"}, ${Date.now()}, ${Date.now()})`);
    await waitFor(
      async () => (await deliveries(id)).filter((r) => r.state === "delivered").length === 2,
      5000,
      "redelivery",
    );
    expect(hook.received.filter((r) => r.body?.taskId === id).length).toBeGreaterThanOrEqual(2);
  });
});

describe("retention", () => {
  test("result files expire: deleted from storage, served no more, and the record says so", async () => {
    const c = client(gw, (await gw.account(100)).key);
    const id = (await c.createTask("z-image", { prompt: "x" })).json.data.taskId;
    const rec = await c.waitRecord(id);
    const [url] = JSON.parse(rec.resultJson).resultUrls;
    expect(rec.resultsExpired).toBe(false);
    expect(rec.resultsExpireTime).toBeGreaterThan(Date.now());
    expect((await fetch(url)).status).toBe(200);
    const after = await waitFor(
      async () => {
        const r = await c.record(id);
        return r.resultsExpired ? r : undefined;
      },
      8000,
      "expiry",
    );
    expect(JSON.parse(after.resultJson)).toEqual({ resultUrls: [], resultsExpired: true });
    expect((await fetch(url)).status).toBe(410);
    const st = (await c.call("GET", `/v1/tasks/${id}`)).json;
    expect(st).toMatchObject({ status: "succeeded", result_urls: [], results_expired: true });
    const token = new URL(url).pathname.split("/")[2]!;
    expect(await Bun.file(`${gw.storageDir}/${token}/${new URL(url).pathname.split("/")[3]}`).exists()).toBe(false);
  });
});
