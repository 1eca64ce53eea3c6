// A chat model whose tool call arguments are not JSON (models do write `{"city": Paris}`): an Anthropic client's
// SDK parses the streamed input as it grows, so it is sent only while it is a JSON object's prefix and closed into an
// object at the call's end (json-prefix.ts), not passed on as text the SDK fails the whole stream on. Valid arguments
// still reach the client piece by piece, as they arrive.
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { useEnv } from "../support";

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

const e = useEnv();
/** The fake answers one streamed tool call whose arguments arrive in `pieces`. */
const streamCall = (pieces: string[]) =>
  e.fake.enqueue({
    kind: "error",
    status: 200,
    contentType: "text/event-stream",
    whole: true,
    body:
      chunk({ role: "assistant", tool_calls: [call("")] }) +
      pieces.map((args) => chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] })).join("") +
      chunk({}, "tool_calls") +
      "data: [DONE]\n\n",
  });
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const ask = {
  model: "gemini-2.5-flash",
  max_tokens: 200,
  tools: [{ name: "weather", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }],
  messages: [{ role: "user" as const, content: "Weather in Paris?" }],
};

test("tool arguments that stop being JSON reach a streaming Anthropic client as the object they were so far", async () => {
  const { key } = await e.gw.account(100);
  streamCall(['{"city": ', "Paris}"]);
  const msg = await anthropic(key).messages.stream(ask).finalMessage();
  const use = msg.content.find((b) => b.type === "tool_use")!;
  expect(use.type === "tool_use" && use.input).toEqual({ city: null });
  expect(msg.stop_reason).toBe("tool_use");
});

test("valid tool arguments still reach a streaming Anthropic client piece by piece", async () => {
  const { key } = await e.gw.account(100);
  streamCall(['{"city": "Pa', 'ris", "days": [1, 2', "]}"]);
  const stream = anthropic(key).messages.stream(ask);
  const pieces: string[] = [];
  stream.on("inputJson", (partial) => pieces.push(partial));
  const msg = await stream.finalMessage();
  expect(pieces).toEqual(['{"city": "Pa', 'ris", "days": [1, 2', "]}"]);
  const use = msg.content.find((b) => b.type === "tool_use")!;
  expect(use.type === "tool_use" && use.input).toEqual({ city: "Paris", days: [1, 2] });
});
