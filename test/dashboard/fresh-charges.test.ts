// An LLM call's charge and usage record wait up to LEDGER_COMMIT_INTERVAL_MS to be committed with others
// (src/ledger/llm-ledger.ts). Whoever reads them on this instance drains that queue first, so a call just answered is
// on the dashboard's Usage and Wallet pages and in the admin account view. The interval here is the longest allowed
// (1 s), far longer than the reads take: what they show was committed because they asked for it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { LlmLedger } from "../../src/ledger/llm-ledger";
import { usageRecord } from "../support/llm-ledger";
import type { Finish } from "../../src/llm/records";
import { MICROS_PER_CREDIT as C } from "../../src/ledger/units";
import { startGateway, type TestGateway } from "../support/gateway";
import { dashboardUser, signIn } from "../support/dashboard";
import { jsonOf, type AnswerOf } from "../support/json";
import type { AccountView, CreditsResult } from "../../src/accounts/model";
import type { CreditsResponse } from "../../src/ledger/routes";

let gw: TestGateway;
let user: Awaited<ReturnType<typeof dashboardUser>>;
let session: Awaited<ReturnType<typeof signIn>>;
let ledger: LlmLedger<Finish>;

beforeAll(async () => {
  gw = await startGateway({ LEDGER_COMMIT_INTERVAL_MS: "1000", LEDGER_FLOAT_IDLE_MS: "60000" });
  user = await dashboardUser(gw, 100);
  session = await signIn(gw, user.email);
  ledger = gw.ctx.llmLedger;
  // The first call grows the float (committed at once); the calls below reserve from it in memory.
  await ledger
    .hold(user.accountId, C, "req_warm")
    .then((r) => ledger.postOrVoid({ hold: r, charge: 0, record: record("req_warm", 0) }));
  await ledger.drain();
});
afterAll(() => gw.stop());

const record = (requestId: string, cost: number) =>
  usageRecord(user.accountId, requestId, cost, { keyId: user.keyId, model: "gpt-5.2" });

/** A call answered just now and charged `credits`: its charge and record are queued, not yet committed. */
async function answered(requestId: string, credits: number) {
  const hold = await ledger.hold(user.accountId, C, requestId); // the float's, or a growth committed at once
  ledger.postOrVoid({ hold, charge: credits * C, record: record(requestId, credits * C) });
}

const page = async (path: string) => {
  const r = await fetch(gw.url + path, { headers: { cookie: session.cookie } });
  expect(r.status).toBe(200);
  return r.text();
};

test("the Usage page shows a call answered a moment ago", async () => {
  await answered("req_fresh_usage", 3);
  const started = performance.now();
  const html = await page("/dashboard/usage?request_id=req_fresh_usage");
  expect(html).toContain('id="request-log"');
  expect(html).toContain("req_fresh_usage");
  expect(performance.now() - started).toBeLessThan(900); // it started the commit, it did not wait for the interval
});

test("the Wallet page's balance and ledger include a call answered a moment ago", async () => {
  await answered("req_fresh_wallet", 7);
  const html = await page("/dashboard");
  expect(html).toContain("<td>usage</td>");
  expect(html).toContain(">-7</td>"); // the usage entry; balance 100 - 3 - 7
  expect(html).toContain("90 credits</td>");
});

test("the admin account view includes a call answered a moment ago", async () => {
  await answered("req_fresh_admin", 5);
  const r = await gw.admin(`/admin/v1/accounts/${user.accountId}`);
  expect(r.status).toBe(200);
  const view = await jsonOf<AnswerOf<typeof AccountView>>(r);
  expect(view.balance_credits).toBe(85);
  expect(view.ledger!.filter((e) => e.kind === "usage").map((e) => e.credits)).toContain(-5);
});

test("GET /v1/credits includes a call answered a moment ago, charged above what it reserved", async () => {
  await answered("req_fresh_credits", 4); // reserved 1 credit, charged 4: the other 3 come off the balance
  const r = await fetch(gw.url + "/v1/credits", { headers: { authorization: `Bearer ${user.key}` } });
  expect(r.status).toBe(200);
  const { credits, held_credits } = await jsonOf<AnswerOf<typeof CreditsResponse>>(r);
  expect(credits + held_credits).toBe(100 - 3 - 7 - 5 - 4);
});

test("an admin top-up answers with the balance after calls answered a moment ago; a correction gets the idle float back", async () => {
  await answered("req_fresh_topup", 2);
  const topup = await gw.admin(`/admin/v1/accounts/${user.accountId}/credits`, {
    method: "POST",
    body: JSON.stringify({ credits: 10 }),
  });
  expect(topup.status).toBe(200);
  expect((await jsonOf<AnswerOf<typeof CreditsResult>>(topup)).balance_credits).toBe(100 - 3 - 7 - 5 - 4 - 2 + 10);
  // Take away every credit: more than is available beside the float, which no call is using.
  const { held } = (await gw.ctx.ledger.balance(user.accountId))!;
  expect(held).toBeGreaterThan(0);
  const correction = await gw.admin(`/admin/v1/accounts/${user.accountId}/credits`, {
    method: "POST",
    body: JSON.stringify({ credits: -89, kind: "correction" }),
  });
  expect(correction.status).toBe(200);
  expect(await correction.json()).toMatchObject({ balance_credits: 0, held_credits: 0, credits: 0 });
  expect(await gw.ctx.ledger.check(user.accountId)).toEqual([]);
});
