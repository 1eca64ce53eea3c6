// What goes wrong on a translated call that is answered whole, each in the client's protocol and each released or
// charged as on the native path, on SQLite and on Postgres: upstream error statuses (the gateway's own account never
// shown), a request that cannot be translated (refused before any hold), a 200 that is not the native answer, and
// (issue 20, point 1) a JSON answer the translation cannot read: recorded as failed, charged only the stated usage.
// Streams that fail are in faults-streams.test.ts.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { expect, test } from "bun:test";
import { expectCharged, expectVoided } from "../support";
import { eachDatabase } from "../databases";
import { chargeOf } from "./clients";
import { fixture, hi, model, rejection, useFailingEnv } from "./failing-calls";

eachDatabase("translated calls that fail", (databaseUrl) => {
  const { e, anthropic, openai, expectVoidedAs } = useFailingEnv(databaseUrl);

  test("an upstream 429 on a chat model reaches an Anthropic client as Anthropic's rate_limit_error, retry-after kept; released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 429, retryAfter: "7" });
    const err: any = await rejection(
      anthropic(key).messages.create({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.headers.get("retry-after")).toBe("7");
    expect(err.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    await expectVoidedAs(accountId, "upstream_error");
  });

  test("an upstream 500 from Claude reaches a chat client as an openai InternalServerError with the upstream's message; released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 500 });
    const err: any = await rejection(
      openai(key).chat.completions.create({ model: "claude-haiku-4-5", max_completion_tokens: 100, messages: hi }),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.message).toContain("Internal server error");
    await expectVoidedAs(accountId, "upstream_error");
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
    await expectVoidedAs(accountId, "upstream_error");
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
    await expectVoided(e.gw, accountId, 100, 0);
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
      await expectVoidedAs(accountId, "upstream_bad_response");
    }
    // A stream asked for, JSON given: not the answer asked for either.
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 200, body: fixture("B_nonstream.json") });
    const err: any = await rejection(
      anthropic(key).messages.stream({ model: "gemini-2.5-flash", max_tokens: 100, messages: hi }).finalMessage(),
    );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(502);
    await expectVoidedAs(accountId, "upstream_bad_response");
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
      await expectVoidedAs(accountId, "failed");
    }
  });
});
