// POST /v1/messages/count_tokens for every LLM: Claude's count is Anthropic's own (passed through); any other model
// gets the gateway's estimate, the input estimate a call with the same body is held for (ceil(bytes / 3)), free and
// without an upstream call. Claude Code calls it often, whatever its --model.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ledgerOf, MICROS, startEnv, stopEnv, type Env } from "../support";
import { LLMS, nativeOf } from "./clients";
import { errorOf } from "../../support/json";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const post = (key: string, body: string) =>
  fetch(e.gw.url + "/v1/messages/count_tokens", {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body,
  });

test("every LLM answers count_tokens with the Anthropic SDK; only Claude's goes upstream; nothing is charged", async () => {
  const { accountId, key } = await e.gw.account(10);
  const client = new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
  for (const m of LLMS) {
    e.fake.reset();
    const r = await client.messages.countTokens({
      model: m.id,
      messages: [{ role: "user", content: "What's the weather in Paris?" }],
      system: "Be brief.",
    });
    expect(r.input_tokens).toBeGreaterThan(0);
    const native = nativeOf(m) === "/v1/messages";
    expect(e.fake.requests.map((q) => q.path)).toEqual(native ? ["/v1/messages/count_tokens"] : []);
    if (native) expect(r.input_tokens).toBe(2151); // A_count.json, Anthropic's own count
  }
  const { calls, wallet } = await ledgerOf(e.gw, accountId);
  expect(calls).toEqual([]);
  expect(Number(wallet.balance)).toBe(10 * MICROS);
});

test("the estimate is the hold's input estimate: ceil(body bytes / 3)", async () => {
  const { key } = await e.gw.account(10);
  const body = JSON.stringify({ model: "gpt-5.2", messages: [{ role: "user", content: "x".repeat(1000) }] });
  const r = await post(key, body);
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual({ input_tokens: Math.ceil(Buffer.byteLength(body) / 3) });
});

test("an embedding model or an unknown one: a clear error, never a 404 for a known LLM", async () => {
  const { key } = await e.gw.account(10);
  const emb = await post(key, JSON.stringify({ model: "text-embedding-3-small", messages: [] }));
  expect(emb.status).toBe(400);
  expect((await errorOf(emb)).error.type).toBe("invalid_request_error");
  const unknown = await post(key, JSON.stringify({ model: "no-such-model", messages: [] }));
  expect(unknown.status).toBe(404);
});
