// A Messages conversation that ends with an assistant message asks Claude to continue that text (a prefill, e.g.
// "{" to start a JSON answer). No other protocol can ask that: another model would answer a new turn, which the
// client then appends to its prefill. A translated call refuses it in Anthropic's error shape; nothing is sent.
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { useEnv } from "../support";

const e = useEnv();
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });

test("an assistant prefill on a model that is not Claude is a 400 in Anthropic's shape, and nothing goes upstream", async () => {
  const { key } = await e.gw.account(100);
  for (const model of ["gpt-5", "gemini-2.5-flash"]) {
    const sent = e.fake.requests.length;
    const err: any = await anthropic(key)
      .messages.create({
        model,
        max_tokens: 200,
        messages: [
          { role: "user", content: "Name a colour as JSON." },
          { role: "assistant", content: '{"colour":' },
        ],
      })
      .catch((x) => x);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error.error.type).toBe("invalid_request_error");
    expect(err.error.error.message).toContain("assistant");
    expect(e.fake.requests.length).toBe(sent);
  }
});

test("a conversation ending with the user's turn (tool results included) still goes through", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue("ok");
  const msg = await anthropic(key).messages.create({
    model: "gpt-5",
    max_tokens: 200,
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "Again?" },
    ],
  });
  expect(msg.stop_reason).toBe("end_turn");
});
