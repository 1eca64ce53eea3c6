// A key's models and expiry are enforced on every route that takes a key: a model outside the allow-list is 403
// model_not_allowed in the caller's protocol (Anthropic, OpenAI, the task envelope) before anything is held or sent
// upstream; a key past its expiry is 401 key_expired. GET /v1/key shows the key's own policy and what remains of
// each budget period, from what the real code paths recorded. Period boundaries are tested with any clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { periodReset, periodStart } from "../../src/accounts/budget-periods";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { ledgerOf, providerEnv } from "../llm/support";
import { client, startMediaGateway, type MediaGateway } from "../media/support";

const fake = startFakeLlmUpstream();
let gw: MediaGateway;
beforeAll(async () => {
  gw = await startMediaGateway(providerEnv(fake.url));
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

const chat = { model: "gpt-5.2", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
const messages = { model: "claude-opus-4-5", max_tokens: 50, messages: [{ role: "user", content: "hi" }] };
const post = (key: string, path: string, body: unknown) =>
  fetch(gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
async function keyWith(change: Parameters<MediaGateway["ctx"]["accounts"]["updateKey"]>[2], credits = 1000) {
  const k = await gw.account(credits);
  await gw.ctx.accounts.updateKey(k.accountId, k.keyId, change);
  return k;
}
/** What a refusal must leave untouched: no upstream request, no hold, no record, no task, the wallet as it was. */
async function untouched(accountId: string, upstreamBefore: number) {
  expect(fake.requests.length).toBe(upstreamBefore);
  const n = async (table: string) =>
    Number(
      (await gw.ctx.db.get<any>(
        sql`select count(*) as n from ${sql.identifier(table)} where account_id = ${accountId}`,
      ))!.n,
    );
  expect([await n("holds"), await n("usage_records"), await n("tasks")]).toEqual([0, 0, 0]);
  expect(await gw.ctx.ledger.balance(accountId)).toMatchObject({ held: 0, balance: 1000_000_000 });
}

describe("models allow-list", () => {
  test("LLM routes: another model is 403 model_not_allowed in OpenAI's and Anthropic's shape, nothing held or sent", async () => {
    const { accountId, key } = await keyWith({ models: ["claude-*"] });
    const before = fake.requests.length;
    const r = await post(key, "/v1/chat/completions", chat);
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({
      error: { code: "model_not_allowed", type: "permission_error", param: "model" },
    });
    await untouched(accountId, before);

    const other = await keyWith({ models: ["gpt-5.2"] });
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const a = await post(other.key, path, messages);
      expect([path, a.status]).toEqual([path, 403]);
      const body = (await a.json()) as any;
      expect(body).toMatchObject({ type: "error", error: { type: "permission_error" } });
      expect(body.error.message).toContain("may not call model claude-opus-4-5; it may call gpt-5.2");
    }
    await untouched(other.accountId, before);
  });

  test("an allowed model by id or prefix goes through", async () => {
    const { key } = await keyWith({ models: ["claude-*", "gpt-5.2"] });
    expect((await post(key, "/v1/chat/completions", chat)).status).toBe(200);
    expect((await post(key, "/v1/messages", messages)).status).toBe(200);
    const all = await keyWith({ models: ["*"] });
    expect((await post(all.key, "/v1/chat/completions", chat)).status).toBe(200);
  });

  test("media on both doors: 403 model_not_allowed in the envelope and the OpenAI shape, no task, no hold", async () => {
    const { accountId, key } = await keyWith({ models: ["claude-*"] });
    const c = client(gw, key);
    const native = await c.createTask("google/nano-banana", { prompt: "a fox" });
    expect(native.status).toBe(403);
    expect(native.json).toMatchObject({ code: 403, data: null, error_code: "model_not_allowed" });
    const alias = await c.call("POST", "/v1/images/generations", { model: "google/nano-banana", prompt: "a fox" });
    expect(alias.status).toBe(403);
    expect(alias.json).toMatchObject({ error: { code: "model_not_allowed", param: "model" } });
    await untouched(accountId, fake.requests.length);
    const allowed = await keyWith({ models: ["google/*"] });
    expect((await client(gw, allowed.key).createTask("google/nano-banana", { prompt: "a fox" })).status).toBe(200);
  });

  test("a vendor prefix does not reach another vendor's model through the short name of its id", async () => {
    // `bytedance/*` allows ByteDance's models sold as bytedance/…; fal's fal-ai/bytedance/… is found by the short
    // name bytedance/seedance/…, which the pattern would match: the key is held to the id the name resolves to.
    const { accountId, key } = await keyWith({ models: ["bytedance/*"] });
    const c = client(gw, key);
    const short = "bytedance/seedance/v1/pro/text-to-video";
    const native = await c.createTask(short, { prompt: "a fox" });
    expect([native.status, native.json.error_code]).toEqual([403, "model_not_allowed"]);
    expect(native.json.msg).toContain("fal-ai/bytedance/seedance/v1/pro/text-to-video");
    const alias = await c.call("POST", "/v1/videos", { model: short, prompt: "a fox" });
    expect([alias.status, alias.json.error?.code]).toEqual([403, "model_not_allowed"]);
    await untouched(accountId, fake.requests.length);
    // A short name listed as it is still allows the model it names, and an LLM alias matched by a pattern too.
    const exact = await keyWith({ models: [short, "claude-opus-4-5-2025*"] });
    expect((await client(gw, exact.key).createTask(short, { prompt: "a fox" })).status).toBe(200);
    expect((await post(exact.key, "/v1/messages", { ...messages, model: "claude-opus-4-5-20251101" })).status).toBe(
      200,
    );
  });

  test("an Idempotency-Key replay of another key's answer is refused to a key that may not call its model", async () => {
    // Idempotency keys are the account's: a replay of a kept answer must still pass the replaying key's model list.
    const { accountId, key } = await keyWith({});
    const replay = (k: string) =>
      fetch(gw.url + "/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${k}`, "content-type": "application/json", "idempotency-key": "shared-1" },
        body: JSON.stringify(chat),
      });
    const first = await replay(key);
    expect(first.status).toBe(200);
    const answer = await first.text();
    await ledgerOf(gw, accountId, 10_000); // the answer is kept once the call has ended
    const held = await gw.ctx.accounts.createKey(accountId, { name: "agent", models: ["claude-*"] });
    const refused = await replay(held.key);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "model_not_allowed" } });
    const allowed = await gw.ctx.accounts.createKey(accountId, { name: "peer", models: ["gpt-5.2"] });
    const again = await replay(allowed.key);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(await again.text()).toBe(answer);
  });
});

describe("expiry", () => {
  test("past its expiry a key is 401 key_expired on every door, before anything is held", async () => {
    const { accountId, keyId, key } = await keyWith({ expiresAt: Date.now() + 3_600_000 });
    expect((await post(key, "/v1/chat/completions", chat)).status).toBe(200);
    // Its charge written and its float back in the wallet (LEDGER_FLOAT_IDLE_MS after the call): what is held
    // from here on would be the refused calls'.
    await ledgerOf(gw, accountId, 10_000);
    const spent = (await gw.ctx.ledger.balance(accountId))!;
    expect(spent.held).toBe(0);
    // The hour passes: the stored expiry is moved into the past (a PATCH refuses a past expiry, by design).
    await gw.ctx.db.run(sql`update api_keys set expires_at = ${Date.now() - 1} where id = ${keyId}`);
    await gw.ctx.accounts.updateKey(accountId, keyId, {}); // this process's cache, as another process's would lapse
    const before = fake.requests.length;
    const o = await post(key, "/v1/chat/completions", chat);
    expect(o.status).toBe(401);
    expect(await o.json()).toMatchObject({ error: { code: "key_expired", type: "authentication_error" } });
    const a = await post(key, "/v1/messages", messages);
    expect(a.status).toBe(401);
    expect(((await a.json()) as any).error.message).toContain("expired at");
    const t = await client(gw, key).createTask("google/nano-banana", { prompt: "a fox" });
    expect(t.json).toMatchObject({ code: 401, error_code: "key_expired" });
    expect((await fetch(gw.url + "/v1/key", { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect(fake.requests.length).toBe(before);
    expect(await gw.ctx.ledger.balance(accountId)).toEqual(spent);
  });
});

describe("GET /v1/key", () => {
  test("the key's policy, and per budget period what it spent (LLM and media) and what remains", async () => {
    const { accountId, keyId, key } = await keyWith({
      models: ["gpt-5.2", "google/*"],
      budget: { day: 100_000_000, lifetime: 500_000_000 },
    });
    expect((await post(key, "/v1/chat/completions", chat)).status).toBe(200);
    const c = client(gw, key);
    const task = await c.createTask("google/nano-banana", { prompt: "a fox" });
    await c.waitRecord(task.json.data.taskId);
    // The call's charge written first: the route waits 250 ms at most for it, less than a busy machine may take.
    await ledgerOf(gw, accountId, 10_000);
    const r = await fetch(gw.url + "/v1/key", { headers: { authorization: `Bearer ${key}` } });
    expect(r.status).toBe(200);
    const status = (await r.json()) as any;
    // What the ledger took from the wallet is what the key spent.
    const b = (await gw.ctx.ledger.balance(accountId))!;
    const spent = (1000_000_000 - b.balance) / 1_000_000;
    expect(spent).toBeGreaterThan(20); // the task's 20 credits and the call's
    expect(status).toMatchObject({
      id: keyId,
      account_id: accountId,
      models: ["gpt-5.2", "google/*"],
      expires_at: null,
      rate_limit: { own: false },
    });
    expect(status.budget.day).toEqual({
      limit_credits: 100,
      spent_credits: spent,
      remaining_credits: 100 - spent,
      resets_at: new Date(periodReset("day", Date.now())!).toISOString(),
    });
    expect(status.budget.lifetime).toMatchObject({ limit_credits: 500, spent_credits: spent, resets_at: null });
    expect(Object.keys(status.budget)).toEqual(["day", "lifetime"]);
  });
});

describe("budget periods (UTC calendar, any clock)", () => {
  const at = (s: string) => Date.parse(s);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  test.each([
    // now, day start, week start (Monday), month start, next day, next week, next month
    [
      "2026-11-27T23:59:59.999Z",
      "2026-11-27T00:00:00.000Z",
      "2026-11-23T00:00:00.000Z",
      "2026-11-01T00:00:00.000Z",
      "2026-11-28T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
    ],
    [
      "2026-11-30T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-11-01T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
      "2026-12-07T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
    ],
    [
      "2026-11-29T12:00:00.000Z",
      "2026-11-29T00:00:00.000Z",
      "2026-11-23T00:00:00.000Z",
      "2026-11-01T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
    ],
    [
      "2026-12-31T23:00:00.000Z",
      "2026-12-31T00:00:00.000Z",
      "2026-12-28T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
      "2027-01-04T00:00:00.000Z",
      "2027-01-01T00:00:00.000Z",
    ],
    [
      "2028-02-29T08:00:00.000Z",
      "2028-02-29T00:00:00.000Z",
      "2028-02-28T00:00:00.000Z",
      "2028-02-01T00:00:00.000Z",
      "2028-03-01T00:00:00.000Z",
      "2028-03-06T00:00:00.000Z",
      "2028-03-01T00:00:00.000Z",
    ],
  ])("at %s", (now, day, week, month, nextDay, nextWeek, nextMonth) => {
    const t = at(now);
    expect([iso(periodStart("day", t)), iso(periodStart("week", t)), iso(periodStart("month", t))]).toEqual([
      day,
      week,
      month,
    ]);
    expect([
      iso(periodReset("day", t)),
      iso(periodReset("week", t)),
      iso(periodReset("month", t)),
      periodReset("lifetime", t),
    ]).toEqual([nextDay, nextWeek, nextMonth, null]);
    expect(periodStart("lifetime", t)).toBe(0);
  });
});
