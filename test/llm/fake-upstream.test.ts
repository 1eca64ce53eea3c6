// The fake upstream must answer as the recorded fixtures do, fail on demand, and be parseable by the real SDKs.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { fixtureBytes, fixtureText, RECORDED, sharedFixtureBytes } from "../fakes/fixtures";
import { chunks, joined, useFakeLlmUpstream } from "../support/fake-http";

const { fake, post } = useFakeLlmUpstream();

test("the repo's fixture copies are byte-identical to shared/ (when shared/ is beside the repo)", () => {
  for (const name of RECORDED) {
    const shared = sharedFixtureBytes(name);
    if (shared) expect(fixtureBytes(name)).toEqual(shared);
  }
});

describe("answers byte for byte", () => {
  test("non-streaming answers are the fixture bytes, application/json, with the SDK's request-id header", async () => {
    const cases: [string, object, string, string][] = [
      ["/v1/messages", { model: "claude-sonnet-4-6", max_tokens: 100, messages: [] }, "A_nonstream.json", "request-id"],
      ["/v1/messages/count_tokens", { model: "claude-sonnet-4-6", messages: [] }, "A_count.json", "request-id"],
      ["/v1/chat/completions", { model: "gpt-4o-2024-08-06", messages: [] }, "B_nonstream.json", "x-request-id"],
      ["/chat/completions", { model: "gpt-4o-2024-08-06", messages: [] }, "B_nonstream.json", "x-request-id"],
      [
        "/v1beta/openai/chat/completions",
        { model: "gpt-4o-2024-08-06", messages: [] },
        "B_nonstream.json",
        "x-request-id",
      ],
      ["/v1/responses", { model: "gpt-4.1-2025-04-14", input: "hi" }, "C_nonstream.json", "x-request-id"],
      ["/v1/embeddings", { model: "text-embedding-3-small", input: ["a", "b"] }, "D_float.json", "x-request-id"],
      [
        "/v1/embeddings",
        { model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "base64" },
        "D_base64.json",
        "x-request-id",
      ],
    ];
    for (const [path, body, name, idHeader] of cases) {
      const res = await post(path, body);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.headers.get(idHeader)).toMatch(/^req_/);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(fixtureBytes(name as any)));
    }
  });

  test("streams: the fixture bytes in irregular chunks, text/event-stream", async () => {
    const res = await post("/v1/messages?beta=true", { model: "m", max_tokens: 10, stream: true, messages: [] });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const parts = await chunks(res);
    expect(joined(parts)).toEqual(Buffer.from(fixtureBytes("A_stream_text.sse")));
    expect(parts.length).toBeGreaterThan(3);
    expect(fake.requests[0]!.query).toBe("?beta=true");
  });

  test("chat stream: usage only when include_usage was asked for, as real OpenAI", async () => {
    const withUsage = joined(
      await chunks(
        await post("/v1/chat/completions", {
          model: "gpt-4o-2024-08-06",
          stream: true,
          stream_options: { include_usage: true },
          messages: [],
        }),
      ),
    );
    expect(withUsage).toEqual(Buffer.from(fixtureBytes("B_stream.sse")));
    const without = joined(
      await chunks(await post("/v1/chat/completions", { model: "gpt-4o-2024-08-06", stream: true, messages: [] })),
    ).toString();
    expect(without).not.toContain('"usage"');
    expect(without.split("\n\n").length).toBe(fixtureText("B_stream.sse").split("\n\n").length - 1);
    expect(without.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("chat/responses echo the requested model", async () => {
    const b: any = await (await post("/v1/chat/completions", { model: "deepseek-chat", messages: [] })).json();
    expect(b.model).toBe("deepseek-chat");
    const s = joined(
      await chunks(await post("/v1/responses", { model: "gpt-5", stream: true, input: "x" })),
    ).toString();
    expect(s).toContain('"model":"gpt-5"');
    expect(s).not.toContain("gpt-4.1-2025-04-14");
  });

  test("records method, path, query, headers and the raw body", async () => {
    await fetch(fake.url + "/", { method: "HEAD" });
    await fetch(fake.url + "/v1/messages?beta=true", {
      method: "POST",
      headers: { "x-api-key": "k1", "anthropic-version": "2023-06-01" },
      body: '{"model":"m","max_tokens":1,"messages":[]}',
    });
    expect(fake.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ["HEAD", "/", ""],
      ["POST", "/v1/messages", "?beta=true"],
    ]);
    expect(fake.requests[1]!.headers["x-api-key"]).toBe("k1");
    expect(fake.requests[1]!.body).toBe('{"model":"m","max_tokens":1,"messages":[]}');
  });
});

describe("the official SDKs parse the fake", () => {
  const anthropic = new Anthropic({ apiKey: "test", baseURL: fake.url, maxRetries: 0 });
  const openai = new OpenAI({ apiKey: "test", baseURL: fake.url + "/v1", maxRetries: 0 });

  test("anthropic: create, stream, count_tokens, errors", async () => {
    const m = await anthropic.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 1024,
      messages: [{ role: "user", content: "weather?" }],
    });
    expect(m.usage).toMatchObject({ input_tokens: 38, cache_read_input_tokens: 2113, output_tokens: 74 });
    fake.enqueue("tool");
    const s = await anthropic.messages
      .stream({ model: "claude-sonnet-4-6", max_tokens: 1024, messages: [{ role: "user", content: "weather?" }] })
      .finalMessage();
    expect(s.content.find((b) => b.type === "tool_use")).toMatchObject({
      input: { location: "San Francisco, CA", unit: "fahrenheit" },
    });
    expect(s.usage.output_tokens).toBe(89);
    const n = await anthropic.messages.countTokens({
      model: "claude-sonnet-4-6",
      messages: [{ role: "user", content: "x" }],
    });
    expect(n.input_tokens).toBe(2151);
    fake.enqueue({ kind: "error", status: 429, retryAfter: "0" });
    // (the SDK's APIPromise is a thenable bun's `rejects` does not follow, hence then())
    const err = await anthropic.messages.create({ model: "m", max_tokens: 1, messages: [] }).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
  });

  test("openai: chat stream with usage, responses stream, embeddings base64 (the SDK default)", async () => {
    const stream = await openai.chat.completions.create({
      model: "gpt-4o-2024-08-06",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hi" }],
    });
    let text = "";
    let usage: any;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? "";
      if (c.usage) usage = c.usage;
    }
    expect([text, usage.prompt_tokens, usage.completion_tokens]).toEqual(["Hello! How can I help?", 19, 7]);
    const r = await openai.responses.stream({ model: "gpt-4.1-2025-04-14", input: "hi" }).finalResponse();
    expect([r.output_text, r.usage?.input_tokens]).toEqual(["Hi there! How can I help?", 1320]);
    const e = await openai.embeddings.create({ model: "text-embedding-3-small", input: ["a", "b"] });
    expect(fake.requests.at(-1)!.body).toContain('"encoding_format":"base64"');
    expect(e.data[0]!.embedding[0]).toBeCloseTo(0.0123291, 6);
    expect(e.usage.prompt_tokens).toBe(9);
  });
});

test("runs standalone for benchmarks and prints its URL", async () => {
  const proc = Bun.spawn(
    ["bun", new URL("../fakes/llm-upstream.ts", import.meta.url).pathname, "--port", "0", "--fast"],
    { stdout: "pipe" },
  );
  try {
    const reader = proc.stdout.getReader();
    const { value } = await reader.read();
    const url = new TextDecoder().decode(value).trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(url + "/v1/chat/completions", {
      method: "POST",
      body: '{"model":"gpt-4o-2024-08-06","stream":true,"stream_options":{"include_usage":true},"messages":[]}',
    });
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(fixtureBytes("B_stream.sse")));
  } finally {
    proc.kill();
    await proc.exited;
  }
});
