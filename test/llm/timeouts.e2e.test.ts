// A hung upstream: no headers within LLM_FIRST_BYTE_TIMEOUT_SECONDS is a 504 `upstream_timeout` in the caller's
// protocol; a body silent for LLM_SILENCE_TIMEOUT_SECONDS ends a stream with the protocol's in-stream error event (a
// JSON answer not yet sent with a 504). Either way the upstream request is aborted, the hold released, and the usage
// record says `upstream_timeout`. Small timeouts here (fractional seconds); what is asserted is what the client gets
// and what the ledger says, never how long it took. On SQLite and on Postgres.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { buildApp } from "../../src/app";
import { closeContext, createContext } from "../../src/bootstrap";
import { ConfigError, loadConfig } from "../../src/config";
import { llmTimeoutsOf } from "../../src/llm/timeouts";
import { silentLogger } from "../../src/log";
import { fixtureText } from "../fakes/fixtures";
import { tempSqlitePath } from "../support/services";
import { expectCharged, expectVoided, ledgerOf, providerEnv, startEnv, stopEnv, type Env } from "./support";
import { eachDatabase } from "./databases";
import { errorOf } from "../support/json";

const TIMEOUTS = { LLM_FIRST_BYTE_TIMEOUT_SECONDS: "0.3", LLM_SILENCE_TIMEOUT_SECONDS: "0.3" };
const messages = { model: "claude-opus-4-5", max_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };
const chat = { model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user" as const, content: "Hi" }] };

eachDatabase("a hung upstream", (databaseUrl) => {
  let e: Env;
  beforeAll(async () => {
    e = await startEnv({ env: { DATABASE_URL: databaseUrl(), ...TIMEOUTS } });
  });
  afterAll(() => stopEnv(e));

  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
  const rejection = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (x) => x,
    );
  const post = (key: string, path: string, body: object) =>
    fetch(e.gw.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  /** Released, recorded as a timeout, and the upstream request was aborted (the fake saw its client go). */
  async function expectTimedOut(accountId: string) {
    await expectVoided(e.gw, accountId, 100);
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("upstream_timeout");
    const up = e.fake.requests.at(-1)!;
    for (let i = 0; i < 200 && !up.aborted; i++) await Bun.sleep(10);
    expect(up.aborted).toBe(true);
  }

  test("no headers in time (Anthropic, JSON): 504 timeout_error / upstream_timeout; the SDK raises it", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", headersDelayMs: 30_000 });
    const err = await rejection(anthropic(key).messages.create(messages));
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(504);
    expect(err.error).toMatchObject({ type: "error", error: { type: "timeout_error", code: "upstream_timeout" } });
    await expectTimedOut(accountId);
  });

  test("no headers in time (chat, streaming): 504 upstream_timeout before any event", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", headersDelayMs: 30_000 });
    const err = await rejection(openai(key).chat.completions.create({ ...chat, stream: true }));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect([err.status, err.code]).toEqual([504, "upstream_timeout"]);
    await expectTimedOut(accountId);
  });

  test("a stream gone silent (Anthropic): the error event; the SDK's stream rejects with an APIError", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", stallAfterEvents: 4 });
    const err = await rejection(anthropic(key).messages.stream(messages).finalMessage());
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.error).toMatchObject({ type: "error", error: { code: "upstream_timeout" } });
    await expectTimedOut(accountId);
  });

  test("a stream gone silent (chat): the error chunk after the chunks sent; the SDK's iterator throws", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", stallAfterEvents: 2 });
    let chunks = 0;
    const err = await rejection(
      (async () => {
        for await (const _ of await openai(key).chat.completions.create({ ...chat, stream: true })) chunks++;
      })(),
    );
    expect(chunks).toBe(2);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe("upstream_timeout");
    await expectTimedOut(accountId);
  });

  test("a stream gone silent (Responses): an `error` event numbered after the last one sent", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", stallAfterEvents: 4 });
    const r = await post(key, "/v1/responses", { model: "gpt-4.1", max_output_tokens: 100, input: "Hi", stream: true });
    const sent = (await r.text())
      .split("\n\n")
      .filter(Boolean)
      .map((ev) =>
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
      code: "upstream_timeout",
      sequence_number: sent[3].sequence_number + 1,
    });
    await expectTimedOut(accountId);
  });

  test("a JSON answer whose body stalls after its headers (its length stated): 504 upstream_timeout", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", stallAfterBytes: 100, contentLength: true });
    const r = await post(key, "/v1/chat/completions", chat);
    expect(r.status).toBe(504);
    expect((await errorOf(r)).error).toMatchObject({ code: "upstream_timeout" });
    await expectTimedOut(accountId);
  });

  test("a JSON answer whose body stalls after its headers (chunked): 504 upstream_timeout", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", stallAfterBytes: 0 });
    const r = await post(key, "/v1/messages", messages);
    expect(r.status).toBe(504);
    expect(await r.json()).toMatchObject({ type: "error", error: { type: "timeout_error", code: "upstream_timeout" } });
    await expectTimedOut(accountId);
  });
});

test("a JSON answer whose stated length never arrives (read natively, in one call): 504 upstream_timeout, the upstream's connection closed", async () => {
  // Bun drops a stated content-length from a streamed Response, so this upstream writes its HTTP by hand.
  let closed = false;
  const upstream = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 600\r\n\r\n{"id":"chatcmpl-1",',
        );
      },
      close() {
        closed = true;
      },
    },
  });
  const e = await startEnv({ env: { ...TIMEOUTS, OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}/v1` } });
  try {
    const { accountId, key } = await e.gw.account(100);
    const r = await fetch(e.gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(chat),
    });
    expect(r.status).toBe(504);
    expect((await errorOf(r)).error).toMatchObject({ code: "upstream_timeout" });
    await expectVoided(e.gw, accountId, 100);
    expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe("upstream_timeout");
    for (let i = 0; i < 200 && !closed; i++) await Bun.sleep(10);
    expect(closed).toBe(true);
  } finally {
    await stopEnv(e);
    upstream.stop(true);
  }
});

test("a stream whose chunks keep coming is never cut, however long it lasts in all", async () => {
  // Each gap is well under the silence window, the whole stream well over it: the window is between chunks.
  const e = await startEnv({ env: { LLM_FIRST_BYTE_TIMEOUT_SECONDS: "5", LLM_SILENCE_TIMEOUT_SECONDS: "1" } });
  try {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "ok", eventPieces: true, chunkDelayMs: 150 }); // 11 events: about 1.6 s in all
    const done = await new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 }).responses
      .stream({ model: "gpt-4.1", max_output_tokens: 100, input: "Hi" })
      .finalResponse();
    expect(done.status).toBe("completed");
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("ok");
    await expectCharged(e.gw, accountId, 100, calls[0]!.cost);
  } finally {
    await stopEnv(e);
  }
});

// An idempotent call's body is read once and handed on in a new Request (llm/idempotent.ts), which Bun's server does
// not know: the idle timeout must still be lifted on the caller's own connection.
for (const [label, headers] of [
  ["", {}],
  [" (a call with an Idempotency-Key)", { "Idempotency-Key": "idle-stream-1" }],
] as const)
  test(`Bun's server idle timeout never cuts a stream the silence setting allows${label}`, async () => {
    // A server that closes connections idle for a second (Bun checks every few seconds), and an upstream that sends its
    // first event, then nothing for six seconds, then the rest: only LLM_SILENCE_TIMEOUT_SECONDS may end the stream.
    const events = fixtureText("B_stream.sse").split(/(?<=\n\n)/);
    const upstream = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response(
          (async function* () {
            yield events[0]!;
            await Bun.sleep(6000);
            yield events.slice(1).join("");
          })() as any,
          { headers: { "content-type": "text/event-stream" } },
        ),
    });
    const config = loadConfig({
      ...providerEnv(`http://127.0.0.1:${upstream.port}`),
      DATABASE_URL: tempSqlitePath(),
      PORT: "0",
      LLM_SILENCE_TIMEOUT_SECONDS: "30",
    });
    const ctx = await createContext(config, silentLogger);
    const app = buildApp(ctx).listen({ port: 0, hostname: "127.0.0.1", idleTimeout: 1 });
    try {
      const a = await ctx.accounts.createAccount("idle", 100 * 1_000_000);
      const { key } = await ctx.accounts.createKey(a.id, { name: "k" });
      const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${app.server!.port}/v1`, maxRetries: 0 });
      let chunks = 0;
      for await (const _ of await client.chat.completions.create(
        { ...chat, stream: true, stream_options: { include_usage: true } },
        { headers },
      ))
        chunks++;
      expect(chunks).toBe(events.length - 1); // every chunk but [DONE]
    } finally {
      await app.stop(true);
      await closeContext(ctx);
      upstream.stop(true);
    }
  }, 20_000);

test("the timeout settings take decimal seconds above 0 and up to a day; anything else stops the gateway at startup", () => {
  for (const bad of ["0", "-1", "abc", "1e3", "86401"]) {
    expect(() => loadConfig({ LLM_SILENCE_TIMEOUT_SECONDS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ LLM_FIRST_BYTE_TIMEOUT_SECONDS: bad })).toThrow(ConfigError);
  }
  expect(
    llmTimeoutsOf(loadConfig({ LLM_FIRST_BYTE_TIMEOUT_SECONDS: "0.25", LLM_SILENCE_TIMEOUT_SECONDS: "86400" }).raw),
  ).toEqual({ firstByteMs: 250, silenceMs: 86_400_000 });
  expect(llmTimeoutsOf(loadConfig({}).raw)).toEqual({ firstByteMs: 900_000, silenceMs: 600_000 });
});
