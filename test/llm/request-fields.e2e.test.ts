// A long request body is read for its top-level fields (src/llm/request-fields.ts): a flaw inside a large value
// the gateway never reads (a raw control character in a message's text) is the upstream's to refuse, in the
// caller's protocol, with nothing charged; the same flaw in a short body, parsed whole, is the gateway's own 400.
// A flaw in what the gateway reads (the top level, a small value) is its own 400 however long the body.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { errorOf } from "../support/json";
import { expectVoided, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const post = (key: string, body: string) =>
  fetch(e.gw.url + "/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });

/** A chat body whose last message's text holds a raw TAB (JSON wants it escaped), padded to `padding` characters. */
const flawed = (padding: number) =>
  `{"model":"gpt-5.2","max_completion_tokens":10,"messages":[{"role":"user","content":"${"x".repeat(padding)}"},{"role":"user","content":"a\tb"}]}`;

test("a long body with a flaw inside its conversation: forwarded, refused by the upstream in the caller's shape, nothing charged", async () => {
  const { accountId, key } = await e.gw.account(100);
  const sent = flawed(8000);
  const r = await post(key, sent);
  expect(r.status).toBe(400);
  expect((await errorOf(r)).error).toBeDefined();
  expect(e.fake.requests.at(-1)!.body).toBe(sent);
  await expectVoided(e.gw, accountId, 100);
});

test("a short body with the same flaw: the gateway's 400 invalid_json, nothing sent upstream", async () => {
  const { key } = await e.gw.account(100);
  const before = e.fake.requests.length;
  const r = await post(key, flawed(100));
  expect(r.status).toBe(400);
  expect((await errorOf(r)).error.code).toBe("invalid_json");
  expect(e.fake.requests.length).toBe(before);
});

test("a long body with a flaw in what the gateway reads: its own 400 invalid_json, nothing sent upstream", async () => {
  const { key } = await e.gw.account(100);
  const before = e.fake.requests.length;
  for (const body of [
    `{"model":"gpt-5.2","max_completion_tokens":1O,"messages":[{"role":"user","content":"${"x".repeat(8000)}"}]}`,
    `{"model":"gpt-5.2" "messages":[{"role":"user","content":"${"x".repeat(8000)}"}]}`,
    `{"model":"gpt-5.2","messages":[{"role":"user","content":"${"x".repeat(8000)}"}]`,
  ]) {
    const r = await post(key, body);
    expect(r.status).toBe(400);
    expect((await errorOf(r)).error.code).toBe("invalid_json");
  }
  expect(e.fake.requests.length).toBe(before);
});
