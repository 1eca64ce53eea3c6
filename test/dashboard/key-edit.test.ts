// Settings → API Keys → Edit: a customer changes their own key's name, limits (never looser than the defaults),
// models, expiry and budget. The form goes through the admin API's parseKeyPolicy: the same bad input is refused
// with the same message, nothing written. Another account's key cannot be opened or changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";

let gw: TestGateway;
let user: Awaited<ReturnType<typeof dashboardUser>>;
let session: Awaited<ReturnType<typeof signIn>>;
beforeAll(async () => {
  gw = await startGateway({ DEFAULT_RATE_LIMIT: "5/10s", DEFAULT_MAX_CONCURRENT_TASKS: "2" });
  user = await dashboardUser(gw);
  session = await signIn(gw, user.email);
});
afterAll(() => gw.stop());

const KEYS = "/dashboard/settings/api-keys";
const edit = (keyId: string, fields: Record<string, string>) =>
  fetch(gw.url + `${KEYS}/${keyId}`, {
    method: "POST",
    headers: { cookie: session.cookie, origin: gw.url },
    body: new URLSearchParams({ _csrf: session.csrf, name: "edited", ...fields }),
    redirect: "manual",
  });
const row = async (keyId: string) => gw.ctx.db.get<any>(sql`select * from api_keys where id = ${keyId}`);

describe("editing a key on the dashboard", () => {
  test("the form opens filled in; saving changes the key and the list shows it", async () => {
    await gw.ctx.accounts.updateKey(user.accountId, user.keyId, { budget: { week: 40_000_000 }, models: ["gpt-5.2"] });
    const form = await (await fetch(gw.url + `${KEYS}/${user.keyId}`, { headers: { cookie: session.cookie } })).text();
    expect(form).toContain('name="budget_week" inputmode="decimal" value="40"');
    expect(form).toContain('name="models" value="gpt-5.2"');

    const r = await edit(user.keyId, {
      requests: "2",
      window_seconds: "10",
      max_concurrent_tasks: "1",
      models: "claude-*, gpt-5.2",
      expires_at: "2099-01-31T12:00",
      budget_day: "2.5",
      budget_week: "",
      budget_month: "",
      budget_lifetime: "300",
    });
    expect(r.status).toBe(303);
    const k = (await gw.ctx.accounts.listKeys(user.accountId)).find((x) => x.id === user.keyId)!;
    expect(k).toMatchObject({
      name: "edited",
      rate_limit: { requests: 2, window_seconds: 10 },
      max_concurrent_tasks: 1,
      models: ["claude-*", "gpt-5.2"],
      expires_at: "2099-01-31T12:00:00.000Z",
    });
    expect(k.budget).toEqual({ day: 2.5, lifetime: 300 });
    const list = await (await fetch(gw.url + KEYS, { headers: { cookie: session.cookie } })).text();
    expect(list).toContain("2.5 credits per day, 300 credits per lifetime");
  });

  test("empty fields put the defaults back", async () => {
    expect((await edit(user.keyId, {})).status).toBe(303);
    expect((await gw.ctx.accounts.listKeys(user.accountId)).find((x) => x.id === user.keyId)).toMatchObject({
      rate_limit: null,
      max_concurrent_tasks: null,
      models: null,
      expires_at: null,
      budget: {},
    });
  });

  test.each([
    ["a negative budget", { budget_day: "-1" }, { budget: { day: "-1" } }],
    ["a budget that is not a number", { budget_month: "ten" }, { budget: { month: "ten" } }],
    ["a malformed pattern", { models: "gpt-*-mini" }, { models: ["gpt-*-mini"] }],
    ["an empty pattern", { models: "gpt-5.2,," }, { models: ["gpt-5.2", "", ""] }],
    ["an expiry in the past", { expires_at: "2020-01-01T00:00" }, { expires_at: "2020-01-01T00:00Z" }],
  ])("%s: 422 with the admin API's message, nothing written", async (_what, fields, api) => {
    const before = await row(user.keyId);
    const r = await edit(user.keyId, fields);
    expect(r.status).toBe(422);
    const a = await gw.admin(`/admin/v1/accounts/${user.accountId}/keys/${user.keyId}`, {
      method: "PATCH",
      body: JSON.stringify(api),
    });
    const message = ((await a.json()) as any).error.message as string;
    expect(await r.text()).toContain(Bun.escapeHTML(message));
    expect(await row(user.keyId)).toEqual(before);
  });

  test("limits looser than the default: 422 pointing to the operator, nothing written", async () => {
    const before = await row(user.keyId);
    const r = await edit(user.keyId, { requests: "6", window_seconds: "10" });
    expect(r.status).toBe(422);
    expect(await r.text()).toContain("not looser");
    expect(await row(user.keyId)).toEqual(before);
  });

  test("another account's key, or a revoked one: 404, unchanged", async () => {
    const theirs = await gw.account(5);
    expect((await fetch(gw.url + `${KEYS}/${theirs.keyId}`, { headers: { cookie: session.cookie } })).status).toBe(404);
    expect((await edit(theirs.keyId, { budget_day: "1" })).status).toBe(404);
    expect((await row(theirs.keyId)).budget_day).toBeNull();
    await gw.ctx.accounts.revokeKey(user.accountId, user.keyId);
    expect((await edit(user.keyId, { budget_day: "1" })).status).toBe(404);
    expect((await row(user.keyId)).budget_day).toBeNull();
  });
});
