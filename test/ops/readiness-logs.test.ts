import { afterAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app";
import { closeContext, createContext } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { REDIS_URL, redisAvailable, skipNote, tempSqlitePath } from "../support/services";
import { ADMIN_TOKEN, startGateway } from "../support/gateway";
import { accountOn } from "../support/process";

const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const s of stops) await s();
});

describe("/readyz", () => {
  test("200 with the database up; 503 naming the database when it is gone; /healthz stays 200", async () => {
    const gw = await startGateway();
    stops.push(async () => void (await gw.app.stop(true)));
    let r = await fetch(gw.url + "/readyz");
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ok", checks: { database: "ok", redis: "not configured" } });
    await gw.ctx.db.close(); // the database dies under the running gateway
    r = await fetch(gw.url + "/readyz");
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({
      status: "unavailable",
      checks: { database: "error", redis: "not configured" },
      failed: ["database"],
    });
    expect((await fetch(gw.url + "/healthz")).status).toBe(200);
  });

  test.skipIf(!redisAvailable)(
    "checks Redis with PING when REDIS_URL is set; a dead Redis is named, and the instance stays ready",
    async () => {
      const gw = await startGateway({ REDIS_URL });
      stops.push(async () => void (await gw.app.stop(true))); // its database is closed below
      let r = await fetch(gw.url + "/readyz");
      expect(await r.json()).toMatchObject({ status: "ok", checks: { database: "ok", redis: "ok" } });
      gw.ctx.redis!.close();
      r = await fetch(gw.url + "/readyz");
      // It serves without Redis (limits in process), so a load balancer must keep it.
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({
        status: "degraded",
        checks: { database: "ok", redis: "error" },
        degraded: ["redis"],
      });
      // Both gone: the database decides.
      await gw.ctx.db.close();
      r = await fetch(gw.url + "/readyz");
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({
        status: "unavailable",
        checks: { database: "error", redis: "error" },
        failed: ["database", "redis"],
      });
    },
  );
  skipNote("Redis", redisAvailable, "/readyz Redis check");
});

describe("structured access logs", () => {
  test("one JSON line per request with the request id; never a key, password, cookie, session or admin token", async () => {
    const lines: string[] = [];
    const url = await gatewayLoggingTo(lines);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const { accountId, key } = await accountOn(url, "logs", 5);
    const password = "a-password-that-must-not-leak";
    await fetch(url + `/admin/v1/accounts/${accountId}/users`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ email: "log@example.com", password }),
    });
    const r1 = await fetch(url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } });
    await fetch(url + "/v1/credits?api_key=" + key, { headers: { "x-api-key": key } });
    await fetch(url + "/v1/credits", { headers: { authorization: `Bearer ${key}x` } }); // a wrong key is a secret too
    await fetch(url + "/dashboard/login", {
      method: "POST",
      body: new URLSearchParams({ email: "log@example.com", password: password + "!" }),
    });
    const login = await fetch(url + "/dashboard/login", {
      method: "POST",
      body: new URLSearchParams({ email: "log@example.com", password }),
      redirect: "manual",
    });
    const session = /sy_session=([^;]+)/.exec(login.headers.get("set-cookie")!)![1]!;
    await fetch(url + "/dashboard/settings/api-keys", { headers: { cookie: `sy_session=${session}` } });
    const webhook: any = await (
      await fetch(url + `/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST", headers: admin })
    ).json();
    const fileToken = "t0ken-of-a-result-file-9f8e7d";
    expect((await fetch(url + `/files/${fileToken}/image-1.png`)).status).toBe(404); // a result file URL is a credential
    await Bun.sleep(20); // the access log line is written once the answer has gone out

    const output = lines.join("\n");
    for (const secret of [key, key.slice(6), password, session, ADMIN_TOKEN, webhook.key, fileToken])
      expect(output).not.toContain(secret);
    expect(output).not.toMatch(/sk-sy-|whsec_|authorization|cookie/i);

    const entries = lines.map((l) => JSON.parse(l));
    const access = entries.filter((e) => e.msg === "request");
    expect(access.length).toBeGreaterThanOrEqual(9);
    const first = access.find((e) => e.request_id === r1.headers.get("x-request-id"));
    expect(first).toMatchObject({
      level: "info",
      method: "GET",
      route: "/v1/credits",
      path: "/v1/credits",
      status: 200,
    });
    expect(typeof first.duration_ms).toBe("number");
    expect(access.some((e) => e.route === "/dashboard/login" && e.status === 401)).toBe(true);
    expect(access.some((e) => e.path === "/files/***/image-1.png" && e.status === 404)).toBe(true);
  });
});

/** A gateway in this process whose debug log lines go to `lines`; stopped after the file. Its URL. */
async function gatewayLoggingTo(lines: string[]): Promise<string> {
  const config = loadConfig({
    DATABASE_URL: tempSqlitePath(),
    ADMIN_TOKEN,
    PORT: "0",
    DEFAULT_RATE_LIMIT: "1000/10s",
    LOG_LEVEL: "debug",
  });
  const ctx = await createContext(
    config,
    createLogger("debug", (l) => lines.push(l)),
  );
  const app = buildApp(ctx).listen({ port: 0, hostname: "127.0.0.1" });
  stops.push(async () => {
    await app.stop(true);
    await closeContext(ctx);
  });
  return `http://127.0.0.1:${app.server!.port}`;
}
