// A key's budget is a ceiling, not an estimate: a call whose upstream states more usage than its hold (input the
// gateway could not see, more searches than were held, a long-context tier) must not take the key past its cap.
// Such a call is charged at most what it held, natively and translated, and its record says why.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { ledgerOf, providerEnv } from "../llm/support";
import { startMediaGateway, type MediaGateway } from "../media/support";

const C = 1_000_000; // µcr per credit
const fake = startFakeLlmUpstream();
let gw: MediaGateway;
beforeAll(async () => {
  gw = await startMediaGateway(providerEnv(fake.url));
});
afterAll(async () => {
  await gw.stop();
  await fake.stop();
});

const post = (key: string, path: string, body: unknown) =>
  gw.post(key, path, body, { "anthropic-version": "2023-06-01" });
const keyStatus = async (key: string) =>
  (await (await fetch(gw.url + "/v1/key", { headers: { authorization: `Bearer ${key}` } })).json()) as any;

// A million prompt tokens the body never showed (a file the upstream fetched): 1,750 credits at gpt-5.2's price.
const hugeChatAnswer = JSON.stringify({
  id: "c1",
  object: "chat.completion",
  model: "gpt-5.2",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1_000_000, completion_tokens: 10, total_tokens: 1_000_010 },
});

for (const [door, path, body] of [
  [
    "native",
    "/v1/chat/completions",
    { model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "Hi" }] },
  ],
  ["translated", "/v1/messages", { model: "gpt-5.2", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }],
] as const) {
  test(`${door}: usage stated beyond the hold charges a budgeted key at most its hold; the key stays within its cap`, async () => {
    const { accountId, keyId, key } = await gw.account(3000);
    await gw.ctx.accounts.updateKey(accountId, keyId, { budget: { day: 5 * C } });
    fake.enqueue({ kind: "error", status: 200, body: hugeChatAnswer });
    const r = await post(key, path, body);
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    await gw.ctx.keyBudgets!.committedFor(keyId);
    const { calls, wallet } = await ledgerOf(gw, accountId, 10_000);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
    expect(calls[0]!.error).toContain("capped at the hold");
    expect(Number(wallet.balance)).toBe(3000 * C - calls[0]!.cost);
    const used = Number(
      (await gw.ctx.db.get<any>(sql`select used from key_budgets where key_id = ${keyId} and period = ${"day"}`))!.used,
    );
    expect(used).toBe(calls[0]!.cost);
    const day = (await keyStatus(key)).budget.day;
    expect(day.spent_credits).toBeLessThanOrEqual(day.limit_credits);
  });
}

test("a key without a budget is still charged what the upstream states (the wallet's rule)", async () => {
  const { accountId, key } = await gw.account(3000);
  fake.enqueue({ kind: "error", status: 200, body: hugeChatAnswer });
  const r = await post(key, "/v1/chat/completions", {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    messages: [{ role: "user", content: "Hi" }],
  });
  expect(r.status).toBe(200);
  await r.arrayBuffer();
  const { calls } = await ledgerOf(gw, accountId, 10_000);
  expect(calls[0]!.cost).toBeGreaterThan(calls[0]!.held);
});
