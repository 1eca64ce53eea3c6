// A chat stream already whole when the gateway first reads it is metered from its usage event without the tap
// (protocols/sse-whole.ts); the client still gets the upstream's bytes, and a stated failure still releases the hold.
// (The strip of the usage chunk the gateway asked for: streaming.e2e.test.ts.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { contentFor } from "../fakes/llm-answers";
import { expectCharged, expectVoided, PRICES, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const G = PRICES["gpt-5.2"];
const post = (key: string, body: object) =>
  fetch(`${e.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

test("include_usage asked by the client: its bytes as the upstream sent them, the charge exact", async () => {
  const { accountId, key } = await e.gw.account(100);
  const ask = {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: "user", content: "Hi" }],
  };
  e.fake.enqueue({ kind: "ok", whole: true });
  const r = await post(key, ask);
  const bytes = new Uint8Array(await r.arrayBuffer());
  expect(r.headers.get("content-length")).toBe(String(bytes.length));
  const sent = new TextDecoder().decode(contentFor("chat", ask, { kind: "ok" })!.body);
  expect(new TextDecoder().decode(bytes)).toBe(sent);
  await expectCharged(e.gw, accountId, 100, 19 * G.input + 7 * G.output);
});

test("a whole chat stream that states a failure releases the hold", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "stream-error", whole: true });
  const r = await post(key, {
    model: "gpt-5.2",
    max_completion_tokens: 100,
    stream: true,
    messages: [{ role: "user", content: "Hi" }],
  });
  expect(new TextDecoder().decode(await r.arrayBuffer())).toContain('"error"');
  await expectVoided(e.gw, accountId, 100);
});
