// The chat upstream side, request direction: IR requests written as Chat Completions bodies (per dialect). JSON
// answers read back, and Gemini's thought signatures both ways, are in chat-upstream-answer.test.ts.
import { describe, expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import { TranslationError, type IrRequest, type TranslateTarget } from "../../../src/llm/translate/ir";
import { irRequest } from "../../support/codecs";

const { encodeRequest } = chatCodec.upstream;
const openai: TranslateTarget = { provider: "openai", dialect: {} };
const deepseek: TranslateTarget = {
  provider: "deepseek",
  dialect: { maxTokensField: "max_tokens", reasoningField: "reasoning_content" },
};

describe("IR → chat request", () => {
  test("defaults: max_completion_tokens; a stream asks for the usage chunk; no reasoning_effort unless the dialect takes it", () => {
    const body = encodeRequest(
      irRequest({
        maxOutputTokens: 500,
        stream: true,
        reasoning: { effort: "high" },
        temperature: 0.2,
        topP: 0.9,
        stop: ["END"],
      }),
      openai,
    );
    expect(body).toEqual({
      model: "m-1",
      messages: [{ role: "user", content: "hi" }],
      max_completion_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      stop: ["END"],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test("dialect: max_tokens, reasoning_effort (a thinking budget maps to the nearest effort), no stream usage", () => {
    const target: TranslateTarget = {
      provider: "gemini",
      dialect: { maxTokensField: "max_tokens", reasoningEffort: true, streamUsage: false },
    };
    const body = encodeRequest(
      irRequest({ maxOutputTokens: 64000, stream: true, reasoning: { budgetTokens: 10000 } }),
      target,
    );
    expect(body.max_tokens).toBe(64000);
    expect(body.max_completion_tokens).toBeUndefined();
    expect(body.reasoning_effort).toBe("medium");
    expect(body.stream_options).toBeUndefined();
    expect(encodeRequest(irRequest({ reasoning: { budgetTokens: 1024 } }), target).reasoning_effort).toBe("low");
    expect(encodeRequest(irRequest({ reasoning: { budgetTokens: 32000 } }), target).reasoning_effort).toBe("high");
  });

  test("system parts join into one system message; cache hints are dropped", () => {
    const body = encodeRequest(
      irRequest({
        system: [
          { type: "text", text: "You are terse." },
          { type: "text", text: "Answer in French.", cache: { type: "ephemeral", ttl: "1h" } },
        ],
      }),
      openai,
    );
    expect(body.messages).toEqual([
      { role: "system", content: "You are terse.\n\nAnswer in French." },
      { role: "user", content: "hi" },
    ]);
    expect(JSON.stringify(body)).not.toContain("cache");
  });

  test("images as image_url: a URL as it is, base64 as a data URL", () => {
    const body = encodeRequest(
      irRequest({
        messages: [
          {
            role: "user",
            parts: [
              { type: "text", text: "compare" },
              { type: "image", source: { kind: "url", url: "https://example.com/a.png" }, detail: "low" },
              { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
            ],
          },
        ],
      }),
      openai,
    );
    expect(body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "compare" },
          { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      },
    ]);
  });

  test("a text-only upstream refuses images with a TranslationError naming the message", () => {
    const req = irRequest({
      messages: [
        { role: "user", parts: [{ type: "image", source: { kind: "url", url: "https://example.com/a.png" } }] },
      ],
    });
    expect(() => encodeRequest(req, { provider: "deepseek", dialect: { images: false } })).toThrow(TranslationError);
    try {
      encodeRequest(req, { provider: "deepseek", dialect: { images: false } });
    } catch (e) {
      expect((e as TranslationError).param).toBe("messages[0].content");
    }
  });

  /** Two calls in one turn, their results (one with an image, one an error) and then the user's text. */
  const toolRoundTrip = irRequest({
    tools: [
      {
        name: "read",
        description: "Read a file",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        cache: { type: "ephemeral" },
      },
    ],
    toolChoice: { type: "tool", name: "read" },
    parallelToolCalls: false,
    messages: [
      { role: "user", parts: [{ type: "text", text: "read a and b" }] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Reading." },
          { type: "tool_call", id: "toolu_01A", name: "read", arguments: '{"path":"a"}' },
          { type: "tool_call", id: "toolu_01B", name: "read", arguments: "" },
        ],
      },
      {
        role: "user",
        parts: [
          {
            type: "tool_result",
            callId: "toolu_01A",
            content: [
              { type: "text", text: "alpha" },
              { type: "image", source: { kind: "url", url: "https://example.com/a.png" } },
            ],
          },
          { type: "tool_result", callId: "toolu_01B", content: "no such file", isError: true },
          { type: "text", text: "go on" },
        ],
      },
    ],
  });

  test("a tool round trip: ids kept as they are, tool messages right after the call, then the user's text; error results say so", () => {
    const body = encodeRequest(toolRoundTrip, openai);
    expect(body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "read",
          description: "Read a file",
          parameters: { type: "object", properties: { path: { type: "string" } } },
        },
      },
    ]);
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "read" } });
    expect(body.parallel_tool_calls).toBe(false);
    expect(body.messages).toEqual([
      { role: "user", content: "read a and b" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [
          { id: "toolu_01A", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
          { id: "toolu_01B", type: "function", function: { name: "read", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_01A", content: "alpha" },
      { role: "tool", tool_call_id: "toolu_01B", content: "Error: no such file" },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
          { type: "text", text: "go on" },
        ],
      },
    ]);
  });

  test("tool_choice auto/none/required as strings; no tool_choice or parallel_tool_calls without tools", () => {
    for (const type of ["auto", "none", "required"] as const) {
      const tools = [{ name: "t", parameters: { type: "object" } }];
      expect(encodeRequest(irRequest({ tools, toolChoice: { type } }), openai).tool_choice).toBe(type);
    }
    const body = encodeRequest(irRequest({ toolChoice: { type: "auto" }, parallelToolCalls: true }), openai);
    expect(body.tool_choice).toBeUndefined();
    expect(body.parallel_tool_calls).toBeUndefined();
  });

  test("reasoning goes back only to its own provider, only in the dialect's field; foreign and redacted reasoning is dropped", () => {
    const messages: IrRequest["messages"] = [
      { role: "user", parts: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "Claude thinks", origin: "anthropic", opaque: "sig-claude" },
          { type: "reasoning", text: "", origin: "anthropic", opaque: "redacted-data", redacted: true },
          { type: "reasoning", text: "DeepSeek thinks", origin: "deepseek" },
          { type: "reasoning", text: "nobody knows whose", origin: null },
          { type: "tool_call", id: "call_1", name: "weather", arguments: "{}" },
        ],
      },
      { role: "user", parts: [{ type: "tool_result", callId: "call_1", content: "sunny" }] },
    ];
    const toDeepseek = encodeRequest(irRequest({ messages }), deepseek).messages as any[];
    expect(toDeepseek[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{}" } }],
      reasoning_content: "DeepSeek thinks",
    });
    const toOpenai = JSON.stringify(encodeRequest(irRequest({ messages }), openai));
    for (const s of ["thinks", "sig-claude", "redacted-data", "nobody"]) expect(toOpenai).not.toContain(s);
  });

  test("an assistant turn left with nothing (only foreign reasoning) is omitted, not sent empty", () => {
    const body = encodeRequest(
      irRequest({
        messages: [
          { role: "user", parts: [{ type: "text", text: "a" }] },
          { role: "assistant", parts: [{ type: "reasoning", text: "x", origin: "anthropic", opaque: "s" }] },
          { role: "user", parts: [{ type: "text", text: "b" }] },
        ],
      }),
      openai,
    );
    expect(body.messages).toEqual([
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ]);
  });

  test("consecutive assistant turns (a Responses history: one item each) become one message carrying every call", () => {
    const body = encodeRequest(
      irRequest({
        messages: [
          { role: "user", parts: [{ type: "text", text: "go" }] },
          { role: "assistant", parts: [{ type: "text", text: "Reading." }] },
          { role: "assistant", parts: [{ type: "tool_call", id: "fc_1", name: "read", arguments: "{}" }] },
          { role: "assistant", parts: [{ type: "tool_call", id: "fc_2", name: "read", arguments: "{}" }] },
          { role: "user", parts: [{ type: "tool_result", callId: "fc_1", content: "a" }] },
          { role: "user", parts: [{ type: "tool_result", callId: "fc_2", content: "b" }] },
        ],
      }),
      openai,
    );
    expect((body.messages as any[]).map((m) => [m.role, m.tool_calls?.length ?? 0])).toEqual([
      ["user", 0],
      ["assistant", 2],
      ["tool", 0],
      ["tool", 0],
    ]);
  });

  test("structured output: json_schema and json_object", () => {
    const schema = { type: "object", properties: { a: { type: "number" } } };
    expect(
      encodeRequest(irRequest({ responseFormat: { type: "json_schema", name: "out", schema, strict: true } }), openai)
        .response_format,
    ).toEqual({ type: "json_schema", json_schema: { name: "out", schema, strict: true } });
    expect(encodeRequest(irRequest({ responseFormat: { type: "json_object" } }), openai).response_format).toEqual({
      type: "json_object",
    });
  });
});
