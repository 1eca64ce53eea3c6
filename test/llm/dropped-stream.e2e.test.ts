// An upstream whose connection drops mid-stream: between two events the gateway ends the client's stream with the
// protocol's own in-stream error event, so each SDK raises an API error that says nothing was charged; mid-event
// nothing readable can follow, so the client's connection is cut. Either way the hold is released.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { cutOnceSeen, eventCount, expectVoided, ledgerOf, startEnv, stopEnv, type Env } from "./support";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const NOTHING_CHARGED = "nothing was charged";
const openai = (key: string, f?: typeof fetch) =>
  new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0, fetch: f });
/** Drops after `n` whole events, once the client has them all (cutOnceSeen): returns the client's fetch. */
function dropAfterEvents(n: number): typeof fetch {
  e.fake.enqueue({ kind: "drop", dropAfterEvents: n, cutWhenTold: true });
  return cutOnceSeen(e.fake, (text) => eventCount(text) >= n);
}
const chatAsk = {
  model: "gpt-5.2",
  max_completion_tokens: 100,
  stream: true as const,
  messages: [{ role: "user" as const, content: "Hi" }],
};
const responsesAsk = { model: "gpt-4.1", max_output_tokens: 100, input: "Hi" };

async function raw(key: string, path: string, body: object, f: typeof fetch): Promise<string> {
  const r = await f(e.gw.url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
  return r.text(); // resolves: the stream ended cleanly, with the error event last
}

const events = (text: string) => text.split("\n\n").filter(Boolean);

/** A DeepSeek stream (translated to /v1/responses) whose chat upstream drops as `drop` says: it ends in response.failed
 * (upstream_bad_response) and nothing is charged. Returns the failed response. */
async function deepSeekDropped(drop: { kind: "drop"; dropAfterEvents?: number; dropAfterBytes?: number }) {
  const { accountId, key } = await e.gw.account(100);
  e.fake.enqueue(drop);
  const stream = openai(key).responses.stream({ model: "deepseek-test", max_output_tokens: 100, input: "Hi" });
  let failed: any;
  stream.on("response.failed", (ev) => (failed = ev.response));
  const outcome = await stream.finalResponse();
  expect(outcome.status).toBe("failed");
  expect(failed.error).toMatchObject({ code: "upstream_bad_response" });
  await expectVoided(e.gw, accountId, 100);
  return failed;
}

describe("dropped between two events: the protocol's error event, then a clean end", () => {
  test("Anthropic: `event: error` (api_error); the SDK's stream rejects with an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    const client = new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0, fetch: dropAfterEvents(3) });
    const stream = client.messages.stream({
      model: "claude-opus-4-5",
      max_tokens: 100,
      messages: [{ role: "user", content: "Hi" }],
    });
    const err = await stream.finalMessage().then(
      () => null,
      (x) => x,
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String(err.message)).toContain(NOTHING_CHARGED);
    await expectVoided(e.gw, accountId, 100);

    const ask = { model: "claude-opus-4-5", max_tokens: 100, stream: true, messages: [] };
    const last = events(await raw(key, "/v1/messages", ask, dropAfterEvents(3))).at(-1)!;
    expect(last.split("\n")[0]).toBe("event: error");
    expect(JSON.parse(last.split("\n")[1]!.slice(6))).toMatchObject({
      type: "error",
      error: { type: "api_error", code: "upstream_bad_response" },
    });
  });

  test("Chat Completions: an error chunk; the SDK's iterator throws an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    const f = dropAfterEvents(2);
    let chunks = 0;
    const err = await (async () => {
      for await (const _ of await openai(key, f).chat.completions.create(chatAsk)) chunks++;
    })().then(
      () => null,
      (x) => x,
    );
    expect(chunks).toBe(2); // the two events the upstream sent, then the error
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toContain(NOTHING_CHARGED);
    expect(err.code).toBe("upstream_bad_response");
    await expectVoided(e.gw, accountId, 100);
  });

  test("Responses: an `error` event numbered after the last one sent; responses.stream rejects with an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    const err = await openai(key, dropAfterEvents(4))
      .responses.stream(responsesAsk)
      .finalResponse()
      .then(
        () => null,
        (x) => x,
      );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toContain(NOTHING_CHARGED);
    await expectVoided(e.gw, accountId, 100);

    const text = await raw(key, "/v1/responses", { ...responsesAsk, stream: true }, dropAfterEvents(4));
    const sent = events(text).map((ev) =>
      JSON.parse(
        ev
          .split("\n")
          .find((l) => l.startsWith("data: "))!
          .slice(6),
      ),
    );
    expect(sent.length).toBe(5);
    expect(sent[4]).toMatchObject({
      type: "error",
      code: "upstream_bad_response",
      sequence_number: sent[3].sequence_number + 1,
    });
  });

  test("DeepSeek on /v1/responses (translated): the error chunk becomes response.failed, as any upstream error does", async () => {
    const failed = await deepSeekDropped({ kind: "drop", dropAfterEvents: 2 });
    expect(failed.error.message).toContain(NOTHING_CHARGED);
  });
});

test("dropped after the stream's own end: the whole answer, a clean end, no error event; charged as answered", async () => {
  for (const [path, body, last] of [
    ["/v1/messages", { model: "claude-opus-4-5", max_tokens: 100, stream: true, messages: [] }, "event: message_stop"],
    ["/v1/responses", { ...responsesAsk, stream: true }, "event: response.completed"],
  ] as const) {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "drop", dropAfterEvents: 999, cutWhenTold: true }); // every event sent, then the cut
    const text = await raw(
      key,
      path,
      body,
      cutOnceSeen(e.fake, (sent) => sent.includes(last) && sent.endsWith("\n\n")),
    );
    expect(events(text).at(-1)!.split("\n")[0]).toBe(last);
    expect(text).not.toContain("nothing was charged");
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("ok");
    expect(calls[0]!.cost).toBeGreaterThan(0);
  }
});

test("dropped in the middle of an event: the client's connection is cut (no event could follow), not an API error", async () => {
  const { accountId, key } = await e.gw.account(100);
  // Cut inside the second event of B_stream.sse (bytes 330–631).
  e.fake.enqueue({ kind: "drop", dropAfterBytes: 450, cutWhenTold: true });
  let chunks = 0;
  // With include_usage asked by the client: nothing is held back (without it, the gateway holds each event until it
  // is whole, to cut its own usage chunk out, so the client's bytes always end between events).
  const ask = { ...chatAsk, stream_options: { include_usage: true } };
  const err = await (async () => {
    const f = cutOnceSeen(e.fake, (_, bytes) => bytes >= 450);
    for await (const _ of await openai(key, f).chat.completions.create(ask)) chunks++;
  })().then(
    () => null,
    (x) => x,
  );
  expect(chunks).toBe(1);
  expect(err).not.toBeNull();
  expect(err).not.toBeInstanceOf(OpenAI.APIError);
  await expectVoided(e.gw, accountId, 100);
});

test("DeepSeek on /v1/responses (translated), dropped in the middle of a chat event: still response.failed, nothing charged", async () => {
  // The client's stream is the translator's, made of whole events: it can always be told (before: ECONNRESET).
  await deepSeekDropped({ kind: "drop", dropAfterBytes: 450 }); // inside the second event of the chat stream
});
