// A model's refusal, translated: an OpenAI chat model refuses with a `refusal` field (a delta when streamed) and
// finish_reason "stop"; the client is told it refused in its own protocol's words, streamed as in JSON.
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { useEnv } from "../support";

const REFUSAL = "I'm sorry, I can't help with that.";
const chunk = (delta: object, finish: string | null = null, usage: object | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-refused",
    object: "chat.completion.chunk",
    created: 1767225661,
    model: "gpt-5.2",
    choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage,
  })}\n\n`;
const USAGE = { prompt_tokens: 19, completion_tokens: 9, total_tokens: 28 };

const e = useEnv();
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
const ask = { model: "gpt-5.2", max_tokens: 200, messages: [{ role: "user" as const, content: "Hi" }] };

test("a chat model's refusal reaches an Anthropic client as stop_reason refusal, JSON and streamed alike", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue({
    kind: "error",
    status: 200,
    contentType: "application/json",
    whole: true,
    body: JSON.stringify({
      id: "chatcmpl-refused",
      object: "chat.completion",
      created: 1767225661,
      model: "gpt-5.2",
      choices: [{ index: 0, message: { role: "assistant", content: null, refusal: REFUSAL }, finish_reason: "stop" }],
      usage: USAGE,
    }),
  });
  const json = await anthropic(key).messages.create(ask);
  expect(json.stop_reason).toBe("refusal");

  e.fake.enqueue({
    kind: "error",
    status: 200,
    contentType: "text/event-stream",
    whole: true,
    body:
      chunk({ role: "assistant", content: null, refusal: "" }) +
      chunk({ refusal: "I'm sorry, " }) +
      chunk({ refusal: "I can't help with that." }) +
      chunk({}, "stop") +
      chunk({}, null, USAGE) +
      "data: [DONE]\n\n",
  });
  const streamed = await anthropic(key).messages.stream(ask).finalMessage();
  expect(streamed.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual([REFUSAL]);
  expect(streamed.stop_reason).toBe("refusal");
});
