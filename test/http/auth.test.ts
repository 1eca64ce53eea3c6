import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { basePlugin } from "../../src/http/base";
import { protect } from "../../src/http/protect";
import { silentLogger } from "../../src/log";
import { startGateway, type TestGateway } from "../support/gateway";
import { errorOf, jsonOf, type AnswerOf, type EnvelopeError } from "../support/json";
import type { KeyList } from "../../src/accounts/model";

// Each surface's 401. The LLM and task routes mount the same `protect` guard; here it is mounted on stand-in
// routes at those paths so the shapes are pinned independently of the features behind them.
let gw: TestGateway;
let stub: ReturnType<typeof Elysia.prototype.listen>;
let stubUrl: string;
let key: string;
let revokedKey: string;

beforeAll(async () => {
  gw = await startGateway();
  ({ key } = await gw.account(100));
  const other = await gw.account(100);
  await gw.ctx.accounts.revokeKey(other.accountId, other.keyId);
  revokedKey = other.key;
  stub = new Elysia()
    .use(basePlugin(silentLogger))
    .group("", (app) =>
      app
        .use(protect(gw.ctx))
        .post("/v1/messages", () => ({ ok: true }))
        .post("/api/v1/jobs/createTask", () => ({ code: 200, msg: "success", data: {} }))
        .post("/v1/chat/completions", () => ({ ok: true })),
    )
    .listen({ port: 0, hostname: "127.0.0.1" });
  stubUrl = `http://127.0.0.1:${stub.server!.port}`;
});
afterAll(async () => {
  stub.stop(true);
  await gw.stop();
});

const cases: Array<[string, Record<string, string>]> = [
  ["missing key", {}],
  ["unknown key", { authorization: "Bearer sk-sy-not-a-real-key" }],
  ["revoked key", {}],
  ["malformed authorization", { authorization: "Basic abc" }],
];

describe("authentication failures in each protocol's shape", () => {
  for (const [what, hdrs] of cases) {
    const headers = () => (what === "revoked key" ? { "x-api-key": revokedKey } : hdrs);

    test(`${what} on /v1/messages → Anthropic error shape`, async () => {
      const r = await fetch(stubUrl + "/v1/messages", { method: "POST", headers: headers(), body: "{}" });
      expect(r.status).toBe(401);
      const b = await errorOf(r);
      expect(b).toMatchObject({ type: "error", error: { type: "authentication_error" } });
      expect(b.request_id).toBe(r.headers.get("request-id")!);
    });

    test(`${what} on /api/v1/jobs/createTask → envelope with code 401`, async () => {
      const r = await fetch(stubUrl + "/api/v1/jobs/createTask", { method: "POST", headers: headers(), body: "{}" });
      expect(r.status).toBe(401);
      const b = await jsonOf<EnvelopeError>(r);
      expect(b).toMatchObject({ code: 401, data: null });
      expect(b.msg).toBeString();
      expect(b.request_id).toBe(r.headers.get("x-request-id")!);
    });

    test(`${what} on /v1/credits and /v1/chat/completions → OpenAI-style error`, async () => {
      for (const [path, method] of [
        ["/v1/chat/completions", "POST"],
        ["/v1/credits", "GET"],
      ] as const) {
        const base = path === "/v1/credits" ? gw.url : stubUrl;
        const r = await fetch(base + path, { method, headers: headers(), body: method === "POST" ? "{}" : undefined });
        expect(r.status).toBe(401);
        const b = await errorOf(r);
        expect(b.error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
        expect(b.request_id).toBe(r.headers.get("x-request-id")!);
      }
    });
  }

  test("both key headers authenticate", async () => {
    const keyHeaders: Array<Record<string, string>> = [{ authorization: `Bearer ${key}` }, { "x-api-key": key }];
    for (const h of keyHeaders) {
      const r = await fetch(gw.url + "/v1/credits", { headers: h });
      expect(r.status).toBe(200);
    }
  });
});

describe("GET /v1/credits", () => {
  test("credits, usd and held_credits as decimal numbers; holds show as held", async () => {
    const a = await gw.account(12.5);
    const h = await gw.ctx.ledger.hold(a.accountId, 2_250_000, "llm", null, 60_000); // 2.25 credits in flight
    const r = await fetch(gw.url + "/v1/credits", { headers: { "x-api-key": a.key } });
    expect(await r.json()).toEqual({ credits: 10.25, usd: 0.01025, held_credits: 2.25 });
    expect(r.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(r.headers.get("x-request-id")).toStartWith("req_");
    // Request ids are time-ordered: usage records are indexed by them, and random ids made every insert dirty a
    // random page of that index (measured: a third of the LLM path's throughput).
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await fetch(gw.url + "/v1/credits", { headers: { "x-api-key": a.key } })).headers.get("x-request-id")!);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(20);
    await gw.ctx.ledger.post(h.id, 1);
    expect(await (await fetch(gw.url + "/v1/credits", { headers: { "x-api-key": a.key } })).json()).toEqual({
      credits: 12.499999,
      usd: 0.012499999,
      held_credits: 0,
    });
  });
});

describe("a key's last use", () => {
  test("is recorded when the key authenticates, shown by the admin API, and written at most once a minute", async () => {
    const { accountId, key: k, keyId } = await gw.account(100);
    const lastUsed = async () =>
      (await jsonOf<AnswerOf<typeof KeyList>>(await gw.admin(`/admin/v1/accounts/${accountId}/keys`))).data.find(
        (x) => x.id === keyId,
      )!.last_used_at;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    expect(
      (
        await fetch(stubUrl + "/v1/chat/completions", {
          method: "POST",
          headers: { authorization: `Bearer ${k}` },
          body: "{}",
        })
      ).status,
    ).toBe(200);
    let first: string | null = null;
    for (let i = 0; i < 50 && !first; i++) first = (await lastUsed()) ?? (await Bun.sleep(10), null);
    expect(Date.parse(first!)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(first!)).toBeLessThanOrEqual(Date.now());
    await Bun.sleep(5);
    await fetch(stubUrl + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${k}` },
      body: "{}",
    });
    await Bun.sleep(20);
    expect(await lastUsed()).toBe(first); // within LAST_USED_STEP_MS: no second write
  });
});
