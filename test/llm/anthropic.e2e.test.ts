// Anthropic Messages through the gateway with the official SDK, 1.x (Authorization: Bearer) and 0.x (x-api-key),
// against the fake upstream. Each charge is checked in the ledger against the fixture's usage × catalog prices.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic1 from "@anthropic-ai/sdk";
import Anthropic0 from "anthropic-sdk-0";
import { countingFetch, expectCharged, expectVoided, PRICES, startEnv, stopEnv, type Env } from "./support";
import { clearOfWindowEdge } from "../support/rate-windows";
import { errorOf } from "../support/json";

const P = PRICES["claude-opus-4-5"];
// Fixture usage (test/fakes/fixtures): the numbers the upstream states, priced by the formula.
const A_NONSTREAM = 38 * P.input + 0 * P.cacheWrite + 2113 * P.cacheRead + 74 * P.output; // cache read
const A_STREAM_TEXT = 21 * P.input + 1450 * P.cacheWrite + 0 * P.cacheRead + 12 * P.output; // cache write
const A_STREAM_TOOL = 472 * P.input + 89 * P.output;

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const tools = [
  {
    name: "get_weather",
    description: "Weather",
    input_schema: { type: "object" as const, properties: { location: { type: "string" } } },
  },
];
const ask = {
  model: "claude-opus-4-5",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content: "What's the weather in Paris?" }],
};

const sdks = [
  [
    "1.x",
    (key: string, extra: object = {}) => new Anthropic1({ apiKey: key, baseURL: e.gw.url, maxRetries: 0, ...extra }),
  ],
  [
    "0.x",
    (key: string, extra: object = {}) =>
      new Anthropic0({ apiKey: key, baseURL: e.gw.url, maxRetries: 0, ...extra }) as unknown as Anthropic1,
  ],
] as const;

for (const [version, client] of sdks) {
  describe(`@anthropic-ai/sdk ${version}`, () => {
    test("non-streaming answer (tool use, prompt-cache read) is parsed and charged exactly", async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue("tool");
      const msg = await client(key).messages.create({ ...ask, tools });
      expect(msg.stop_reason).toBe("tool_use");
      expect(msg.content.some((b) => b.type === "tool_use")).toBe(true);
      expect(msg.usage.cache_read_input_tokens).toBe(2113);
      await expectCharged(e.gw, accountId, 100, A_NONSTREAM);
    });

    test("streaming text with prompt-cache write: the SDK assembles the message, usage metered from the stream", async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue("cache");
      const stream = client(key).messages.stream(ask);
      let text = "";
      stream.on("text", (t) => (text += t));
      const final = await stream.finalMessage();
      expect(text.length).toBeGreaterThan(0);
      expect(final.usage.output_tokens).toBe(12);
      expect(final.usage.cache_creation_input_tokens).toBe(1450);
      await expectCharged(e.gw, accountId, 100, A_STREAM_TEXT);
    });

    test("streaming tool use: input_json deltas arrive intact", async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue("tool");
      const final = await client(key)
        .messages.stream({ ...ask, tools })
        .finalMessage();
      const call = final.content.find((b) => b.type === "tool_use") as any;
      expect(call).toBeDefined();
      expect(typeof call.input).toBe("object");
      await expectCharged(e.gw, accountId, 100, A_STREAM_TOOL);
    });

    test("unknown model → 404 not_found_error in Anthropic's shape; nothing held", async () => {
      const { accountId, key } = await e.gw.account(100);
      const err: any = await client(key)
        .messages.create({ ...ask, model: "claude-nope" })
        .catch((x) => x);
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
      expect(err.error.error.message).toContain("/v1/models");
      // An embedding model is the one kind not served here (every LLM is, translated where not native).
      const r = await fetch(e.gw.url + "/v1/messages", {
        method: "POST",
        headers: { "x-api-key": key },
        body: JSON.stringify({ ...ask, model: "text-embedding-3-small" }),
      });
      expect(r.status).toBe(400);
      expect((await errorOf(r)).error.message).toContain("/v1/embeddings");
      await expectVoided(e.gw, accountId, 100, 0);
    });

    test("upstream 500 reaches the SDK in Anthropic's shape; the hold is released", async () => {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue({ kind: "error", status: 500 });
      const err: any = await client(key)
        .messages.create(ask)
        .catch((x) => x);
      expect(err.status).toBe(500);
      expect(err.error).toMatchObject({ type: "error", error: { type: "api_error" } });
      await expectVoided(e.gw, accountId, 100);
    });

    test("402 from the wallet is billing_error and not retried", async () => {
      const { accountId, key } = await e.gw.account(0.5);
      const counter = countingFetch();
      const upstreamBefore = e.fake.requests.length;
      const err: any = await client(key, { maxRetries: 2, fetch: counter.fetch })
        .messages.create(ask)
        .catch((x) => x);
      expect(err.status).toBe(402);
      expect(err.error).toMatchObject({
        type: "error",
        error: { type: "billing_error", code: "insufficient_credits" },
      });
      expect(err.error.error.message).toMatch(/needs up to [\d.]+ credits/);
      expect(counter.calls.length).toBe(1);
      expect(e.fake.requests.length).toBe(upstreamBefore); // nothing went upstream
      await expectVoided(e.gw, accountId, 0.5, 0);
    });
  });
}

test("429 from the gateway's own limit is rate_limit_error with retry-after, and the SDK retries it", async () => {
  const { key } = await e.gw.account(100, { rateRequests: 1, rateWindowSeconds: 1 });
  const counter = countingFetch();
  const c = new Anthropic1({ apiKey: key, baseURL: e.gw.url, maxRetries: 1, fetch: counter.fetch });
  await clearOfWindowEdge(1, 500); // both calls in one 1 s window: with a limit of 1 the previous one weighs nothing
  await c.messages.create(ask);
  const before = counter.calls.length;
  const raw = await fetch(e.gw.url + "/v1/messages", {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify(ask),
  });
  expect(raw.status).toBe(429);
  expect(Number(raw.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(await raw.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  await c.messages.create(ask).catch(() => {});
  expect(counter.calls.length - before).toBe(2); // refused once, retried once
}, 15_000);

test("count_tokens is passed through and free; ?beta=true and anthropic-beta reach the upstream; our key does not", async () => {
  const { accountId, key } = await e.gw.account(100);
  const c = new Anthropic1({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
  const n = await c.messages.countTokens({ model: "claude-opus-4-5", messages: ask.messages });
  expect(n.input_tokens).toBe(2151);
  await expectVoided(e.gw, accountId, 100, 0);

  e.fake.reset();
  const r = await fetch(e.gw.url + "/v1/messages?beta=true", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "anthropic-version": "2026-10-21",
      "anthropic-beta": "a-2025,b-2026",
      "x-app": "cli",
    },
    body: JSON.stringify({ ...ask, stream: true }),
  });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toStartWith("text/event-stream");
  await r.text();
  const up = e.fake.requests[0]!;
  expect(up.query).toBe("?beta=true");
  expect(up.headers["anthropic-version"]).toBe("2026-10-21");
  expect(up.headers["anthropic-beta"]).toBe("a-2025,b-2026");
  expect(up.headers["x-api-key"]).toBe("sk-ant-upstream-secret");
  expect(up.headers.authorization).toBeUndefined();
  expect(JSON.stringify(up.headers)).not.toContain(key);
  expect(JSON.parse(up.body).model).toBe("claude-opus-4-5-20251101"); // catalog id → upstream name
  expect(r.headers.get("request-id")).toStartWith("req_");
});

test("HEAD / answers 200 (Claude Code's probe)", async () => {
  expect((await fetch(e.gw.url + "/", { method: "HEAD" })).status).toBe(200);
  expect((await fetch(e.gw.url + "/api/hello", { method: "HEAD" })).status).toBe(200);
});
