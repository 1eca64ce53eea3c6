// A chat model whose tool call arguments are not JSON (models do write `{"city": Paris}`): an Anthropic client's
// `input` must be an object, so it gets {} streamed as in JSON (inputObject), not text its SDK cannot parse.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { startEnv, stopEnv, type Env } from "../support";

const BROKEN = '{"city": Paris}';
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1767225661,
    model: "gemini-2.5-flash",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(finish && { usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } }),
  })}\n\n`;
const call = (args: string) => ({
  index: 0,
  id: "call_1",
  type: "function",
  function: { name: "weather", arguments: args },
});

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));
beforeEach(() => e.fake.reset());
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const ask = {
  model: "gemini-2.5-flash",
  max_tokens: 200,
  tools: [{ name: "weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }],
  messages: [{ role: "user" as const, content: "Weather in Paris?" }],
};

test("tool arguments that are not JSON reach a streaming Anthropic client as input {}, as in JSON", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue({
    kind: "error",
    status: 200,
    contentType: "text/event-stream",
    whole: true,
    body:
      chunk({ role: "assistant", tool_calls: [call("")] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: "Paris}" } }] }) +
      chunk({}, "tool_calls") +
      "data: [DONE]\n\n",
  });
  const msg = await anthropic(key).messages.stream(ask).finalMessage();
  const use = msg.content.find((b) => b.type === "tool_use")!;
  expect(use.type === "tool_use" && use.input).toEqual({});
  expect(msg.stop_reason).toBe("tool_use");
});
