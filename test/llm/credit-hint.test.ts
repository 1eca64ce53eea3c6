// A 402 insufficient_credits on an LLM call says which field to lower and by how much: the largest output limit the
// wallet covers for this very request. The hint is checked by sending it: that limit is accepted, a little more refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startEnv, type Env } from "./support";

let env: Env;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => {
  await env.gw.stop();
  await env.fake.stop();
});

const send = (key: string, path: string, body: unknown) =>
  fetch(env.gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
const hintedLimit = (message: string) => Number(/to at most (\d+)/.exec(message)?.[1]);

describe("insufficient_credits says what to lower", () => {
  test.each([
    // no limit sent: the field the model's provider takes (OpenAI refuses max_tokens on gpt-5.2; a Claude model
    // called on chat is translated, and max_tokens is what its provider's chat dialect names)
    [
      "/v1/chat/completions",
      "max_completion_tokens",
      { model: "gpt-5.2", messages: [{ role: "user", content: "hi" }] },
    ],
    ["/v1/chat/completions", "max_tokens", { model: "claude-opus-4-5", messages: [{ role: "user", content: "hi" }] }],
    [
      "/v1/chat/completions",
      "max_tokens",
      { model: "gpt-5.2", max_tokens: 100_000, messages: [{ role: "user", content: "hi" }] },
    ],
    [
      "/v1/chat/completions",
      "max_completion_tokens",
      { model: "gpt-5.2", max_completion_tokens: 100_000, messages: [{ role: "user", content: "hi" }] },
    ],
    ["/v1/responses", "max_output_tokens", { model: "gpt-5.1", input: "hi" }],
    [
      "/v1/messages",
      "max_tokens",
      { model: "claude-opus-4-5", max_tokens: 60_000, messages: [{ role: "user", content: "hi" }] },
    ],
  ])("%s: names %s and the largest value the wallet covers, which is then accepted", async (path, field, body) => {
    const { key } = await env.gw.account(1); // 1 credit
    const r = await send(key, path, body);
    expect(r.status).toBe(402);
    const json = (await r.json()) as any;
    const message: string = json.error.message;
    expect(message).toContain(`${field} `);
    expect(message).toContain(
      (body as any)[field] === undefined
        ? `Set ${field} to at most`
        : `Lower ${field} from ${(body as any)[field]} to at most`,
    );
    const n = hintedLimit(message);
    expect(n).toBeGreaterThan(0);
    expect((await send(key, path, { ...body, [field]: n + 10 })).status).toBe(402); // close to the most the wallet covers: a few tokens are kept for the field's own bytes
    expect((await send(key, path, { ...body, [field]: n })).status).toBe(200);
  });

  test("input alone beyond the wallet: says to shorten it", async () => {
    const { key } = await env.gw.account(0.001);
    const r = await send(key, "/v1/chat/completions", {
      model: "gpt-5.2",
      max_tokens: 1,
      messages: [{ role: "user", content: "x".repeat(4000) }],
    });
    expect(r.status).toBe(402);
    expect(((await r.json()) as any).error.message).toContain("The input alone needs about");
  });
});
