// Redis going away under running gateways, and coming back. The policy (README "Limits"): request limits are
// counted in each process meanwhile (requests are served, promptly), media task creation is refused with 503
// limits_unavailable (nothing created, nothing held), /readyz names Redis (degraded, still 200); and once Redis is back the gateways use
// it again within seconds, however long it was away, with no restart.
//
// Each test runs a redis-server of its own on a free port (see test/support/redis-server.ts), so it can stop it.
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { startFakeMediaUpstreams } from "../fakes/media/index";
import { providerEnv } from "../llm/support";
import { client, FAST_ENV } from "../media/support";
import { startGateway, type TestGateway } from "../support/gateway";
import { clearOfWindowEdge } from "../support/rate-windows";
import { OwnRedis, redisServerBinary, skipNoteRedisServer } from "../support/redis-server";
import { tempSqlitePath } from "../support/services";
import { Users } from "../../src/dashboard/users";

/** Longer than Bun's RedisClient takes to give up reconnecting on its own (20 retries, about 30 s). */
const DOWN_MS = 32_000;
/** "Promptly": well below the 5 s the rate limiter used to wait, with room for a loaded test machine. */
const PROMPT_MS = 1_000;
/** The connection retries at most every 2 s (RETRY_MAX_MS); a few seconds is the promise. */
const RECOVERY_MS = 5_000;

const llm = startFakeLlmUpstream();
const media = startFakeMediaUpstreams();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await llm.stop();
  await media.stop();
});

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t0 };
}

async function gateways(redis: OwnRedis, count: number): Promise<TestGateway[]> {
  const env = {
    ...media.env,
    ...FAST_ENV,
    ...providerEnv(llm.url),
    DATABASE_URL: tempSqlitePath(),
    REDIS_URL: redis.url,
  };
  const gws: TestGateway[] = [];
  for (let i = 0; i < count; i++) {
    const gw = await startGateway(env);
    cleanups.push(() => gw.stop());
    gws.push(gw);
  }
  return gws;
}

const credits = (gw: TestGateway, key: string) =>
  fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } });

/** The statuses of three /v1/credits calls spread over the gateways: [200, 200, 429] only if they share a window. */
async function threeCalls(gws: TestGateway[], key: string): Promise<number[]> {
  await clearOfWindowEdge(60, 1_000);
  const out: number[] = [];
  for (let i = 0; i < 3; i++) out.push((await credits(gws[i % gws.length]!, key)).status);
  return out;
}

async function untilBoth(gws: TestGateway[], key: string, deadlineMs: number) {
  const t0 = Date.now();
  // Traffic, not /readyz, drives the reconnection here: readyz would connect at once and hide a slow recovery.
  while (!gws.every((g) => g.ctx.redis!.up) && Date.now() - t0 < deadlineMs) {
    for (const g of gws) await credits(g, key);
    await Bun.sleep(100);
  }
  return Date.now() - t0;
}

async function expectServedWithoutRedis(gws: TestGateway[], a: { accountId: string; key: string; email: string }) {
  const [g1, g2] = gws as [TestGateway, TestGateway];
  // Protected requests: served, promptly.
  const c = await timed(() => credits(g1, a.key));
  expect(c.value.status).toBe(200);
  expect(c.ms).toBeLessThan(PROMPT_MS);
  const chat = await timed(() =>
    fetch(g2.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-5.2",
        max_completion_tokens: 50,
        messages: [{ role: "user", content: "Hi" }],
      }),
    }),
  );
  expect(chat.value.status).toBe(200);
  expect(chat.ms).toBeLessThan(PROMPT_MS);

  await expectMediaRefusedCleanly(gws, a);

  // Dashboard sign-in still answers (a wrong password is a 401, not a 500).
  const login = await fetch(g1.url + "/dashboard/login", {
    method: "POST",
    body: new URLSearchParams({ email: a.email, password: "not the password" }),
  });
  expect(login.status).toBe(401);

  // Readiness names Redis, promptly, and stays 200: every instance serving, none may leave the load balancer.
  const ready = await timed(() => fetch(g2.url + "/readyz"));
  expect(ready.ms).toBeLessThan(PROMPT_MS + 1_000);
  expect(ready.value.status).toBe(200);
  expect(await ready.value.json()).toMatchObject({
    status: "degraded",
    checks: { database: "ok", redis: "error" },
    degraded: ["redis"],
  });

  // And the fallbacks are counted for alerts.
  const scraped = await (await fetch(g1.url + "/metrics")).text();
  for (const kind of ["rate_limit", "task_tokens"])
    expect(scraped).toMatch(new RegExp(`switchyard_redis_fallbacks_total\\{kind="${kind}"\\} [1-9]`));
}

/** Media task creation: a clean 503 in each front door's shape, with retry-after; nothing created or held. */
async function expectMediaRefusedCleanly(gws: TestGateway[], a: { accountId: string; key: string }) {
  const [g1, g2] = gws as [TestGateway, TestGateway];
  const native = await timed(() => client(g1, a.key).createTask("z-image", { prompt: "a fox" }));
  expect(native.ms).toBeLessThan(PROMPT_MS);
  expect(native.value.status).toBe(503);
  expect(native.value.json).toMatchObject({ code: 503, error_code: "limits_unavailable", data: null });
  expect(Number(native.value.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const alias = await timed(() =>
    client(g2, a.key).call("POST", "/v1/images/generations", { model: "z-image", prompt: "a fox" }),
  );
  expect(alias.ms).toBeLessThan(PROMPT_MS);
  expect(alias.value.status).toBe(503);
  expect(alias.value.json.error.code).toBe("limits_unavailable");
  const tasks = await g1.ctx.db.get<{ n: number }>(
    sql`select count(*) as n from tasks where account_id = ${a.accountId}`,
  );
  expect(Number(tasks!.n)).toBe(0);
  const held = await g1.ctx.db.get<{ n: number }>(
    sql`select count(*) as n from holds where account_id = ${a.accountId} and kind = ${"task"}`,
  );
  expect(Number(held!.n)).toBe(0);
}

async function expectRedisInUse(gws: TestGateway[], tight: () => Promise<string>, a: { key: string }) {
  // Shared again: a 2-request window spread over two processes refuses the third.
  expect(await threeCalls(gws, await tight())).toEqual([200, 200, 429]);
  for (const g of gws) {
    const r = await fetch(g.url + "/readyz");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: "ok", checks: { redis: "ok" } });
  }
  expect((await client(gws[0]!, a.key).createTask("z-image", { prompt: "after" })).status).toBe(200);
}

skipNoteRedisServer("Redis outage and recovery");
describe.skipIf(!redisServerBinary)("Redis outage", () => {
  test(`down for ${DOWN_MS / 1000} s: requests served promptly, tasks refused with 503, readyz says degraded (Redis); back within seconds`, async () => {
    const redis = new OwnRedis();
    await redis.start();
    cleanups.push(() => redis.stop());
    const gws = await gateways(redis, 2);
    const [g1, g2] = gws as [TestGateway, TestGateway];
    const acct = await g1.account(1000);
    const email = `outage-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await new Users(g1.ctx.db).create(acct.accountId, email, "correct horse battery staple");
    const a = { ...acct, email };
    const tight = async () => (await g1.account(10, { rateRequests: 2, rateWindowSeconds: 60 })).key;

    expect(await threeCalls(gws, await tight())).toEqual([200, 200, 429]); // shared through Redis to begin with

    await redis.stop();
    const stoppedAt = Date.now();
    await expectServedWithoutRedis(gws, a);
    // Meanwhile each process still bounds a key by itself: the third call to one process is refused...
    const local = await tight();
    await clearOfWindowEdge(60, 1_000);
    expect([
      (await credits(g1, local)).status,
      (await credits(g1, local)).status,
      (await credits(g1, local)).status,
    ]).toEqual([200, 200, 429]);
    // ...but the processes no longer share the window.
    expect(await threeCalls(gws, await tight())).toEqual([200, 200, 200]);

    // Keep Redis away past the point where Bun's own client gives up reconnecting, with traffic going on.
    while (Date.now() - stoppedAt < DOWN_MS) {
      expect((await credits(g2, a.key)).status).toBe(200);
      await Bun.sleep(1_000);
    }
    await expectServedWithoutRedis(gws, a);

    await redis.start();
    const took = await untilBoth(gws, a.key, RECOVERY_MS);
    expect(took).toBeLessThan(RECOVERY_MS);
    await expectRedisInUse(gws, tight, a);
  }, 60_000);

  test("Redis that stops answering (paused) costs a request at most the command timeout, then recovers", async () => {
    const redis = new OwnRedis();
    await redis.start();
    cleanups.push(() => redis.stop());
    const gws = await gateways(redis, 2);
    const acct = await gws[0]!.account(1000);
    const tight = async () => (await gws[0]!.account(10, { rateRequests: 2, rateWindowSeconds: 60 })).key;
    expect((await credits(gws[0]!, acct.key)).status).toBe(200);

    await redis.send("CLIENT", ["PAUSE", "1500", "ALL"]); // connections stay open; nothing is answered
    const c = await timed(() => credits(gws[0]!, acct.key));
    expect(c.value.status).toBe(200);
    expect(c.ms).toBeLessThan(PROMPT_MS);
    const task = await timed(() => client(gws[1]!, acct.key).createTask("z-image", { prompt: "paused" }));
    expect(task.value.status).toBe(503);
    expect(task.ms).toBeLessThan(PROMPT_MS);

    await Bun.sleep(1_600);
    expect(await untilBoth(gws, acct.key, RECOVERY_MS)).toBeLessThan(RECOVERY_MS);
    await expectRedisInUse(gws, tight, acct);
  }, 30_000);

  test("a gateway started while Redis is down serves, says so on /readyz, and uses Redis once it comes", async () => {
    const redis = new OwnRedis(); // not started
    cleanups.push(() => redis.stop());
    const gws = await gateways(redis, 1);
    const acct = await gws[0]!.account(1000);
    expect((await credits(gws[0]!, acct.key)).status).toBe(200);
    const degraded = await fetch(gws[0]!.url + "/readyz");
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toMatchObject({ status: "degraded", degraded: ["redis"] });

    await redis.start();
    expect(await untilBoth(gws, acct.key, RECOVERY_MS)).toBeLessThan(RECOVERY_MS);
    const key = (await gws[0]!.account(10, { rateRequests: 2, rateWindowSeconds: 60 })).key;
    await clearOfWindowEdge(60, 1_000);
    expect([
      (await credits(gws[0]!, key)).status,
      (await credits(gws[0]!, key)).status,
      (await credits(gws[0]!, key)).status,
    ]).toEqual([200, 200, 429]);
    expect((await redis.send("KEYS", ["switchyard:rl:2/60:*"])).length).toBeGreaterThan(0); // counted in Redis
    expect((await fetch(gws[0]!.url + "/readyz")).status).toBe(200);
  }, 30_000);
});
