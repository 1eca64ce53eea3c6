// Limits a translated call keeps: an output ask above the model's maximum goes upstream clamped to it (the hold is
// for the clamped amount too, meter.ts planHold), and a JSON answer is read whole only up to a bound (a native one
// over 64 KiB is pumped): a larger one is a 502 upstream_bad_response and its hold is voided.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectVoided, ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { TRANSLATED_ANSWER_BYTES } from "../../../src/llm/translated-answer";
import { LLMS } from "./clients";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
const hi = [{ role: "user" as const, content: "Hi" }];
const lastUpstream = () => JSON.parse(e.fake.requests.at(-1)!.body);
const maxOutputOf = (id: string) =>
  (LLMS.find((m) => m.id === id) as { max_output_tokens?: number }).max_output_tokens!;
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (x) => x,
  );

test("max_tokens above the model's maximum is clamped to it on the way up (Responses, Chat and Anthropic upstreams)", async () => {
  // 5,000 credits cover gpt-5.1's maximum (1,280 credits of output) but not four times it: held for the clamp.
  const { accountId, key } = await e.gw.account(5000);
  for (const [model, field] of [
    ["gpt-5.1", "max_output_tokens"],
    ["gemini-2.5-flash", "max_tokens"],
  ] as const) {
    const max = maxOutputOf(model);
    await anthropic(key).messages.create({ model, max_tokens: max * 4, messages: hi }, { timeout: 30_000 }); // a timeout of its own: the SDK refuses a large max_tokens without one
    expect(lastUpstream()[field], model).toBe(max);
  }
  const claude = maxOutputOf("claude-haiku-4-5");
  await openai(key).responses.create({ model: "claude-haiku-4-5", max_output_tokens: claude * 3, input: "Hi" });
  expect(lastUpstream().max_tokens).toBe(claude);
  // An ask within the maximum goes as asked.
  await anthropic(key).messages.create({ model: "gpt-5.1", max_tokens: 300, messages: hi });
  expect(lastUpstream().max_output_tokens).toBe(300);
  const { calls } = await ledgerOf(e.gw, accountId);
  expect(calls.map((c) => c.status)).toEqual(["ok", "ok", "ok", "ok"]);
});

test("a JSON answer over the bound: 502 upstream_bad_response in the client's shape; the hold voided", async () => {
  const { accountId, key } = await e.gw.account(100);
  const text = "a".repeat(TRANSLATED_ANSWER_BYTES + 1024);
  const body = JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-haiku-4-5",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  });
  e.fake.enqueue({ kind: "error", status: 200, contentType: "application/json", whole: true, body });
  const err: any = await rejection(
    openai(key).chat.completions.create({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi }),
  );
  expect(err?.status).toBe(502);
  expect(err.error).toMatchObject({ code: "upstream_bad_response" });
  await expectVoided(e.gw, accountId, 100);
});
