// An upstream that ends its stream cleanly (no reset) before the protocol's own end (Anthropic message_stop,
// Responses response.completed, chat [DONE] or the usage chunk): the client's stream ends with the protocol's
// in-stream error event, as for a dropped connection, so each SDK raises instead of returning a truncated answer as
// complete; the hold is released and the usage record says the stream ended early. On SQLite and on Postgres.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expectVoided, ledgerOf, startEnv, stopEnv, type Env } from "./support";
import { eachDatabase } from "./databases";

const ENDED_EARLY = "ended its stream before the answer was complete";

eachDatabase("a stream ended early", (databaseUrl) => {
  let e: Env;
  beforeAll(async () => {
    e = await startEnv({ env: { DATABASE_URL: databaseUrl() } });
  });
  afterAll(() => stopEnv(e));

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
  const rejection = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (x) => x,
    );

  /** Released, and the record says why (read from the database the gateway wrote). */
  async function expectEndedEarly(accountId: string) {
    await expectVoided(e.gw, accountId, 100);
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("dropped");
    expect(calls[0]!.error).toContain("ended before its final event");
  }

  test("Anthropic: usage stated, message_stop never sent: the SDK's stream rejects with an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", endAfterEvents: 7 }); // everything up to message_delta (with its usage)
    const client = new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
    const err = await rejection(
      client.messages
        .stream({ model: "claude-opus-4-5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] })
        .finalMessage(),
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String(err.message)).toContain(ENDED_EARLY);
    await expectEndedEarly(accountId);
  });

  test("Chat Completions: no [DONE] nor usage chunk: the SDK's iterator throws an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", endAfterEvents: 3 });
    let chunks = 0;
    const ask = {
      model: "gpt-5.2",
      max_completion_tokens: 100,
      stream: true as const,
      messages: [{ role: "user" as const, content: "Hi" }],
    };
    const err = await rejection(
      (async () => {
        for await (const _ of await openai(key).chat.completions.create(ask)) chunks++;
      })(),
    );
    expect(chunks).toBe(3);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe("upstream_bad_response");
    expect(err.message).toContain(ENDED_EARLY);
    await expectEndedEarly(accountId);
  });

  test("Chat Completions, the whole short stream already in when the gateway first reads it: still the error chunk", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", endAfterEvents: 3, whole: true });
    const r = await fetch(e.gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "gpt-5.2",
        max_completion_tokens: 100,
        stream: true,
        messages: [{ role: "user", content: "Hi" }],
      }),
    });
    const events = (await r.text()).split("\n\n").filter(Boolean);
    expect(events.length).toBe(4);
    expect(JSON.parse(events[3]!.slice("data: ".length))).toMatchObject({ error: { code: "upstream_bad_response" } });
    await expectEndedEarly(accountId);
  });

  test("Responses: no response.completed: responses.stream rejects with an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", endAfterEvents: 10 }); // every event but response.completed
    const err = await rejection(
      openai(key).responses.stream({ model: "gpt-4.1", max_output_tokens: 100, input: "Hi" }).finalResponse(),
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toContain(ENDED_EARLY);
    await expectEndedEarly(accountId);
  });
});
