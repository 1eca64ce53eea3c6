// The chat upstream side: IR requests written as Chat Completions bodies (per dialect), JSON answers read back.
import { describe, expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import { TranslationError, type IrRequest, type TranslateTarget } from "../../../src/llm/translate/ir";
import { fixtureJson } from "../../fakes/fixtures";

const { encodeRequest, decodeAnswer } = chatCodec.upstream;
const openai: TranslateTarget = { provider: "openai", dialect: {} };
const deepseek: TranslateTarget = {
  provider: "deepseek",
  dialect: { maxTokensField: "max_tokens", reasoningField: "reasoning_content" },
};
const base = (over: Partial<IrRequest> = {}): IrRequest => ({
  model: "m-1",
  system: [],
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  tools: [],
  stream: false,
  ...over,
});

describe("IR → chat request", () => {
  test("defaults: max_completion_tokens; a stream asks for the usage chunk; no reasoning_effort unless the dialect takes it", () => {
    const body = encodeRequest(
      base({
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
      base({ maxOutputTokens: 64000, stream: true, reasoning: { budgetTokens: 10000 } }),
      target,
    );
    expect(body.max_tokens).toBe(64000);
    expect(body.max_completion_tokens).toBeUndefined();
    expect(body.reasoning_effort).toBe("medium");
    expect(body.stream_options).toBeUndefined();
    expect(encodeRequest(base({ reasoning: { budgetTokens: 1024 } }), target).reasoning_effort).toBe("low");
    expect(encodeRequest(base({ reasoning: { budgetTokens: 32000 } }), target).reasoning_effort).toBe("high");
  });

  test("system parts join into one system message; cache hints are dropped", () => {
    const body = encodeRequest(
      base({
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
      base({
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
    const req = base({
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

  test("a tool round trip: ids kept as they are, tool messages right after the call, then the user's text; error results say so", () => {
    const body = encodeRequest(
      base({
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
      }),
      openai,
    );
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
      expect(encodeRequest(base({ tools, toolChoice: { type } }), openai).tool_choice).toBe(type);
    }
    const body = encodeRequest(base({ toolChoice: { type: "auto" }, parallelToolCalls: true }), openai);
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
    const toDeepseek = encodeRequest(base({ messages }), deepseek).messages as any[];
    expect(toDeepseek[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{}" } }],
      reasoning_content: "DeepSeek thinks",
    });
    const toOpenai = JSON.stringify(encodeRequest(base({ messages }), openai));
    for (const s of ["thinks", "sig-claude", "redacted-data", "nobody"]) expect(toOpenai).not.toContain(s);
  });

  test("an assistant turn left with nothing (only foreign reasoning) is omitted, not sent empty", () => {
    const body = encodeRequest(
      base({
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
      base({
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
      encodeRequest(base({ responseFormat: { type: "json_schema", name: "out", schema, strict: true } }), openai)
        .response_format,
    ).toEqual({ type: "json_schema", json_schema: { name: "out", schema, strict: true } });
    expect(encodeRequest(base({ responseFormat: { type: "json_object" } }), openai).response_format).toEqual({
      type: "json_object",
    });
  });
});

describe("chat answer → IR", () => {
  test("B_nonstream.json: text, end_turn, usage with the cached tokens inside input", () => {
    expect(decodeAnswer(fixtureJson("B_nonstream.json"), openai)).toEqual({
      id: "chatcmpl-CZ7nX2hQm4vKp8RtYw1sLf3aBdE9u",
      model: "gpt-4o-2024-08-06",
      parts: [{ type: "text", text: "Hello! How can I help you today?" }],
      stop: "end_turn",
      usage: { input: 1543, cacheRead: 1408, cacheWrite: 0, output: 10, reasoning: 0 },
    });
  });

  test("B_nonstream_tool.json: a tool call with the upstream's id and its arguments as sent", () => {
    const a = decodeAnswer(fixtureJson("B_nonstream_tool.json"), openai);
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

  test("DeepSeek reasoning_content is a reasoning part of its origin, before the text", () => {
    const a = decodeAnswer(
      {
        id: "d1",
        model: "deepseek-reasoner",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "42", reasoning_content: "6 times 7" },
            finish_reason: "stop",
          },
        ],
      },
      deepseek,
    );
    expect(a.parts).toEqual([
      { type: "reasoning", text: "6 times 7", origin: "deepseek" },
      { type: "text", text: "42" },
    ]);
  });

  test("finish reasons: length → max_tokens, content_filter → refusal, a refusal message → refusal; tool calls under 'stop' → tool_use", () => {
    const ans = (message: object, finish_reason: string) =>
      decodeAnswer({ id: "x", model: "m", choices: [{ index: 0, message, finish_reason }] }, openai);
    expect(ans({ content: "cut" }, "length").stop).toBe("max_tokens");
    expect(ans({ content: null }, "content_filter").stop).toBe("refusal");
    const refusal = ans({ content: null, refusal: "I can't help with that." }, "stop");
    expect(refusal.stop).toBe("refusal");
    expect(refusal.parts).toEqual([{ type: "text", text: "I can't help with that." }]);
    expect(
      ans(
        { content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
        "stop",
      ).stop,
    ).toBe("tool_use");
  });

  test("a malformed answer does not throw: no choices is an empty answer, arguments given as an object are kept as JSON text", () => {
    expect(decodeAnswer({}, openai)).toMatchObject({ parts: [], stop: "end_turn", usage: null });
    const a = decodeAnswer(
      { choices: [{ message: { tool_calls: [{ function: { name: "f", arguments: { a: 1 } } }] } }] },
      openai,
    );
    expect(a.parts[0]).toMatchObject({ type: "tool_call", name: "f", arguments: '{"a":1}' });
  });
});

describe("Gemini thought signatures on tool calls", () => {
  const gemini: TranslateTarget = { provider: "gemini", dialect: { thoughtSignatures: true, reasoningEffort: true } };
  const geminiCall = (id: string, sig?: string) => ({
    id,
    type: "function",
    function: { name: "read", arguments: '{"path":"a"}' },
    ...(sig && { extra_content: { google: { thought_signature: sig } } }),
  });

  test("a JSON answer's signature becomes a reasoning part of Gemini's origin just before its call", () => {
    const a = decodeAnswer(
      {
        id: "g1",
        model: "gemini-3-pro",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, tool_calls: [geminiCall("c1", "SIG1"), geminiCall("c2")] },
            finish_reason: "stop",
          },
        ],
      },
      gemini,
    );
    expect(a.parts).toEqual([
      { type: "reasoning", text: "", origin: "gemini", opaque: "SIG1" },
      { type: "tool_call", id: "c1", name: "read", arguments: '{"path":"a"}' },
      { type: "tool_call", id: "c2", name: "read", arguments: '{"path":"a"}' },
    ]);
    expect(a.stop).toBe("tool_use");
  });

  test("the signature goes back on its own call; a turn of calls another model made gets the skip placeholder on its first call only", () => {
    const body = encodeRequest(
      base({
        messages: [
          { role: "user", parts: [{ type: "text", text: "go" }] },
          {
            role: "assistant",
            parts: [
              { type: "reasoning", text: "", origin: "gemini", opaque: "SIG1" },
              { type: "tool_call", id: "c1", name: "read", arguments: "{}" },
              { type: "tool_call", id: "c2", name: "read", arguments: "{}" },
            ],
          },
          {
            role: "user",
            parts: [
              { type: "tool_result", callId: "c1", content: "a" },
              { type: "tool_result", callId: "c2", content: "b" },
            ],
          },
          {
            role: "assistant",
            parts: [
              { type: "reasoning", text: "hm", origin: "anthropic", opaque: "CLAUDE" },
              { type: "tool_call", id: "toolu_1", name: "read", arguments: "{}" },
              { type: "tool_call", id: "toolu_2", name: "read", arguments: "{}" },
            ],
          },
          {
            role: "user",
            parts: [
              { type: "tool_result", callId: "toolu_1", content: "a" },
              { type: "tool_result", callId: "toolu_2", content: "b" },
            ],
          },
        ],
      }),
      gemini,
    );
    const calls = (body.messages as any[])
      .filter((m) => m.tool_calls)
      .map((m) => m.tool_calls.map((c: any) => c.extra_content?.google?.thought_signature ?? null));
    expect(calls).toEqual([
      ["SIG1", null],
      ["skip_thought_signature_validator", null],
    ]);
    expect(JSON.stringify(body)).not.toContain("CLAUDE");
    // Without the dialect no extra_content is ever written.
    expect(
      JSON.stringify(
        encodeRequest(
          base({
            messages: [{ role: "assistant", parts: [{ type: "tool_call", id: "x", name: "f", arguments: "{}" }] }],
          }),
          openai,
        ),
      ),
    ).not.toContain("extra_content");
  });

  test("a signature survives a chat client's round trip: answer → reasoning_details → next request → back on the call", () => {
    const answer = chatCodec.client.encodeAnswer(
      decodeAnswer(
        {
          id: "g1",
          model: "gemini-3-pro",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, tool_calls: [geminiCall("c1", "SIG1")] },
              finish_reason: "tool_calls",
            },
          ],
        },
        gemini,
      ),
      {},
    ) as any;
    const next = chatCodec.client.decodeRequest({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        answer.choices[0].message,
        { role: "tool", tool_call_id: "c1", content: "done" },
      ],
    });
    const body = encodeRequest(next, gemini) as any;
    expect(body.messages[1].tool_calls[0].extra_content).toEqual({ google: { thought_signature: "SIG1" } });
  });
});
