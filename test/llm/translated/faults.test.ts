// What goes wrong on a translated call, each in the client's protocol and each settled or released as on the native
// path, on SQLite and on Postgres: upstream error statuses (the gateway's own account never shown), a request that
// cannot be translated (refused before any hold), mid-stream upstream errors, drops, a stream ended early, a client
// that leaves, and (issue 20, point 1) a stream the translation tells the client failed: recorded as failed and
// charged only the usage the upstream stated, never as ok.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { readFileSync } from "node:fs";
import { expectCharged, expectReleased, ledgerOf, startEnv, stopEnv, type Env } from "../support";
import { eachDatabase } from "../databases";
import { chargeOf, LLMS } from "./clients";

const model = (id: string) => LLMS.find((m) => m.id === id)!;
const fixture = (name: string) => readFileSync(new URL(`../../fakes/fixtures/${name}`, import.meta.url), "utf8");
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (x) => x,
  );
const hi = [{ role: "user" as const, content: "Hi" }];

eachDatabase("translated calls that fail", (databaseUrl) => {
  let e: Env;
  beforeAll(async () => {
    e = await startEnv({ env: { DATABASE_URL: databaseUrl() } });
  });
  afterAll(() => stopEnv(e));
  // A test that fails before its upstream call must not leave its scenario to the next one.
  beforeEach(() => e.fake.reset());
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });

  /** The account's one call: released and recorded with `status`. */
  async function expectReleasedAs(accountId: string, status: string) {
    await expectReleased(e.gw, accountId, 100);
    expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe(status);
  }

  test("an upstream 429 on a chat model reaches an Anthropic client as Anthropic's rate_limit_error, retry-after kept; released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 429, retryAfter: "7" });
    const err: any = await rejection(
      anthropic(key).messages.create({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.headers.get("retry-after")).toBe("7");
    expect(err.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    await expectReleasedAs(accountId, "upstream_error");
  });

  test("an upstream 500 from Claude reaches a chat client as an openai InternalServerError with the upstream's message; released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 500 });
    const err: any = await rejection(
      openai(key).chat.completions.create({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.message).toContain("Internal server error");
    await expectReleasedAs(accountId, "upstream_error");
  });

  test("an upstream 401 (the gateway's own key) is a 502 in the client's shape, with nothing of the upstream's text", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({
      kind: "error",
      status: 401,
      body: '{"error":{"message":"Incorrect API key provided: sk-openai-***cret","type":"invalid_request_error","code":"invalid_api_key"}}',
    });
    const err: any = await rejection(
      anthropic(key).messages.create({ model: "gpt-4.1", max_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(502);
    expect(JSON.stringify(err.error)).not.toContain("sk-openai");
    expect(JSON.stringify(err.error)).toContain("upstream_auth_failed");
    await expectReleasedAs(accountId, "upstream_error");
  });

  test("a field that cannot be translated is a 400 naming it, in the client's shape; nothing held, recorded or sent", async () => {
    const { accountId, key } = await e.gw.account(100);
    const before = e.fake.requests.length;
    const n: any = await rejection(
      openai(key).chat.completions.create({
        model: "claude-haiku-4-5",
        max_completion_tokens: 100,
        messages: hi,
        n: 2,
      }),
    );
    expect(n.status).toBe(400);
    expect(n.error).toMatchObject({ code: "unsupported_for_model", param: "n" });
    const tool: any = await rejection(
      anthropic(key).messages.create({
        model: "gpt-4.1",
        max_tokens: 100,
        messages: hi,
        tools: [{ type: "web_search_20250305", name: "web_search" } as any],
      }),
    );
    expect(tool.status).toBe(400);
    expect(tool.error.error.type).toBe("invalid_request_error");
    expect(tool.error.error.message).toContain("web_search");
    expect(e.fake.requests.length).toBe(before);
    await expectReleased(e.gw, accountId, 100, 0);
  });

  test("an upstream error event mid-stream becomes each client protocol's own error; released", async () => {
    let { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("stream-error"); // chat's {"error": ...} chunk
    const a: any = await rejection(
      anthropic(key).messages.stream({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }).finalMessage(),
    );
    expect(a).toBeInstanceOf(Anthropic.APIError);
    await expectReleasedAs(accountId, "failed");

    ({ accountId, key } = await e.gw.account(100));
    e.fake.enqueue("stream-error"); // Anthropic's event: error (overloaded)
    const r = await openai(key)
      .responses.stream({ model: "claude-haiku-4-5", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    await expectReleasedAs(accountId, "failed");

    ({ accountId, key } = await e.gw.account(100));
    e.fake.enqueue("stream-error"); // Responses' error event
    const c: any = await rejection(
      openai(key)
        .chat.completions.stream({ model: "gpt-4.1", max_completion_tokens: 100, messages: hi })
        .finalChatCompletion(),
    );
    expect(c).toBeInstanceOf(OpenAI.APIError);
    await expectReleasedAs(accountId, "failed");
  });

  test("a 200 that is not the native protocol's answer (an HTML page, a JSON array, JSON for a stream) is a 502 in the client's shape; released", async () => {
    for (const [body, contentType] of [
      ["<html>Bad gateway</html>", "text/html"],
      ["[1,2]", "application/json"],
      ['{"id":"chatcmpl-1","choices":[', "application/json"],
    ]) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue({ kind: "error", status: 200, body, contentType });
      const err: any = await rejection(
        anthropic(key).messages.create({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }),
      );
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.status).toBe(502);
      await expectReleasedAs(accountId, "upstream_bad_response");
    }
    // A stream asked for, JSON given: not the answer asked for either.
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 200, body: fixture("B_nonstream.json") });
    const err: any = await rejection(
      anthropic(key).messages.stream({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }).finalMessage(),
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(502);
    await expectReleasedAs(accountId, "upstream_bad_response");
  });

  test("an upstream that drops, between events or mid-event, or ends early: the client's error event; released", async () => {
    for (const drop of [
      { kind: "drop", dropAfterEvents: 3 },
      { kind: "drop", dropAfterBytes: 700 },
      { kind: "ok", endAfterEvents: 3 },
    ] as const) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue(drop);
      const err: any = await rejection(
        anthropic(key).messages.stream({ model: "gpt-4.1", max_tokens: 100, messages: hi }).finalMessage(),
      );
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.message).toContain("nothing was charged");
      await expectReleasedAs(accountId, "dropped");

      const second = await e.gw.account(100);
      e.fake.enqueue(drop);
      const c: any = await rejection(
        openai(second.key)
          .chat.completions.stream({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi })
          .finalChatCompletion(),
      );
      expect(c).toBeInstanceOf(OpenAI.APIError);
      await expectReleasedAs(second.accountId, "dropped");
    }
  });

  test("a translated stream is not buffered: its first events reach the client while the upstream is still sending", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "slow", firstByteMs: 0, chunkDelayMs: 60, eventPieces: true }); // one event per write
    const stream = await openai(key).chat.completions.create({
      model: "claude-haiku-4-5",
      max_completion_tokens: 100,
      messages: hi,
      stream: true,
    });
    let text = "";
    let upstreamDoneAtFirstText: boolean | null = null;
    for await (const chunk of stream) {
      const t = chunk.choices[0]?.delta?.content ?? "";
      if (t && upstreamDoneAtFirstText === null)
        upstreamDoneAtFirstText = e.fake.requests.at(-1)!.finishedAt !== undefined;
      text += t;
    }
    expect(upstreamDoneAtFirstText).toBe(false);
    expect(text.length).toBeGreaterThan(0);
    expect((await ledgerOf(e.gw, accountId)).calls[0]!.status).toBe("ok");
  });

  test("a client that leaves mid-stream: the upstream is aborted, the call charged as on the native path (at most the hold)", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "slow", firstByteMs: 0, chunkDelayMs: 200 });
    const ac = new AbortController();
    const stream = await openai(key).chat.completions.create(
      { model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi, stream: true },
      { signal: ac.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    await rejection(it.next());
    const up = e.fake.requests.at(-1)!;
    for (let i = 0; i < 200 && !up.aborted; i++) await Bun.sleep(5);
    expect(up.aborted).toBe(true);
    const { calls } = await ledgerOf(e.gw, accountId);
    expect(calls[0]!.status).toBe("client_abort");
    expect(calls[0]!.cost).toBeGreaterThan(0);
    expect(calls[0]!.cost).toBeLessThanOrEqual(calls[0]!.held);
  });

  // Issue 20, point 1. The whole stream reaches the gateway in one write, so what it has read when the translation
  // fails is the same every run.
  const events = fixture("B_stream.sse").split(/(?<=\n\n)/);
  const unreadable = (evs: string[]) => [...evs.slice(0, 2), "data: {this is not json\n\n", ...evs.slice(2)].join("");

  test("issue 20.1: a translated stream with an unreadable event ends in response.failed, recorded failed, charged only the stated usage", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({
      kind: "error",
      status: 200,
      contentType: "text/event-stream",
      whole: true,
      body: unreadable(events),
    });
    const r = await openai(key)
      .responses.stream({ model: "deepseek-test", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    expect(r.error?.message).toContain("not JSON");
    // B_stream.sse states prompt 19 (none cached), completion 7: the chat formula at deepseek-test's prices
    const line = await expectCharged(
      e.gw,
      accountId,
      100,
      chargeOf(model("deepseek-test"), { input: 19, cacheRead: 0, cacheWrite: 0, output: 7 }),
    );
    expect(line.status).toBe("failed");
  });

  test("issue 20.1: the same with no usage stated: released, recorded failed (before: charged an estimate as ok)", async () => {
    const { accountId, key } = await e.gw.account(100);
    const noUsage = events.filter((ev) => !ev.includes('"choices":[],"usage":{'));
    e.fake.enqueue({
      kind: "error",
      status: 200,
      contentType: "text/event-stream",
      whole: true,
      body: unreadable(noUsage),
    });
    const r = await openai(key)
      .responses.stream({ model: "deepseek-test", input: "Hi", max_output_tokens: 100 })
      .finalResponse();
    expect(r.status).toBe("failed");
    await expectReleasedAs(accountId, "failed");
  });

  test("issue 20.1: a JSON answer that cannot be translated is a 502, recorded failed, charged only its stated usage", async () => {
    const { accountId, key } = await e.gw.account(100);
    // A Messages answer whose content is not a list of blocks: its usage is readable, its content is not.
    const answer = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: "garbled",
      usage: { input_tokens: 40, output_tokens: 9 },
    };
    e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(answer) });
    const err: any = await rejection(
      openai(key).chat.completions.create({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.code).toBe("upstream_bad_response");
    const line = await expectCharged(
      e.gw,
      accountId,
      100,
      chargeOf(model("claude-haiku-4-5"), { input: 40, cacheRead: 0, cacheWrite: 0, output: 9 }),
    );
    expect(line.status).toBe("failed");
  });

  test("issue 20.1 with max_credits: the usage a failed JSON translation is charged stays within max_credits", async () => {
    const { accountId, key } = await e.gw.account(100);
    // The upstream states far more than max_credits (1 credit) allows: 20000 output tokens of Haiku cost 100 credits.
    const answer = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: "garbled",
      usage: { input_tokens: 40, output_tokens: 20000 },
    };
    e.fake.enqueue({ kind: "error", status: 200, body: JSON.stringify(answer) });
    const request = { model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi, max_credits: 1 } as any;
    const err: any = await rejection(openai(key).chat.completions.create(request));
    expect(err.status).toBe(502);
    const line = await expectCharged(e.gw, accountId, 100, 1_000_000);
    expect(line.status).toBe("failed");
  });

  test("a 200 whose JSON is an error object, not the native answer (no choices, no output): a 502 in the client's shape, released", async () => {
    for (const model of ["gemini-2.5-flash", "gpt-4.1"]) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue({ kind: "error", status: 200, body: '{"error":{"message":"Resource exhausted","code":429}}' });
      const err: any = await rejection(anthropic(key).messages.create({ model, max_tokens: 100, messages: hi }));
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.status).toBe(502);
      await expectReleasedAs(accountId, "failed");
    }
  });
});
