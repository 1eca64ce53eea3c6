// The upstream timeouts (timeouts.ts) on translated calls, as on native ones: no headers in time is a 504
// upstream_timeout in the client's protocol; a stream gone silent ends with the client protocol's error event; a
// JSON answer that stalls is a 504. Released, recorded upstream_timeout, the upstream request aborted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectVoided, ledgerOf, startEnv, stopEnv, type Env } from "../support";

let e: Env;
beforeAll(async () => {
  e = await startEnv({ env: { LLM_FIRST_BYTE_TIMEOUT_SECONDS: "0.3", LLM_SILENCE_TIMEOUT_SECONDS: "0.3" } });
});
afterAll(() => stopEnv(e));
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (x) => x,
  );
const hi = [{ role: "user" as const, content: "Hi" }];

async function expectTimedOut(accountId: string) {
  await expectVoided(e.gw, accountId, 100);
  expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe("upstream_timeout");
  const up = e.fake.requests.at(-1)!;
  for (let i = 0; i < 100 && !up.aborted; i++) await Bun.sleep(5);
  expect(up.aborted).toBe(true);
}

test("no headers in time: an Anthropic client calling a chat model gets Anthropic's 504", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", headersDelayMs: 30_000 });
  const err: any = await rejection(
    new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 }).messages.create({
      model: "gemini-2.5-flash",
      max_tokens: 100,
      messages: hi,
    }),
  );
  expect(err).toBeInstanceOf(Anthropic.APIError);
  expect(err.status).toBe(504);
  await expectTimedOut(accountId);
});

test("a translated stream gone silent: the client protocol's error event (chat client, Claude upstream)", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", stallAfterEvents: 4 });
  const stream = new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 }).chat.completions.stream({
    model: "claude-haiku-4-5",
    max_completion_tokens: 100,
    messages: hi,
  });
  const err: any = await rejection(stream.finalChatCompletion());
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect(String(err.message)).toContain("did not answer in time");
  await expectTimedOut(accountId);
});

test("a translated JSON answer that stalls: 504 upstream_timeout (Responses client, chat upstream)", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "ok", stallAfterBytes: 0 });
  const err: any = await rejection(
    new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 }).responses.create({
      model: "gemini-2.5-flash",
      input: "Hi",
      max_output_tokens: 100,
    }),
  );
  expect(err.status).toBe(504);
  expect(err.code).toBe("upstream_timeout");
  await expectTimedOut(accountId);
});

test("an upstream error whose body stalls: the client still gets the error status in its shape; released, the upstream let go", async () => {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "error", status: 500, stallAfterBytes: 5 });
  const err: any = await rejection(
    new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 }).chat.completions.create({
      model: "claude-haiku-4-5",
      max_completion_tokens: 100,
      messages: hi,
    }),
  );
  expect(err).toBeInstanceOf(OpenAI.InternalServerError);
  expect(err.message).toContain("status 500");
  await expectVoided(e.gw, accountId, 100);
  expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe("upstream_error");
  const up = e.fake.requests.at(-1)!;
  for (let i = 0; i < 100 && !up.aborted; i++) await Bun.sleep(5);
  expect(up.aborted).toBe(true);
});
