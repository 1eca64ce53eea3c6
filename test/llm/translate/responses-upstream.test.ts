// The Responses codec's upstream side: IR → a Responses request for GPT/Codex/Grok, and their JSON answers → IR.
// Streamed answers are in responses-upstream-stream.test.ts.
import { describe, expect, test } from "bun:test";
import type { IrRequest, TranslateTarget } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { fixtureJson, type FixtureName } from "../../fakes/fixtures";

const openai: TranslateTarget = { provider: "openai", dialect: {} };
const up = responsesCodec.upstream;

function ir(over: Partial<IrRequest> = {}): IrRequest {
  return {
    model: "gpt-5.2",
    system: [],
    messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
    tools: [],
    stream: false,
    ...over,
  };
}

describe("decodeAnswer", () => {
  test("C_nonstream.json → one text part, end_turn, usage", () => {
    const a = up.decodeAnswer(fixtureJson("C_nonstream.json" as FixtureName), openai);
    expect(a).toEqual({
      id: "resp_0a3f9c2e7b1d4c5f0069a1b2c3d481909f1e2d3c4b5a6978",
      model: "gpt-4.1-2025-04-14",
      parts: [{ type: "text", text: "Hi there! How can I help?" }],
      stop: "end_turn",
      usage: { input: 1320, cacheRead: 1152, cacheWrite: 0, output: 8, reasoning: 0 },
    });
  });

  test("C_nonstream_tool.json → a tool call keyed by call_id, stop tool_use", () => {
    const a = up.decodeAnswer(fixtureJson("C_nonstream_tool.json"), openai);
    expect(a.parts).toEqual([
      {
        type: "tool_call",
        id: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy",
        name: "get_weather",
        arguments: '{"location":"Paris, France"}',
      },
    ]);
    expect(a.stop).toBe("tool_use");
  });

  test("reasoning items keep their encrypted_content as opaque, origin the provider; a refusal stops as refusal", () => {
    const a = up.decodeAnswer(
      {
        id: "resp_x",
        model: "gpt-5.2",
        status: "completed",
        output: [
          {
            id: "rs_9",
            type: "reasoning",
            summary: [{ type: "summary_text", text: "Thinking." }],
            encrypted_content: "enc9",
          },
          {
            id: "msg_9",
            type: "message",
            role: "assistant",
            content: [{ type: "refusal", refusal: "I can't help with that." }],
          },
        ],
        usage: null,
      },
      openai,
    );
    expect(a.parts).toEqual([
      { type: "reasoning", text: "Thinking.", origin: "openai", opaque: "enc9", id: "rs_9" },
      { type: "text", text: "I can't help with that." },
    ]);
    expect(a.stop).toBe("refusal");
  });
});

describe("encodeRequest", () => {
  /** A turn with every item kind: cached system parts, an image, a tool call and its result, then more text. */
  const weatherTurn = ir({
    system: [
      { type: "text", text: "Be brief." },
      { type: "text", text: "Use tools.", cache: { type: "ephemeral", ttl: "1h" } },
    ],
    messages: [
      {
        role: "user",
        parts: [
          { type: "text", text: "Weather in Paris?", cache: { type: "ephemeral" } },
          { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } },
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Checking." },
          { type: "tool_call", id: "toolu_01ABC", name: "get_weather", arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: "user",
        parts: [
          { type: "tool_result", callId: "toolu_01ABC", content: "18C" },
          { type: "text", text: "Thanks" },
        ],
      },
    ],
    tools: [
      {
        name: "get_weather",
        description: "Weather",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    ],
    toolChoice: { type: "tool", name: "get_weather" },
    parallelToolCalls: false,
    maxOutputTokens: 1000,
    temperature: 0.5,
    stream: true,
  });

  test("system → instructions, history → items with stable call ids, tools non-strict, store false", () => {
    const body = up.encodeRequest(weatherTurn, openai);
    expect(body).toEqual({
      model: "gpt-5.2",
      instructions: "Be brief.\n\nUse tools.",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Weather in Paris?" },
            { type: "input_image", image_url: "data:image/png;base64,iVBOR", detail: "auto" },
          ],
        },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
        { type: "function_call", call_id: "toolu_01ABC", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "toolu_01ABC", output: "18C" },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Thanks" }] },
      ],
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
          strict: false,
        },
      ],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      max_output_tokens: 1000,
      temperature: 0.5,
      store: false,
      stream: true,
    });
  });

  test("reasoning goes back only to its origin and only with its encrypted value; asking for reasoning asks for it", () => {
    const body = up.encodeRequest(
      ir({
        reasoning: { budgetTokens: 10000 },
        messages: [
          { role: "user", parts: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            parts: [
              { type: "reasoning", text: "mine", origin: "openai", opaque: "encOpenAI" },
              { type: "reasoning", text: "claude's", origin: "anthropic", opaque: "sigClaude" },
              { type: "reasoning", text: "no proof", origin: "openai" },
              { type: "text", text: "a" },
            ],
          },
        ],
      }),
      openai,
    );
    expect(body.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "q" }] },
      { type: "reasoning", summary: [{ type: "summary_text", text: "mine" }], encrypted_content: "encOpenAI" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }] },
    ]);
    expect(body.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
  });

  test("dialect: a tiny max_output_tokens is raised to the minimum; sampling and effort can be left out", () => {
    const body = up.encodeRequest(
      ir({ maxOutputTokens: 1, temperature: 1, topP: 0.9, reasoning: { effort: "high" } }),
      { provider: "xai", dialect: { sampling: false, reasoningEffort: false, reasoningSummary: null } },
    );
    expect(body.max_output_tokens).toBe(16);
    expect(body.temperature).toBeUndefined();
    expect(body.top_p).toBeUndefined();
    expect(body.reasoning).toBeUndefined();
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
  });

  test("no tools: no tool_choice or parallel_tool_calls either (OpenAI refuses them alone)", () => {
    const body = up.encodeRequest(ir({ toolChoice: { type: "auto" }, parallelToolCalls: false }), openai);
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body.parallel_tool_calls).toBeUndefined();
  });

  test("stop sequences cannot be carried: refused, naming the field", () => {
    expect(() => up.encodeRequest(ir({ stop: ["END"] }), openai)).toThrow(
      expect.objectContaining({ name: "TranslationError", param: "stop" }),
    );
  });

  test("an error tool result says so in its output (Responses has no error flag)", () => {
    const body = up.encodeRequest(
      ir({
        messages: [
          { role: "user", parts: [{ type: "tool_result", callId: "c1", content: "file not found", isError: true }] },
        ],
      }),
      openai,
    );
    expect(body.input).toEqual([{ type: "function_call_output", call_id: "c1", output: "Error: file not found" }]);
  });

  test("json_schema output → text.format", () => {
    const body = up.encodeRequest(
      ir({ responseFormat: { type: "json_schema", name: "r", schema: { type: "object" }, strict: true } }),
      openai,
    );
    expect(body.text).toEqual({ format: { type: "json_schema", name: "r", schema: { type: "object" }, strict: true } });
  });
});
