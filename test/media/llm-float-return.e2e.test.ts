// A media task right after LLM calls: this process's LLM float holds credits ahead for the wallet's next calls, and
// a task whose hold fits the wallet but not beside the float gets it back instead of a 402.
import { afterAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";
import { providerEnv } from "../llm/support";
import { client, startMediaGateway } from "./support";

const llm = startFakeLlmUpstream();
// Floats would otherwise go back after 20 ms in tests: keep them, as a busy wallet's would be.
const gw = await startMediaGateway({ ...providerEnv(llm.url), LEDGER_FLOAT_IDLE_MS: "600000" });
afterAll(async () => {
  await gw.stop();
  await llm.stop();
});

const chat = (key: string) =>
  fetch(gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "Hi" }] }),
  });

async function floats(accountId: string) {
  return gw.ctx.db.all<{ amount: number }>(
    sql`select amount from holds where account_id = ${accountId} and kind = ${"float"} and status = ${"pending"}`,
  );
}

test("an idle LLM float goes back so the task's hold fits; the task is created and the wallet adds up", async () => {
  const { accountId, key } = await gw.account(21); // a nano-banana task holds 20 credits
  const c = client(gw, key);
  expect((await chat(key)).status).toBe(200);
  expect(await floats(accountId)).toHaveLength(1); // reserved ahead, idle now
  const before = await c.credits();
  expect(before.credits).toBeLessThan(20); // what the wallet shows as available beside the float

  const { status, json } = await c.createTask("google/nano-banana", { prompt: "after a chat" });
  expect(status).toBe(200);
  expect(json.data.taskId).toBeString();
  expect(await floats(accountId)).toHaveLength(0);
  const after = await c.credits();
  expect(after.held_credits).toBe(20);
  expect(await gw.ctx.ledger.check(accountId)).toEqual([]);
});

test("a task that does not fit even without the float is still refused with 402, and the float is given back", async () => {
  const { accountId, key } = await gw.account(15);
  const c = client(gw, key);
  expect((await chat(key)).status).toBe(200);
  const { status, json } = await c.createTask("google/nano-banana", { prompt: "too dear" });
  expect(status).toBe(402);
  expect(json.code).toBe(402);
  expect(await floats(accountId)).toHaveLength(0);
  expect(await gw.ctx.ledger.check(accountId)).toEqual([]);
});
