import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import type { AccountView, KeyCreated, KeyList, KeyView, WebhookKey } from "../../src/accounts/model";
import { errorOf, jsonOf, type AnswerOf } from "../support/json";

let gw: TestGateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.stop());

const count = async (table: string) =>
  Number((await gw.ctx.db.get<any>(sql.raw(`select count(*) as n from ${table}`)))!.n);
const json = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });

describe("admin API", () => {
  test("create account, key, top-up, webhook key; the account view shows balance, holds and ledger", async () => {
    const created = await gw.admin("/admin/v1/accounts", json({ name: "Acme", credits: 1500 }));
    expect(created.status).toBe(201);
    const acct = await jsonOf<AnswerOf<typeof AccountView>>(created);
    expect(acct).toMatchObject({ name: "Acme", credits: 1500, held_credits: 0 });
    expect(acct.id).toStartWith("acct_");

    const k = await gw.admin(
      `/admin/v1/accounts/${acct.id}/keys`,
      json({ name: "ci", rate_limit: { requests: 50, window_seconds: 60 }, max_concurrent_tasks: 4 }),
    );
    expect(k.status).toBe(201);
    const key = await jsonOf<AnswerOf<typeof KeyCreated>>(k);
    expect(key.key).toStartWith("sk-sy-");
    expect(key).toMatchObject({
      name: "ci",
      rate_limit: { requests: 50, window_seconds: 60 },
      max_concurrent_tasks: 4,
    });
    // Stored only as a hash: the plaintext appears nowhere in the database.
    const stored = await gw.ctx.db.all<any>(sql`select * from api_keys where id = ${key.id}`);
    expect(JSON.stringify(stored)).not.toContain(key.key);
    // Listed by prefix only.
    const list = await jsonOf<AnswerOf<typeof KeyList>>(await gw.admin(`/admin/v1/accounts/${acct.id}/keys`));
    expect(list.data[0]!.prefix).toBe(key.key.slice(0, 12));
    expect(JSON.stringify(list)).not.toContain(key.key);

    const top = await gw.admin(`/admin/v1/accounts/${acct.id}/credits`, json({ credits: 0.25, reason: "promo" }));
    expect(await top.json()).toMatchObject({ credits: 1500.25 });

    const wh = await gw.admin(`/admin/v1/accounts/${acct.id}/webhook-key`, { method: "POST" });
    const { key: secret } = await jsonOf<AnswerOf<typeof WebhookKey>>(wh);
    expect(secret).toStartWith("whsec_");
    const again = await jsonOf<AnswerOf<typeof WebhookKey>>(
      await gw.admin(`/admin/v1/accounts/${acct.id}/webhook-key`, { method: "POST" }),
    );
    expect(again.key).not.toBe(secret); // rotation

    const view = await jsonOf<AnswerOf<typeof AccountView>>(await gw.admin(`/admin/v1/accounts/${acct.id}`));
    expect(view).toMatchObject({ credits: 1500.25, has_webhook_key: true, holds: [] });
    expect(view.ledger!.map((e) => [e.kind, e.credits])).toEqual([
      ["topup", 0.25],
      ["topup", 1500],
    ]);
    expect(JSON.stringify(view)).not.toContain(again.key);

    const check = await (await gw.admin("/admin/v1/ledger/check")).json();
    expect(check).toEqual({ ok: true, mismatches: [] });
  });

  test("revoking a key makes it refused at once", async () => {
    const { accountId, key, keyId } = await gw.account(10);
    const ok = await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } });
    expect(ok.status).toBe(200);
    const r = await gw.admin(`/admin/v1/accounts/${accountId}/keys/${keyId}`, { method: "DELETE" });
    expect((await jsonOf<AnswerOf<typeof KeyView>>(r)).revoked_at).toBeString();
    const refused = await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
  });

  test.each([
    ["negative initial credits", "/admin/v1/accounts", { name: "x", credits: -5 }, 422, "credits"],
    ["missing name", "/admin/v1/accounts", { credits: 5 }, 422, "name"],
    ["too many decimals", "/admin/v1/accounts", { name: "x", credits: 0.0000001 }, 422, "credits"],
  ])("bad input: %s → %i, nothing written", async (_what, path, body, status, field) => {
    const before = await count("accounts");
    const r = await gw.admin(path, json(body));
    expect(r.status).toBe(status);
    const e = await errorOf(r);
    expect(e.error.message).toContain(field);
    expect(e.request_id).toBe(r.headers.get("x-request-id")!);
    expect(await count("accounts")).toBe(before);
  });

  test("bad input on existing accounts: negative top-up, unknown account, bad JSON, zero", async () => {
    const { accountId } = await gw.account(10);
    const before = [await count("entries"), await count("api_keys")];
    const neg = await gw.admin(`/admin/v1/accounts/${accountId}/credits`, json({ credits: -1 }));
    expect(neg.status).toBe(422);
    expect((await errorOf(neg)).error.message).toContain("negative");
    const zero = await gw.admin(`/admin/v1/accounts/${accountId}/credits`, json({ credits: 0 }));
    expect(zero.status).toBe(422);
    const unknown = await gw.admin(`/admin/v1/accounts/acct_nope/credits`, json({ credits: 5 }));
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).error.code).toBe("account_not_found");
    const unknownKey = await gw.admin(`/admin/v1/accounts/acct_nope/keys`, json({ name: "k" }));
    expect(unknownKey.status).toBe(404);
    const badJson = await gw.admin(`/admin/v1/accounts/${accountId}/credits`, { method: "POST", body: "{credits: 5" });
    expect(badJson.status).toBe(400);
    expect((await errorOf(badJson)).error.code).toBe("invalid_json");
    const badLimit = await gw.admin(
      `/admin/v1/accounts/${accountId}/keys`,
      json({ rate_limit: { requests: 0, window_seconds: 10 } }),
    );
    expect(badLimit.status).toBe(422);
    expect([await count("entries"), await count("api_keys")]).toEqual(before);
  });

  test("the admin API refuses a missing or wrong token, and is off without ADMIN_TOKEN", async () => {
    expect((await fetch(gw.url + "/admin/v1/accounts")).status).toBe(401);
    expect((await fetch(gw.url + "/admin/v1/accounts", { headers: { authorization: "Bearer nope" } })).status).toBe(
      401,
    );
    const off = await startGateway({ ADMIN_TOKEN: "" });
    const r = await fetch(off.url + "/admin/v1/accounts", { headers: { authorization: "Bearer x" } });
    expect(r.status).toBe(403);
    expect((await errorOf(r)).error.code).toBe("admin_disabled");
    await off.stop();
  });

  test("the token is checked before the body: without it, an invalid body gets 401/403, not a 422 naming fields", async () => {
    const post = (url: string, path: string, authorization?: string) =>
      fetch(url + path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
      });
    const { accountId } = await gw.account(1);
    for (const path of ["/admin/v1/accounts", `/admin/v1/accounts/${accountId}/credits`]) {
      for (const authorization of [undefined, "Bearer nope"]) {
        const r = await post(gw.url, path, authorization);
        expect(r.status).toBe(401);
        const e = await errorOf(r);
        expect(e.error).toMatchObject({ code: "invalid_admin_token", message: "Missing or wrong admin token." });
        expect(e.request_id).toBe(r.headers.get("x-request-id")!);
      }
    }
    const off = await startGateway({ ADMIN_TOKEN: "" });
    try {
      const r = await post(off.url, "/admin/v1/accounts", "Bearer x");
      expect(r.status).toBe(403);
      expect((await errorOf(r)).error.code).toBe("admin_disabled");
    } finally {
      await off.stop();
    }
    // with the token, the same body is still validated
    expect((await gw.admin("/admin/v1/accounts", json({}))).status).toBe(422);
  });
});
