// The upstream side of the Anthropic codec, request direction: an IR request (from an OpenAI-protocol client)
// written as the Messages body Claude accepts.
import { describe, expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";
import { TranslationError, type IrRequest } from "../../../src/llm/translate/ir";

const { upstream } = anthropicCodec;
const target = { provider: "anthropic", dialect: {} };
const req = (over: Partial<IrRequest> = {}): IrRequest => ({
  model: "claude-sonnet-4-5-20250929",
  system: [],
  messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }],
  tools: [],
  stream: false,
  ...over,
});
const encode = (over: Partial<IrRequest> = {}, dialect: Record<string, unknown> = {}) =>
  upstream.encodeRequest(req(over), { provider: "anthropic", dialect }) as any;

describe("IR → Messages body", () => {
  test("roles alternate: same-role neighbours merge, empty text goes, tool results lead their user message", () => {
    const body = encode({
      system: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "" },
        { type: "text", text: "Cached", cache: { type: "ephemeral", ttl: "1h" } },
      ],
      messages: [
        { role: "user", parts: [{ type: "text", text: "Weather?" }] },
        { role: "user", parts: [{ type: "text", text: "" }] },
        {
          role: "assistant",
          parts: [
            { type: "text", text: "" },
            { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
          ],
        },
        { role: "assistant", parts: [{ type: "tool_call", id: "call_2", name: "get_time", arguments: "" }] },
        { role: "user", parts: [{ type: "tool_result", callId: "call_1", content: "18C" }] },
        {
          role: "user",
          parts: [
            { type: "text", text: "also" },
            { type: "tool_result", callId: "call_2", content: [{ type: "text", text: "noon" }], isError: true },
          ],
        },
      ],
      stream: true,
    });
    expect(body.system).toEqual([
      { type: "text", text: "Be brief." },
      { type: "text", text: "Cached", cache_control: { type: "ephemeral", ttl: "1h" } },
    ]);
    expect(body.stream).toBe(true);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "call_2", name: "get_time", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "18C" },
          { type: "tool_result", tool_use_id: "call_2", content: [{ type: "text", text: "noon" }], is_error: true },
          { type: "text", text: "also" },
        ],
      },
    ]);
  });

  test("max_tokens: the IR's, else the dialect's default, else 4096", () => {
    expect(encode({ maxOutputTokens: 900 }).max_tokens).toBe(900);
    expect(encode({}, { defaultMaxTokens: 8192 }).max_tokens).toBe(8192);
    expect(encode().max_tokens).toBe(4096);
  });

  test("reasoning: a budget or an effort's budget, kept at least 1024 and below max_tokens; none where it cannot fit", () => {
    expect(encode({ maxOutputTokens: 16000, reasoning: { budgetTokens: 5000 } }).thinking).toEqual({
      type: "enabled",
      budget_tokens: 5000,
    });
    expect(encode({ maxOutputTokens: 64000, reasoning: { effort: "high" } }).thinking).toEqual({
      type: "enabled",
      budget_tokens: 24576,
    });
    expect(encode({ maxOutputTokens: 64000, reasoning: { effort: "low" } }).thinking).toEqual({
      type: "enabled",
      budget_tokens: 2048,
    });
    expect(encode({ maxOutputTokens: 3000, reasoning: { effort: "high" } }).thinking).toEqual({
      type: "enabled",
      budget_tokens: 2999,
    });
    expect(encode({ maxOutputTokens: 1000, reasoning: { effort: "high" } }).thinking).toBeUndefined();
  });

  test("thinking is left out with a forced tool choice, and when the turn answers tool calls made without thinking", () => {
    const tools = [{ name: "t", parameters: { type: "object" } }];
    expect(
      encode({ maxOutputTokens: 9000, reasoning: { effort: "low" }, tools, toolChoice: { type: "required" } }).thinking,
    ).toBeUndefined();
    const history: IrRequest["messages"] = [
      { role: "user", parts: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "gpt thought", origin: "openai", opaque: "enc" },
          { type: "tool_call", id: "c1", name: "t", arguments: "{}" },
        ],
      },
      { role: "user", parts: [{ type: "tool_result", callId: "c1", content: "ok" }] },
    ];
    const body = encode({ maxOutputTokens: 9000, reasoning: { effort: "low" }, tools, messages: history });
    expect(body.thinking).toBeUndefined();
    expect(body.messages[1].content).toEqual([{ type: "tool_use", id: "c1", name: "t", input: {} }]);
  });

  test("reasoning goes back only when Anthropic made it, with its signature; redacted as redacted_thinking", () => {
    const body = encode({
      maxOutputTokens: 9000,
      reasoning: { budgetTokens: 2000 },
      tools: [{ name: "t", parameters: { type: "object" } }],
      messages: [
        { role: "user", parts: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", text: "claude thought", origin: "anthropic", opaque: "EqQBsig" },
            { type: "reasoning", text: "", origin: "anthropic", opaque: "EmwKred", redacted: true },
            { type: "reasoning", text: "gpt thought", origin: "openai", opaque: "gAAAA" },
            { type: "reasoning", text: "unsigned", origin: "anthropic" },
            { type: "reasoning", text: "who knows", origin: null },
            { type: "tool_call", id: "c1", name: "t", arguments: "{}" },
          ],
        },
        { role: "user", parts: [{ type: "tool_result", callId: "c1", content: "ok" }] },
      ],
    });
    expect(body.messages[1].content).toEqual([
      { type: "thinking", thinking: "claude thought", signature: "EqQBsig" },
      { type: "redacted_thinking", data: "EmwKred" },
      { type: "tool_use", id: "c1", name: "t", input: {} },
    ]);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
  });

  test("sampling: temperature clamped to 0–1, top_p only without temperature, neither with thinking or when the dialect says no", () => {
    expect(encode({ temperature: 1.5, topP: 0.9 })).toMatchObject({ temperature: 1 });
    expect(encode({ temperature: 1.5, topP: 0.9 })).not.toHaveProperty("top_p");
    expect(encode({ topP: 0.9 }).top_p).toBe(0.9);
    const thinking = encode({ temperature: 0.2, maxOutputTokens: 9000, reasoning: { effort: "low" } });
    expect(thinking).not.toHaveProperty("temperature");
    expect(encode({ temperature: 0.2 }, { sampling: false })).not.toHaveProperty("temperature");
  });

  test("tools, tool_choice and parallel calls", () => {
    const tools = [
      {
        name: "get_weather",
        description: "Weather",
        parameters: { properties: { city: { type: "string" } } },
        strict: true,
        cache: { type: "ephemeral" as const },
      },
    ];
    const body = encode({ tools, toolChoice: { type: "tool", name: "get_weather" }, parallelToolCalls: false });
    expect(body.tools).toEqual([
      {
        name: "get_weather",
        description: "Weather",
        input_schema: { type: "object", properties: { city: { type: "string" } } },
        strict: true,
        cache_control: { type: "ephemeral" },
      },
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "get_weather", disable_parallel_tool_use: true });
    expect(encode({ tools, toolChoice: { type: "required" } }).tool_choice).toEqual({ type: "any" });
    expect(encode({ tools, toolChoice: { type: "none" } }).tool_choice).toEqual({ type: "none" });
    expect(encode({ tools, parallelToolCalls: false }).tool_choice).toEqual({
      type: "auto",
      disable_parallel_tool_use: true,
    });
    expect(encode({ tools }, { structuredOutputs: false }).tools[0]).not.toHaveProperty("strict");
    expect(encode({ toolChoice: { type: "required" } })).not.toHaveProperty("tool_choice");
  });

  test("tool ids Anthropic would refuse are encoded reversibly; valid ones pass unchanged", () => {
    const ids = ["call_abc-1", "call:1/2 é", "syid_looks_like_ours"];
    const body = encode({
      messages: [
        { role: "assistant", parts: ids.map((id) => ({ type: "tool_call" as const, id, name: "t", arguments: "{}" })) },
        { role: "user", parts: ids.map((id) => ({ type: "tool_result" as const, callId: id, content: "x" })) },
      ],
    });
    const sent: string[] = body.messages[0].content.map((b: any) => b.id);
    expect(sent[0]).toBe("call_abc-1");
    for (const id of sent) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(body.messages[1].content.map((b: any) => b.tool_use_id)).toEqual(sent);
    // Claude echoes an id in its answer only as its own tool_use ids; decoding maps any of ours back.
    const answer = upstream.decodeAnswer(
      {
        id: "m",
        model: "c",
        content: sent.map((id) => ({ type: "tool_use", id, name: "t", input: {} })),
        stop_reason: "tool_use",
        usage: {},
      },
      target,
    );
    expect(answer.parts.map((p: any) => p.id)).toEqual(ids);
  });

  test("images: base64, http url, and data: URLs sent as base64", () => {
    const body = encode({
      messages: [
        {
          role: "user",
          parts: [
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBO" } },
            { type: "image", source: { kind: "url", url: "https://example.com/a.jpg" } },
            { type: "image", source: { kind: "url", url: "data:image/jpeg;base64,/9j/4AAQ" } },
          ],
        },
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/4AAQ" } },
    ]);
  });

  test("structured output, stop sequences and the end user", () => {
    const schema = { type: "object", properties: { a: { type: "number" } } };
    expect(encode({ responseFormat: { type: "json_schema", name: "x", schema } }).output_config).toEqual({
      format: { type: "json_schema", schema },
    });
    expect(encode({ responseFormat: { type: "json_object" } }).output_config).toEqual({
      format: { type: "json_schema", schema: { type: "object" } },
    });
    expect(() => encode({ responseFormat: { type: "json_object" } }, { structuredOutputs: false })).toThrow(
      TranslationError,
    );
    expect(encode({ stop: ["END", " ", ""] }).stop_sequences).toEqual(["END"]);
    expect(encode({ user: "u-1" }).metadata).toEqual({ user_id: "u-1" });
  });

  test("a conversation with nothing left to send is refused, not sent", () => {
    const e = (() => {
      try {
        encode({ messages: [{ role: "user", parts: [{ type: "text", text: "" }] }] });
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(TranslationError);
    expect((e as TranslationError).param).toBe("messages");
  });
});

test("more than 4 cache hints: the earliest are dropped, the last 4 kept (Anthropic's limit)", () => {
  const hint = { type: "ephemeral" as const };
  const body = encode({
    tools: [{ name: "t", parameters: { type: "object" }, cache: hint }],
    system: [{ type: "text", text: "s", cache: hint }],
    messages: [
      { role: "user", parts: [{ type: "text", text: "a", cache: hint }] },
      { role: "assistant", parts: [{ type: "tool_call", id: "c", name: "t", arguments: "{}" }] },
      {
        role: "user",
        parts: [{ type: "tool_result", callId: "c", content: [{ type: "text", text: "r", cache: hint }], cache: hint }],
      },
    ],
  });
  expect(body.tools[0]).not.toHaveProperty("cache_control");
  expect(body.system[0].cache_control).toEqual(hint);
  expect(body.messages[0].content[0].cache_control).toEqual(hint);
  expect(body.messages[2].content[0].cache_control).toEqual(hint);
  expect(body.messages[2].content[0].content[0].cache_control).toEqual(hint);
});
