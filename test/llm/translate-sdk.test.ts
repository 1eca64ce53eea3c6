// The translated answers must be what the openai SDK (7.55) parses: a tiny Bun.serve plays the gateway, turning
// /v1/responses into chat completions against the fake upstream's DeepSeek path (or a synthetic DeepSeek stream
// with reasoning_content), while the chat tap meters the upstream bytes.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { chat, responses, type TapResult } from "../../src/llm/protocols/index.ts";
import { chatResponseToResponses, createChatToResponsesStream, createTranslateContext, responsesRequestToChat } from "../../src/llm/translate/responses-chat.ts";
import { randomPieces, rng } from "../fakes/chunking.ts";
import { startFakeLlmUpstream } from "../fakes/llm-upstream.ts";

// DeepSeek-style stream: reasoning_content first, then text, then two tool calls; usage rides on the finishing
// chunk (choices not empty) with DeepSeek's cache fields.
const head = '{"id":"ds-1","object":"chat.completion.chunk","created":1767225700,"model":"deepseek-reasoner","choices":[{"index":0,"delta":';
const ds = (delta: object, finish: string | null = null, usage = "null") => `data: ${head}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":${usage}}\n\n`;
const DEEPSEEK_STREAM =
  ds({ role: "assistant", content: null, reasoning_content: "" }) +
  ds({ reasoning_content: "The user wants" }) +
  ds({ reasoning_content: " the weather." }) +
  ds({ content: "Let me check." }) +
  ds({ tool_calls: [{ index: 0, id: "call_0_abc", type: "function", function: { name: "get_weather", arguments: "" } }] }) +
  ds({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) +
  ds({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) +
  ds({ tool_calls: [{ index: 1, id: "call_1_def", type: "function", function: { name: "get_time", arguments: "{}" } }] }) +
  ds({}, "tool_calls", '{"prompt_tokens":120,"completion_tokens":85,"total_tokens":205,"prompt_tokens_details":{"cached_tokens":64},"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":56,"completion_tokens_details":{"reasoning_tokens":30}}') +
  "data: [DONE]\n\n";

const fake = startFakeLlmUpstream({ seed: 5 });
const taps: TapResult[] = [];

const gateway = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body: any = await req.json();
    const ctx = createTranslateContext(body);
    const chatBody = responsesRequestToChat(body);
    const upstream =
      body.model === "deepseek-reasoner"
        ? new Response(irregular(new TextEncoder().encode(DEEPSEEK_STREAM)), { headers: { "content-type": "text/event-stream" } })
        : await fetch(fake.url + "/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(chatBody) });
    if (!upstream.ok) return new Response(upstream.body, { status: upstream.status, headers: { "content-type": "application/json" } });
    if (!body.stream) return Response.json(chatResponseToResponses(await upstream.json(), ctx));
    const tap = chat.createStreamTap({ stripUsageChunk: false });
    const metered = upstream.body!.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(c, out) {
          tap.feed(c);
          out.enqueue(c);
        },
        flush() {
          taps.push(tap.end());
        },
      }),
    );
    return new Response(metered.pipeThrough(createChatToResponsesStream(ctx)), { headers: { "content-type": "text/event-stream" } });
  },
});

function irregular(bytes: Uint8Array): ReadableStream<Uint8Array> {
  const pieces = randomPieces(bytes, rng(11), 50);
  return new ReadableStream({
    async pull(c) {
      const p = pieces.shift();
      if (!p) return c.close();
      c.enqueue(p);
      await Bun.sleep(1);
    },
  });
}

const client = new OpenAI({ apiKey: "test", baseURL: `http://127.0.0.1:${gateway.port}/v1`, maxRetries: 0 });
afterAll(async () => {
  await gateway.stop(true);
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
  taps.length = 0;
});

describe("openai SDK on translated DeepSeek answers", () => {
  test("responses.create, non-streaming text", async () => {
    const r = await client.responses.create({ model: "deepseek-chat", instructions: "Be brief.", input: "hi", max_output_tokens: 64 });
    expect(r.output_text).toBe("Hello! How can I help you today?");
    expect(r.model).toBe("deepseek-chat");
    expect(r.usage).toMatchObject({ input_tokens: 1543, input_tokens_details: { cached_tokens: 1408 }, output_tokens: 10 });
    const sent = JSON.parse(fake.requests[0]!.body);
    expect(fake.requests[0]!.path).toBe("/chat/completions");
    expect(sent).toEqual({ model: "deepseek-chat", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }], max_tokens: 64 });
  });

  test("responses.create, non-streaming tool call", async () => {
    fake.enqueue("tool");
    const r = await client.responses.create({ model: "deepseek-chat", input: "weather?", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }] });
    expect(r.output).toHaveLength(1);
    expect(r.output[0]).toMatchObject({ type: "function_call", name: "get_weather", call_id: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy", arguments: '{"location":"Paris, France"}' });
  });

  test("responses.stream().finalResponse(): text, usage metered identically from the upstream tap", async () => {
    const stream = client.responses.stream({ model: "deepseek-chat", input: "hi" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const r = await stream.finalResponse();
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe("Hello! How can I help?");
    expect(deltas).toEqual(["Hello", "! How can I help?"]);
    expect(JSON.parse(fake.requests[0]!.body).stream_options).toEqual({ include_usage: true });
    expect(taps[0]!.usage).toEqual({ input: 19, cacheRead: 0, cacheWrite: 0, output: 7 });
    expect(responses.usageFromBody(r)).toEqual(taps[0]!.usage);
  });

  test("responses.stream with cached tokens and with a tool call", async () => {
    fake.enqueue("cache", "tool");
    const cached = await client.responses.stream({ model: "deepseek-chat", input: "hi" }).finalResponse();
    expect(responses.usageFromBody(cached)).toEqual({ input: 135, cacheRead: 1408, cacheWrite: 0, output: 7 });
    const tool = await client.responses.stream({ model: "deepseek-chat", input: "weather?" }).finalResponse();
    expect(tool.output.map((o) => o.type)).toEqual(["function_call"]);
    expect(tool.output[0]).toMatchObject({ name: "get_weather", arguments: '{"location":"Paris, France"}', status: "completed" });
    expect(taps.map((t) => t.usage?.output)).toEqual([7, 17]);
  });

  test("DeepSeek reasoning + text + two tool calls, streamed", async () => {
    const stream = client.responses.stream({ model: "deepseek-reasoner", input: "weather and time in Paris?" });
    const types: string[] = [];
    stream.on("event", (e) => types.push(e.type));
    const r = await stream.finalResponse();
    expect(r.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call", "function_call"]);
    expect((r.output[0] as any).content).toEqual([{ type: "reasoning_text", text: "The user wants the weather." }]);
    expect(r.output_text).toBe("Let me check.");
    expect(r.output[2]).toMatchObject({ call_id: "call_0_abc", name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(r.output[3]).toMatchObject({ call_id: "call_1_def", name: "get_time", arguments: "{}" });
    expect(r.usage).toMatchObject({ input_tokens: 120, input_tokens_details: { cached_tokens: 64 }, output_tokens: 85, output_tokens_details: { reasoning_tokens: 30 } });
    expect(types).toContain("response.reasoning_text.delta");
    expect(taps[0]).toMatchObject({ completed: true, failed: false, usage: { input: 56, cacheRead: 64, output: 85 } });
    expect(responses.usageFromBody(r)).toEqual(taps[0]!.usage);
  });

  test("responses.create({stream:true}) iterates the same events", async () => {
    const s = await client.responses.create({ model: "deepseek-chat", input: "hi", stream: true });
    const seen: number[] = [];
    for await (const e of s) seen.push(e.sequence_number);
    expect(seen).toEqual(seen.map((_, i) => i));
    expect(seen.length).toBe(10);
  });

  test("an upstream error inside the stream reaches the SDK as a failed response", async () => {
    fake.enqueue("stream-error");
    const stream = client.responses.stream({ model: "deepseek-chat", input: "hi" });
    let failed: any;
    stream.on("response.failed", (e) => (failed = e.response));
    const outcome = await stream.finalResponse().then((r) => r, (e) => e);
    expect(failed).toMatchObject({ status: "failed", error: { code: "server_error" } });
    expect(outcome.status).toBe("failed"); // finalResponse resolves with the failed response, it does not throw
    expect(taps[0]).toMatchObject({ failed: true, usage: null });
  });

  test("an upstream HTTP error passes through in the OpenAI shape", async () => {
    fake.enqueue({ kind: "error", status: 429, retryAfter: "0" });
    const err = await client.responses.create({ model: "deepseek-chat", input: "hi" }).then(() => null, (e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe("rate_limit_exceeded");
  });
});
