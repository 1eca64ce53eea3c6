// Provider routing: each vendor's URL convention, key rotation with one retry, a provider without a key, an
// unreachable upstream; and DeepSeek served on /v1/responses by translation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { buildProviders } from "../../src/llm/providers";
import { createLogger } from "../../src/log";
import { startGateway } from "../support/gateway";
import { expectCharged, expectVoided, PRICES, providerEnv, startEnv, stopEnv, type Env } from "./support";
import { errorOf } from "../support/json";

test("upstream URLs follow each vendor SDK's base-URL convention", () => {
  const p = buildProviders({
    ANTHROPIC_BASE_URL: "https://api.anthropic.com",
    OPENAI_BASE_URL: "https://api.openai.com/v1/",
    GEMINI_BASE_URL: "https://generativelanguage.googleapis.com",
    XAI_BASE_URL: "https://api.x.ai/v1",
    DEEPSEEK_BASE_URL: "https://api.deepseek.com",
    ANTHROPIC_API_KEY: "a1, a2",
  });
  expect(p.get("anthropic")!.urls.get("/v1/messages")).toBe("https://api.anthropic.com/v1/messages");
  expect(p.get("anthropic")!.urls.get("/v1/messages/count_tokens")).toBe(
    "https://api.anthropic.com/v1/messages/count_tokens",
  );
  expect(p.get("openai")!.urls.get("/v1/responses")).toBe("https://api.openai.com/v1/responses");
  expect(p.get("openai")!.urls.get("/v1/embeddings")).toBe("https://api.openai.com/v1/embeddings");
  expect(p.get("gemini")!.urls.get("/v1/chat/completions")).toBe(
    "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
  );
  expect(p.get("gemini")!.urls.get("/v1/embeddings")).toBe(
    "https://generativelanguage.googleapis.com/v1beta/openai/embeddings",
  );
  expect(p.get("xai")!.urls.get("/v1/responses")).toBe("https://api.x.ai/v1/responses");
  expect(p.get("deepseek")!.urls.get("/v1/chat/completions")).toBe("https://api.deepseek.com/chat/completions");
  // DeepSeek speaks only chat: its models are translated on /v1/responses and /v1/messages.
  expect(p.get("deepseek")!.speaks).toBe("/v1/chat/completions");
  expect(p.get("openai")!.speaks).toBeNull();
  expect(p.get("anthropic")!.auth).toEqual([
    ["x-api-key", "a1"],
    ["x-api-key", "a2"],
  ]);
  expect(p.get("openai")!.auth).toEqual([]);
});

let e: Env;
beforeAll(async () => {
  e = await startEnv({ keys: { OPENAI_API_KEY: "sk-one,sk-two" } });
});
afterAll(() => stopEnv(e));

const chatAsk = { model: "gpt-5.2", max_completion_tokens: 100, messages: [{ role: "user", content: "Hi" }] };
const post = (url: string, key: string, path: string, body: object) =>
  fetch(url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("key rotation", () => {
  for (const status of [429, 500, 503, 401, 403]) {
    test(`a ${status} on one key is retried once on the next key; the client sees only the success`, async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.reset();
      e.fake.enqueue({ kind: "error", status });
      const r = await post(e.gw.url, key, "/v1/chat/completions", chatAsk);
      expect(r.status).toBe(200);
      await r.text();
      const auths = e.fake.requests.map((q) => q.headers.authorization);
      expect(auths.length).toBe(2);
      expect(new Set(auths)).toEqual(new Set(["Bearer sk-one", "Bearer sk-two"]));
      const C = PRICES["gpt-5.2"];
      await expectCharged(e.gw, accountId, 100, (1543 - 1408) * C.input + 1408 * C.cacheRead + 10 * C.output);
    });
  }

  test("only one retry: two failures in a row reach the client, the hold is released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.reset();
    e.fake.enqueue({ kind: "error", status: 500 }, { kind: "error", status: 500 });
    const r = await post(e.gw.url, key, "/v1/chat/completions", chatAsk);
    expect(r.status).toBe(500);
    await r.text();
    expect(e.fake.requests.length).toBe(2);
    await expectVoided(e.gw, accountId, 100);
  });

  test("the gateway's own account refused (401, 403, 402) on every key: a 502 in the caller's shape, nothing of the upstream's body, nothing charged", async () => {
    const cases: Array<[number, string, string]> = [
      [401, "/v1/chat/completions", "upstream_auth_failed"],
      [403, "/v1/chat/completions", "upstream_auth_failed"],
      [402, "/v1/chat/completions", "upstream_billing_failed"],
      [401, "/v1/messages", "upstream_auth_failed"],
    ];
    for (const [status, path, code] of cases) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.reset();
      const upstreamBody = JSON.stringify({
        error: {
          message: "Incorrect API key provided: sk-one***********, org-operator",
          type: "invalid_request_error",
        },
      });
      e.fake.enqueue({ kind: "error", status, body: upstreamBody }, { kind: "error", status, body: upstreamBody });
      const body =
        path === "/v1/messages"
          ? { model: "claude-opus-4-5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }
          : chatAsk;
      const r = await post(e.gw.url, key, path, body);
      expect([status, r.status]).toEqual([status, 502]);
      const text = await r.text();
      expect(text).not.toContain("sk-one");
      expect(text).not.toContain("org-operator");
      const answer = JSON.parse(text);
      if (path === "/v1/messages") expect(answer).toMatchObject({ type: "error", error: { type: "api_error" } });
      else expect(answer.error).toMatchObject({ code });
      await expectVoided(e.gw, accountId, 100);
    }
  });

  test("keys are used in turn", async () => {
    const { key } = await e.gw.account(100);
    e.fake.reset();
    for (let i = 0; i < 4; i++)
      await (await post(e.gw.url, key, "/v1/embeddings", { model: "text-embedding-3-small", input: "x" })).text();
    const auths = e.fake.requests.map((q) => q.headers.authorization);
    expect(auths[0]).not.toBe(auths[1]);
    expect(auths[0]).toBe(auths[2]!);
  });
});

test("Gemini and xAI models go to their providers' paths with their keys", async () => {
  const { key } = await e.gw.account(100);
  e.fake.reset();
  const g = await post(e.gw.url, key, "/v1/chat/completions", { ...chatAsk, model: "gemini-2.5-flash" });
  expect(g.status).toBe(200);
  await g.text();
  const x = await post(e.gw.url, key, "/v1/responses", { model: "grok-4.20", max_output_tokens: 100, input: "hi" });
  expect(x.status).toBe(200);
  await x.text();
  const [gq, xq] = e.fake.requests;
  expect(gq!.path).toBe("/v1beta/openai/chat/completions");
  expect(gq!.headers.authorization).toBe("Bearer gemini-upstream-secret");
  expect(xq!.path).toBe("/v1/responses");
  expect(xq!.headers.authorization).toBe("Bearer xai-upstream-secret");
  expect(JSON.parse(xq!.body).model).toBe("grok-4.20-0309-reasoning");
});

test("a provider without a key answers 503 in the caller's shape, and an unreachable upstream 502; nothing charged; logged as warnings", async () => {
  const lines: string[] = [];
  const gw = await startGateway(
    {
      ...providerEnv(e.fake.url, { ANTHROPIC_API_KEY: undefined, GEMINI_API_KEY: undefined }),
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1", // nothing listens on the discard port
      OPENAI_API_KEY: "k1,k2",
    },
    createLogger("info", (l) => lines.push(l)),
  );
  try {
    const { accountId, key } = await gw.account(100);
    const a = await post(gw.url, key, "/v1/messages", { model: "claude-opus-4-5", max_tokens: 10, messages: [] });
    expect(a.status).toBe(503);
    expect(await a.json()).toMatchObject({
      type: "error",
      error: { type: "overloaded_error", code: "provider_not_configured" },
    });
    const g = await post(gw.url, key, "/v1/chat/completions", { ...chatAsk, model: "gemini-2.5-flash" });
    expect(g.status).toBe(503);
    const gb = await errorOf(g);
    expect(gb.error.code).toBe("provider_not_configured");
    expect(gb.error.message).toContain("GEMINI_API_KEY");
    const o = await post(gw.url, key, "/v1/chat/completions", chatAsk);
    expect(o.status).toBe(502);
    expect((await errorOf(o)).error.code).toBe("upstream_unreachable");
    await expectVoided(gw, accountId, 100);
    // Answers the gateway chose, not defects: a warning each with its code, never "unhandled error" with a stack.
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged.filter((l) => l.msg === "unhandled error")).toEqual([]);
    const warned = logged.filter((l) => l.msg === "request failed");
    expect(warned.map((l) => [l.level, l.status, l.code])).toEqual([
      ["warn", 503, "provider_not_configured"],
      ["warn", 503, "provider_not_configured"],
      ["warn", 502, "upstream_unreachable"],
    ]);
  } finally {
    await gw.stop();
  }
});

test("an upstream base URL that redirects: a 502 in the caller's shape, the redirect not followed nor passed on; nothing charged", async () => {
  let followed = 0;
  const target = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (followed++, new Response("{}")) });
  const redirector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => Response.redirect(`${target.url}moved${new URL(req.url).pathname}`, 301),
  });
  const base = `http://127.0.0.1:${redirector.port}`;
  const gw = await startGateway({
    ...providerEnv(e.fake.url),
    OPENAI_BASE_URL: base + "/v1",
    ANTHROPIC_BASE_URL: base,
  });
  try {
    const { accountId, key } = await gw.account(100);
    const o = await post(gw.url, key, "/v1/chat/completions", chatAsk);
    expect(o.status).toBe(502);
    expect(o.headers.get("location")).toBeNull();
    const ob = await o.text();
    expect(JSON.parse(ob).error.code).toBe("upstream_bad_response");
    expect(ob).not.toContain("moved");
    const a = await post(gw.url, key, "/v1/messages", {
      model: "claude-opus-4-5",
      max_tokens: 10,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(a.status).toBe(502);
    expect(await a.json()).toMatchObject({
      type: "error",
      error: { type: "api_error", code: "upstream_bad_response" },
    });
    const count = await post(gw.url, key, "/v1/messages/count_tokens", {
      model: "claude-opus-4-5",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(count.status).toBe(502);
    expect(followed).toBe(0);
    await expectVoided(gw, accountId, 100, 2);
  } finally {
    await gw.stop();
    redirector.stop(true);
    target.stop(true);
  }
});

describe("DeepSeek on /v1/responses (translated to DeepSeek's chat completions)", () => {
  const D = PRICES["deepseek-test"];
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });

  test("responses.create", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.reset();
    const r = await client(key).responses.create({
      model: "deepseek-test",
      input: "Hello",
      instructions: "Be brief",
      max_output_tokens: 200,
    });
    expect(r.output_text).toBe("Hello! How can I help you today?");
    expect(r.usage?.input_tokens).toBe(1543);
    const up = e.fake.requests[0]!;
    expect(up.path).toBe("/chat/completions");
    expect(up.headers.authorization).toBe("Bearer sk-deepseek-upstream-secret");
    expect(JSON.parse(up.body)).toMatchObject({
      model: "deepseek-test",
      max_tokens: 200,
      messages: [{ role: "system" }, { role: "user", content: "Hello" }],
    });
    await expectCharged(e.gw, accountId, 100, (1543 - 1408) * D.input + 1408 * D.cacheRead + 10 * D.output);
  });

  test("responses.stream, event by event with sequence numbers", async () => {
    const { accountId, key } = await e.gw.account(100);
    const s = client(key).responses.stream({ model: "deepseek-test", input: "Hello", max_output_tokens: 200 });
    const seqs: number[] = [];
    s.on("event", (ev: any) => seqs.push(ev.sequence_number));
    const final = await s.finalResponse();
    expect(final.output_text.length).toBeGreaterThan(0);
    expect(final.status).toBe("completed");
    expect(seqs).toEqual(seqs.map((_, i) => i));
    await expectCharged(e.gw, accountId, 100, 19 * D.input + 7 * D.output);
  });

  test("a failing DeepSeek stream becomes response.failed and the hold is released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("stream-error");
    const events: string[] = [];
    const s = client(key).responses.stream({ model: "deepseek-test", input: "Hello", max_output_tokens: 200 });
    s.on("event", (ev) => events.push(ev.type));
    const final: any = await s.finalResponse().catch((x) => x);
    expect(events).toContain("response.failed");
    if (!(final instanceof Error)) expect(final.status).toBe("failed");
    await expectVoided(e.gw, accountId, 100);
  });

  test("odd but valid input items (a reasoning item whose content is not a list) are translated, not a 500", async () => {
    const { key } = await e.gw.account(100);
    e.fake.reset();
    const input = [
      { type: "reasoning", id: "rs_1", content: 5, summary: {} },
      { role: "user", content: "Hello" },
    ];
    const r = await post(e.gw.url, key, "/v1/responses", { model: "deepseek-test", input, max_output_tokens: 200 });
    expect(r.status).toBe(200);
    expect(JSON.parse(e.fake.requests[0]!.body).messages).toEqual([{ role: "user", content: "Hello" }]);
  });
});
