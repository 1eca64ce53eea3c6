// The admin API takes JSON objects only. A body that is anything else (a number, an array, null, a string, text or
// a form, bytes that are not UTF-8) is a 400 and nothing is created: before, key creation (all of whose fields are
// optional) made a default key from `123`, and webhook-key rotation rotated on any body. No body at all is the same
// as `{}`: a route whose fields are all optional takes it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import type { KeyView } from "../../src/accounts/model";
import { errorOf, jsonOf, type AnswerOf } from "../support/json";

let gw: TestGateway;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway();
  ({ accountId } = await gw.account(10));
});
afterAll(() => gw.stop());

const count = async (table: string) =>
  Number((await gw.ctx.db.get<{ n: number }>(sql.raw(`select count(*) as n from ${table}`)))!.n);
const webhookKeyOf = async () =>
  (
    await gw.ctx.db.get<{ webhook_secret: string | null }>(
      sql`select webhook_secret from accounts where id = ${accountId}`,
    )
  )?.webhook_secret ?? null;

const notObjects: Array<[label: string, body: Bun.BodyInit, type: string]> = [
  ["a number", "123", "application/json"],
  ["an array", "[]", "application/json"],
  ["null", "null", "application/json"],
  ["a string", '"name"', "application/json"],
  ["text/plain", '{"name":"x"}', "text/plain"],
  ["a form", "name=x", "application/x-www-form-urlencoded"],
  ["bytes", '{"name":"x"}', "application/octet-stream"],
  [
    "invalid UTF-8 in a JSON string",
    new Uint8Array([...Buffer.from('{"name":"'), 0xff, 0xfe, ...Buffer.from('"}')]),
    "application/json",
  ],
];

const routes = () => [
  `/admin/v1/accounts/${accountId}/keys`,
  "/admin/v1/accounts",
  `/admin/v1/accounts/${accountId}/credits`,
  `/admin/v1/accounts/${accountId}/webhook-key`,
  `/admin/v1/accounts/${accountId}/users`,
];

test.each(notObjects)(
  "%s: a 400 on every admin POST route, and nothing is created or changed",
  async (_label, body, type) => {
    const before = {
      keys: await count("api_keys"),
      accounts: await count("accounts"),
      entries: await count("entries"),
      users: await count("users"),
      webhook: await webhookKeyOf(),
    };
    for (const path of routes()) {
      const r = await gw.admin(path, { method: "POST", body, headers: { "content-type": type } });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect((await errorOf(r)).error).toMatchObject({
        type: "invalid_request_error",
        code: expect.stringMatching(/^invalid_(request|json)$/),
      });
    }
    const after = {
      keys: await count("api_keys"),
      accounts: await count("accounts"),
      entries: await count("entries"),
      users: await count("users"),
      webhook: await webhookKeyOf(),
    };
    expect(after).toEqual(before);
  },
);

test("a JSON object, or no body at all where every field is optional, is taken as before", async () => {
  const keys = await count("api_keys");
  const named = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
    method: "POST",
    body: JSON.stringify({ name: "ci" }),
  });
  expect(named.status).toBe(201);
  expect((await jsonOf<AnswerOf<typeof KeyView>>(named)).name).toBe("ci");
  const charset = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json; charset=utf-8" },
  });
  expect(charset.status).toBe(201);
  const bare = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST" });
  expect(bare.status).toBe(201);
  const rotated = await gw.admin(`/admin/v1/accounts/${accountId}/webhook-key`, { method: "POST" });
  expect(rotated.status).toBe(201);
  expect(await count("api_keys")).toBe(keys + 3);
  // A required field is still the schema's 422, naming it.
  const account = await gw.admin("/admin/v1/accounts", { method: "POST" });
  expect(account.status).toBe(422);
  expect((await errorOf(account)).error.param).toBe("name");
});

test("the body's message says what is wrong", async () => {
  const r = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, { method: "POST", body: "[]" });
  expect((await errorOf(r)).error.message).toBe("The request body must be a JSON object.");
  const t = await gw.admin(`/admin/v1/accounts/${accountId}/keys`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "text/plain" },
  });
  expect((await errorOf(t)).error.message).toBe(
    "The request body must be a JSON object, sent as content-type: application/json.",
  );
});
