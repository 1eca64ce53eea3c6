// A usage record's created_at is when its call ended, not when a later commit wrote it: with finishes held back for
// LEDGER_COMMIT_INTERVAL_MS (here the longest, 1 s), GET /v1/usage's from/to window and the dashboard's days would
// otherwise place a call up to an interval late (one ending at 23:59:59.5 on the next day).
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { startEnv, stopEnv, type Env } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { UsageList } from "../../src/llm/usage-api";

let e: Env;
beforeAll(async () => {
  e = await startEnv({ env: { LEDGER_COMMIT_INTERVAL_MS: "1000" } });
});
afterAll(() => stopEnv(e));

test("calls made between from and to are in that window of GET /v1/usage", async () => {
  const { key } = await e.gw.account(100);
  const client = new OpenAI({ apiKey: key, baseURL: `${e.gw.url}/v1`, maxRetries: 0 });
  const from = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { response } = await client.chat.completions
      .create({ model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    ids.push(response.headers.get("x-request-id")!);
  }
  const to = Date.now() + 1;
  await Bun.sleep(1100); // the interval has passed: committed by the timer, nobody asked for them
  const r = await fetch(`${e.gw.url}/v1/usage?from=${from}&to=${to}`, { headers: { authorization: `Bearer ${key}` } });
  expect(r.status).toBe(200);
  const records = (await jsonOf<AnswerOf<typeof UsageList>>(r)).data;
  expect(records.map((u) => u.request_id).sort()).toEqual(ids.sort());
  for (const u of records) expect(Date.parse(u.created_at)).toBeLessThan(to);
});
