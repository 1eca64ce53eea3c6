// Upstream streams that break the protocol's order in ways real servers have, each read by an official SDK on a
// translated call: the client gets an answer its SDK can read, and the ledger says what that answer was worth.
import { expect, test } from "bun:test";
import OpenAI from "openai";
import { ledgerOf, useEnv } from "../support";
import { eachDatabase } from "../databases";

const hi = [{ role: "user" as const, content: "Hi" }];
const sse = (events: [string, object][]) =>
  events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");

eachDatabase("translated calls on odd upstream streams", (databaseUrl) => {
  const e = useEnv(() => ({ env: { DATABASE_URL: databaseUrl() } }));
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });

  test("an Anthropic stream without message_start reaches a chat client as chunks its SDK can parse", async () => {
    const { accountId, key } = await e.gw.account(100);
    const body = sse([
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      [
        "message_delta",
        { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { input_tokens: 30, output_tokens: 4 } },
      ],
      ["message_stop", { type: "message_stop" }],
    ]);
    e.fake.enqueue({ kind: "error", status: 200, contentType: "text/event-stream", whole: true, body });
    const done = await openai(key)
      .chat.completions.stream({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi })
      .finalChatCompletion();
    expect(done.choices[0]!.message.content).toBe("Hello");
    expect(done.choices[0]!.finish_reason).toBe("stop");
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls.map((c) => c.status)).toEqual(["ok"]);
  });
});
