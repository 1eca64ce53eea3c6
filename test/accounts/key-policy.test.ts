// A key's policy (name, limits, models, expiry, budget) is set at creation and changed with PATCH, all read by one
// function (accounts/policy.ts): the same bad input gets the same 422 naming the field everywhere, and nothing is
// written; /openapi.json describes the fields. On SQLite and Postgres, since the policy is stored. The CLI's
// key:update, and a change reaching another process, are in key-policy-cli.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import { databaseFor, dialects, skipNote } from "../support/services";
import { jsonOf, type AnswerOf } from "../support/json";
import type { KeyView } from "../../src/accounts/model";

const patch = (body: unknown) => ({ method: "PATCH", body: JSON.stringify(body) });
const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
const future = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19) + "Z";

// Each bad input with the field the 422 must name.
const BAD: Array<[string, Record<string, unknown>, string]> = [
  ["negative budget", { budget: { day: -1 } }, "budget.day"],
  ["budget not a number", { budget: { week: "lots" } }, "budget.week"],
  ["budget a boolean", { budget: { month: true } }, "budget.month"],
  ["budget above the ledger's range", { budget: { lifetime: 1e16 } }, "budget.lifetime"],
  ["budget with 7 decimals", { budget: { day: 0.0000001 } }, "budget.day"],
  ["unknown period", { budget: { fortnight: 5 } }, "budget.fortnight"],
  ["budget not an object", { budget: [5] }, "budget"],
  ["empty models list", { models: [] }, "models"],
  ["empty model pattern", { models: ["gpt-5", ""] }, "models.1"],
  ["malformed pattern", { models: ["cl*ude"] }, "models.0"],
  ["pattern with a space", { models: ["claude *"] }, "models.0"],
  ["expiry in the past", { expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
  ["expiry not a time", { expires_at: "next tuesday" }, "expires_at"],
  ["an unknown field", { budgets: { day: 5 } }, "budgets"],
  ["an unknown period beside a known one", { budget: { day: 1, fortnight: 5 } }, "budget.fortnight"],
];

for (const d of dialects) {
  describe.skipIf(!d.available)(`key policy (${d.name})`, () => {
    skipNote("Postgres", d.available, "key policy on Postgres");
    let gw: TestGateway;
    let drop: () => Promise<void>;
    let accountId: string;
    let keyId: string;
    const row = async (id: string) => gw.ctx.db.get<any>(sql`select * from api_keys where id = ${id}`);
    beforeAll(async () => {
      const db = await databaseFor(d.name);
      drop = db.drop;
      gw = await startGateway({ DATABASE_URL: db.url });
      ({ accountId, keyId } = await gw.account(100));
    });
    afterAll(async () => {
      await gw.stop();
      await drop();
    });

    test("creation takes models, expiry and budget; the key's view shows them", async () => {
      const r = await gw.admin(
        `/admin/v1/accounts/${accountId}/keys`,
        post({
          name: "agent",
          models: ["claude-*", "gpt-5.2"],
          expires_at: future,
          budget: { day: 12.5, lifetime: 400 },
        }),
      );
      expect(r.status).toBe(201);
      expect(await r.json()).toMatchObject({
        name: "agent",
        models: ["claude-*", "gpt-5.2"],
        expires_at: future.replace("Z", ".000Z"),
        budget: { day: 12.5, lifetime: 400 },
      });
    });

    test("PATCH changes only the fields given; null puts one back to its default", async () => {
      let r = await gw.admin(
        `/admin/v1/accounts/${accountId}/keys/${keyId}`,
        patch({
          name: "renamed",
          rate_limit: { requests: 7, window_seconds: 60 },
          max_concurrent_tasks: 1,
          models: ["*"],
          budget: { week: 3.000001 },
        }),
      );
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({
        id: keyId,
        name: "renamed",
        rate_limit: { requests: 7, window_seconds: 60 },
        max_concurrent_tasks: 1,
        models: ["*"],
        budget: { week: 3.000001 },
      });
      expect((await row(keyId)).budget_week).toBe(3_000_001); // exact micro-credits

      r = await gw.admin(
        `/admin/v1/accounts/${accountId}/keys/${keyId}`,
        patch({ budget: { day: 1, week: null }, rate_limit: null }),
      );
      const view = await jsonOf<AnswerOf<typeof KeyView>>(r);
      expect(view).toMatchObject({
        name: "renamed",
        rate_limit: null,
        max_concurrent_tasks: 1,
        models: ["*"],
        budget: { day: 1 },
      });
      expect(view.budget).toEqual({ day: 1 });

      r = await gw.admin(
        `/admin/v1/accounts/${accountId}/keys/${keyId}`,
        patch({ budget: null, models: null, max_concurrent_tasks: null }),
      );
      expect(await r.json()).toMatchObject({ budget: {}, models: null, max_concurrent_tasks: null, name: "renamed" });
    });

    test.each(BAD)("PATCH with %s: 422 naming %s, nothing written", async (_what, body, field) => {
      const before = await row(keyId);
      const r = await gw.admin(
        `/admin/v1/accounts/${accountId}/keys/${keyId}`,
        patch({ name: "should-not-stick", ...body }),
      );
      expect(r.status).toBe(422);
      const e = ((await r.json()) as any).error;
      expect(e.param).toBe(field);
      expect(e.message).toStartWith(`${field}: `);
      expect(await row(keyId)).toEqual(before);
    });

    test.each(BAD)("creation with %s: 422 naming %s, no key made", async (_what, body, field) => {
      const count = async () => (await gw.ctx.accounts.listKeys(accountId)).length;
      const before = await count();
      const r = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, post({ name: "bad", ...body }));
      expect(r.status).toBe(422);
      expect(((await r.json()) as any).error.param).toBe(field);
      expect(await count()).toBe(before);
    });

    test("a rate limit out of range or half given, an unknown field: 422 naming it", async () => {
      for (const [body, field] of [
        [{ rate_limit: { requests: 0, window_seconds: 10 } }, "rate_limit.requests"],
        [{ rate_limit: { requests: 5 } }, "rate_limit"],
        [{ max_concurrent_tasks: 10_001 }, "max_concurrent_tasks"],
        [{ name: "" }, "name"],
      ] as const) {
        const r = await gw.admin(`/admin/v1/accounts/${accountId}/keys/${keyId}`, patch(body));
        expect([body, r.status, ((await r.json()) as any).error.param]).toEqual([body, 422, field]);
      }
    });

    test("an unknown key, another account's key: 404; a revoked key: 409, unchanged", async () => {
      const other = await gw.account(1);
      expect((await gw.admin(`/admin/v1/accounts/${accountId}/keys/key_nope`, patch({ name: "x" }))).status).toBe(404);
      expect((await gw.admin(`/admin/v1/accounts/${accountId}/keys/${other.keyId}`, patch({ name: "x" }))).status).toBe(
        404,
      );
      await gw.admin(`/admin/v1/accounts/${other.accountId}/keys/${other.keyId}`, { method: "DELETE" });
      const r = await gw.admin(`/admin/v1/accounts/${other.accountId}/keys/${other.keyId}`, patch({ name: "x" }));
      expect(r.status).toBe(409);
      expect(((await r.json()) as any).error.code).toBe("key_revoked");
      expect((await row(other.keyId)).name).toBe("test");
    });
  });
}

describe("/openapi.json", () => {
  test("describes the policy fields of key creation and PATCH: types, ranges, periods", async () => {
    const gw = await startGateway();
    try {
      const doc = (await (await fetch(gw.url + "/openapi.json")).json()) as any;
      const schemaOf = (op: any) => op.requestBody.content["application/json"].schema;
      const create = schemaOf(doc.paths["/admin/v1/accounts/{id}/keys"].post);
      const patch = schemaOf(doc.paths["/admin/v1/accounts/{id}/keys/{keyId}"].patch);
      for (const s of [create, patch]) {
        expect(Object.keys(s.properties)).toEqual(
          expect.arrayContaining(["name", "rate_limit", "max_concurrent_tasks", "models", "expires_at", "budget"]),
        );
        const budget = s.properties.budget.anyOf[0];
        expect(Object.keys(budget.properties)).toEqual(["day", "week", "month", "lifetime"]);
        expect(budget.properties.day.anyOf[0]).toMatchObject({ type: "number", minimum: 0, maximum: 9007199254 });
        expect(s.properties.models.anyOf[0]).toMatchObject({ type: "array", minItems: 1, items: { type: "string" } });
        expect(s.properties.expires_at.anyOf[0]).toMatchObject({ type: "string", format: "date-time" });
      }
      expect(doc.paths["/v1/key"].get).toBeDefined();
    } finally {
      await gw.stop();
    }
  });
});
