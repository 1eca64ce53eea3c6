// Chat Completions, Responses and Embeddings through the gateway with the official openai SDK (7.x), against the
// fake upstream. Each charge is checked in the ledger against the fixture's usage × catalog prices.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { countingFetch, expectCharged, expectVoided, PRICES, startEnv, stopEnv, type Env } from "./support";
import { clearOfWindowEdge } from "../support/rate-windows";
import { errorOf } from "../support/json";

const C = PRICES["gpt-5.2"]; // chat completions
const R = PRICES["gpt-4.1"]; // responses
const E = PRICES["text-embedding-3-small"];
// (prompt − cached) × input + cached × cache_read + completion × output, on the fixtures' numbers
const B_NONSTREAM = (1543 - 1408) * C.input + 1408 * C.cacheRead + 10 * C.output;
const B_STREAM = 19 * C.input + 7 * C.output;
const B_STREAM_CACHE = (1543 - 1408) * C.input + 1408 * C.cacheRead + 7 * C.output;
const B_TOOL = 82 * C.input + 17 * C.output;
const C_TEXT = (1320 - 1152) * R.input + 1152 * R.cacheRead + 8 * R.output;
const C_TOOL = 310 * R.input + 19 * R.output;
const D_EMBED = 9 * E.input;

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const client = (key: string, extra: object = {}) =>
  new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0, ...extra });
const chatAsk = {
  model: "gpt-5.2",
  max_completion_tokens: 256,
  messages: [{ role: "user" as const, content: "Hello" }],
};
const tools = [
  {
    type: "function" as const,
    function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  },
];

describe("chat completions", () => {
  test("non-streaming, prompt-cache usage", async () => {
    const { accountId, key } = await e.gw.account(100);
    const r = await client(key).chat.completions.create(chatAsk);
    expect(r.choices[0]!.message.content).toBeString();
    expect(r.usage!.prompt_tokens_details!.cached_tokens).toBe(1408);
    await expectCharged(e.gw, accountId, 100, B_NONSTREAM);
  });

  test("non-streaming tool call", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("tool");
    const r = await client(key).chat.completions.create({ ...chatAsk, tools });
    expect(r.choices[0]!.message.tool_calls?.[0]).toBeDefined();
    await expectCharged(e.gw, accountId, 100, B_TOOL);
  });

  test("streaming without include_usage: the gateway's usage chunk is cut out, yet the charge is exact", async () => {
    const { accountId, key } = await e.gw.account(100);
    const stream = await client(key).chat.completions.create({ ...chatAsk, stream: true });
    let text = "";
    for await (const chunk of stream) {
      expect(chunk.choices.length).toBeGreaterThan(0); // no usage-only chunk
      expect(chunk.usage ?? null).toBeNull();
      text += chunk.choices[0]!.delta.content ?? "";
    }
    expect(text.length).toBeGreaterThan(0);
    expect(JSON.parse(e.fake.requests.at(-1)!.body).stream_options).toEqual({ include_usage: true });
    await expectCharged(e.gw, accountId, 100, B_STREAM);
  });

  test("streaming with include_usage and cached tokens: the client gets its usage chunk", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("cache");
    const stream = client(key).chat.completions.stream({ ...chatAsk, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    expect(final.usage?.prompt_tokens_details?.cached_tokens).toBe(1408);
    await expectCharged(e.gw, accountId, 100, B_STREAM_CACHE);
  });

  test("streaming tool call", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue("tool");
    const final = await client(key)
      .chat.completions.stream({ ...chatAsk, tools })
      .finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls?.[0];
    expect(call?.type === "function" ? call.function.name : undefined).toBeString();
    await expectCharged(e.gw, accountId, 100, B_TOOL);
  });
});

describe("responses", () => {
  const ask = { model: "gpt-4.1", max_output_tokens: 256, input: "Hi" };

  test("non-streaming, cached input", async () => {
    const { accountId, key } = await e.gw.account(100);
    const r = await client(key).responses.create(ask);
    expect(r.output_text).toBe("Hi there! How can I help?");
    await expectCharged(e.gw, accountId, 100, C_TEXT);
  });

  test("responses.stream assembles the answer; metered from response.completed", async () => {
    const { accountId, key } = await e.gw.account(100);
    const s = client(key).responses.stream(ask);
    let deltas = "";
    s.on("response.output_text.delta", (ev) => (deltas += ev.delta));
    const final = await s.finalResponse();
    expect(final.output_text).toBe(deltas);
    await expectCharged(e.gw, accountId, 100, C_TEXT);
  });

  test("function call, streaming and not", async () => {
    for (const stream of [false, true]) {
      const { accountId, key } = await e.gw.account(100);
      e.fake.enqueue("tool");
      const body = {
        ...ask,
        tools: [
          {
            type: "function" as const,
            name: "get_weather",
            parameters: { type: "object", properties: {} },
            strict: false,
          },
        ],
      };
      const r = stream
        ? await client(key).responses.stream(body).finalResponse()
        : await client(key).responses.create(body);
      expect(r.output.some((o) => o.type === "function_call")).toBe(true);
      await expectCharged(e.gw, accountId, 100, C_TOOL);
    }
  });
});

describe("embeddings", () => {
  test("float and base64 (the SDK's default, decoded by it) are passed through and charged prompt × input", async () => {
    for (const encoding_format of ["float", "base64", undefined] as const) {
      const { accountId, key } = await e.gw.account(100);
      const r = await client(key).embeddings.create({
        model: "text-embedding-3-small",
        input: ["a", "b"],
        ...(encoding_format && { encoding_format }),
      });
      if (encoding_format === "base64") expect(typeof r.data[0]!.embedding).toBe("string");
      else {
        expect(r.data[0]!.embedding.length).toBe(8);
        expect(r.data[0]!.embedding[0]).toBeCloseTo(0.0123291, 5);
      }
      await expectCharged(e.gw, accountId, 100, D_EMBED);
    }
  });
});

describe("errors in the OpenAI shape", () => {
  test("unknown model 404, wrong endpoint 400 naming the right one; nothing held", async () => {
    const { accountId, key } = await e.gw.account(100);
    const a: any = await client(key)
      .chat.completions.create({ ...chatAsk, model: "nope" })
      .catch((x) => x);
    expect(a.status).toBe(404);
    expect(a.code).toBe("model_not_found");
    // Every LLM answers on the three LLM endpoints; an embedding model only on /v1/embeddings, and the reverse.
    const b: any = await client(key)
      .chat.completions.create({ ...chatAsk, model: "text-embedding-3-small" })
      .catch((x) => x);
    expect(b.status).toBe(400);
    expect(b.code).toBe("wrong_endpoint");
    expect(b.message).toContain("/v1/embeddings");
    const c: any = await client(key)
      .embeddings.create({ model: "gpt-4.1", input: "x" })
      .catch((x) => x);
    expect([c.status, c.code]).toEqual([400, "wrong_endpoint"]);
    // a media model: pointed to its task endpoints (by id, or by the short name media endpoints accept)
    for (const model of ["google/nano-banana", "seedance-2-fast"]) {
      const m: any = await client(key)
        .chat.completions.create({ ...chatAsk, model })
        .catch((x) => x);
      expect([m.status, m.code]).toEqual([400, "wrong_endpoint"]);
      expect(m.message).toContain("/api/v1/jobs/createTask");
    }
    const v: any = await client(key)
      .chat.completions.create({ ...chatAsk, model: "kling-3.0/video" })
      .catch((x) => x);
    expect(v.message).toContain("POST /v1/videos");
    await expectVoided(e.gw, accountId, 100, 0);
  });

  test("upstream 429 is passed through with its body and retry-after; the hold is released", async () => {
    const { accountId, key } = await e.gw.account(100);
    e.fake.enqueue({ kind: "error", status: 429, retryAfter: "7" });
    const r = await fetch(e.gw.url + "/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify(chatAsk),
    });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("7");
    expect((await errorOf(r)).error.type).toBeString();
    await expectVoided(e.gw, accountId, 100);
  });

  test("402 insufficient_credits is not retried by the SDK", async () => {
    const { key } = await e.gw.account(0.01);
    const counter = countingFetch();
    const err: any = await client(key, { maxRetries: 2, fetch: counter.fetch })
      .responses.create({ model: "gpt-4.1", input: "hi" })
      .catch((x) => x);
    expect(err.status).toBe(402);
    expect(err.code).toBe("insufficient_credits");
    expect(err.type).toBe("insufficient_quota");
    expect(counter.calls.length).toBe(1);
  });

  test("429 from the gateway's limit is retried by the SDK", async () => {
    const { key } = await e.gw.account(100, { rateRequests: 1, rateWindowSeconds: 1 });
    const counter = countingFetch();
    const c = client(key, { maxRetries: 1, fetch: counter.fetch });
    await clearOfWindowEdge(1, 500); // both calls in one 1 s window: with a limit of 1 the previous one weighs nothing
    await c.embeddings.create({ model: "text-embedding-3-small", input: "x" });
    const raw = await fetch(e.gw.url + "/v1/embeddings", {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: "{}",
    });
    expect(raw.status).toBe(429);
    expect(await raw.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
    const before = counter.calls.length;
    await c.embeddings.create({ model: "text-embedding-3-small", input: "x" }).catch(() => {});
    expect(counter.calls.length - before).toBe(2);
  }, 15_000);

  test("max_credits below the hold → 402 max_credits_exceeded, nothing upstream; above it the field is stripped", async () => {
    const { accountId, key } = await e.gw.account(100);
    const before = e.fake.requests.length;
    const err: any = await client(key)
      .chat.completions.create({ ...chatAsk, max_credits: 0.5 } as any)
      .catch((x) => x);
    expect(err.status).toBe(402);
    expect(err.code).toBe("max_credits_exceeded");
    expect(e.fake.requests.length).toBe(before);
    await client(key).chat.completions.create({ ...chatAsk, max_credits: 50 } as any);
    expect(JSON.parse(e.fake.requests.at(-1)!.body).max_credits).toBeUndefined();
    await expectCharged(e.gw, accountId, 100, B_NONSTREAM);
  });

  test("a malformed max_credits → 400 invalid_max_credits naming it (the media API's rule), nothing upstream; a decimal string is a budget", async () => {
    const { key } = await e.gw.account(100);
    const before = e.fake.requests.length;
    for (const max_credits of [-1, "ten", 0.1234567, 9.1e9, true, [5]]) {
      const err: any = await client(key)
        .chat.completions.create({ ...chatAsk, max_credits } as any)
        .catch((x) => x);
      expect(err.status).toBe(400);
      expect(err.code).toBe("invalid_max_credits");
      expect(err.param).toBe("max_credits");
      expect(err.message).toContain("at most 6 decimals");
    }
    expect(e.fake.requests.length).toBe(before);
    await client(key).chat.completions.create({ ...chatAsk, max_credits: "50.25" } as any);
    expect(e.fake.requests.length).toBe(before + 1);
  });

  test("Responses in background mode → 400 unsupported_parameter in the OpenAI shape, nothing upstream, nothing held", async () => {
    const { key } = await e.gw.account(100);
    const before = e.fake.requests.length;
    const err: any = await client(key)
      .responses.create({ model: "gpt-4.1", input: "x", background: true })
      .catch((x) => x);
    expect(err.status).toBe(400);
    expect(err.code).toBe("unsupported_parameter");
    expect(err.param).toBe("background");
    expect(e.fake.requests.length).toBe(before);
    const credits: any = await (
      await fetch(e.gw.url + "/v1/credits", { headers: { authorization: `Bearer ${key}` } })
    ).json();
    expect(credits).toMatchObject({ credits: 100, held_credits: 0 });
  });
});
