// The chat client side's request decoding: what is carried into the IR, what is dropped, what is refused.
import { describe, expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import { sealOpaque, TranslationError } from "../../../src/llm/translate/ir";

const { decodeRequest, encodeAnswer } = chatCodec.client;
const body = (over: Record<string, unknown> = {}) => ({
  model: "claude-x",
  messages: [{ role: "user", content: "hi" }],
  ...over,
});

function refusal(b: Record<string, unknown>): TranslationError {
  try {
    decodeRequest(b);
  } catch (e) {
    if (e instanceof TranslationError) return e;
    throw new Error(`expected a TranslationError, got ${String(e)}`);
  }
  throw new Error("expected a TranslationError, got none");
}

describe("chat request → IR", () => {
  test("system and developer messages, wherever they stand, join the system prompt in order", () => {
    const ir = decodeRequest(
      body({
        messages: [
          { role: "system", content: "Be terse." },
          { role: "developer", content: [{ type: "text", text: "Use French." }] },
          { role: "user", content: "hi" },
          { role: "assistant", content: "Salut." },
          { role: "system", content: "Now use German." },
          { role: "user", content: "again" },
        ],
      }),
    );
    expect(ir.system).toEqual([
      { type: "text", text: "Be terse." },
      { type: "text", text: "Use French." },
      { type: "text", text: "Now use German." },
    ]);
    expect(ir.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "hi" }] },
      { role: "assistant", parts: [{ type: "text", text: "Salut." }] },
      { role: "user", parts: [{ type: "text", text: "again" }] },
    ]);
  });

  test("user parts: text, an image URL, a base64 data URL with its media type and detail", () => {
    const ir = decodeRequest(
      body({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "what is this" },
              { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
            ],
          },
        ],
      }),
    );
    expect(ir.messages[0]!.parts).toEqual([
      { type: "text", text: "what is this" },
      { type: "image", source: { kind: "url", url: "https://example.com/cat.jpg" } },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" }, detail: "high" },
    ]);
  });

  /** Two calls (one with arguments that are not JSON), both results and the user's next message. */
  const toolRoundTrip = body({
    messages: [
      { role: "user", content: "read a" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_abc", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
          { id: "call_def", type: "function", function: { name: "read", arguments: "{bad json" } },
        ],
      },
      { role: "tool", tool_call_id: "call_abc", content: "alpha" },
      { role: "tool", tool_call_id: "call_def", content: [{ type: "text", text: "beta" }] },
      { role: "user", content: "thanks" },
    ],
    tools: [
      {
        type: "function",
        function: {
          name: "read",
          description: "Read a file",
          parameters: { type: "object", properties: { path: { type: "string" } } },
          strict: true,
        },
      },
    ],
    tool_choice: { type: "function", function: { name: "read" } },
    parallel_tool_calls: false,
  });

  test("a tool round trip: calls keep their ids, tool messages and the next user message become one user turn", () => {
    const ir = decodeRequest(toolRoundTrip);
    expect(ir.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "read a" }] },
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "call_abc", name: "read", arguments: '{"path":"a"}' },
          { type: "tool_call", id: "call_def", name: "read", arguments: "{bad json" },
        ],
      },
      {
        role: "user",
        parts: [
          { type: "tool_result", callId: "call_abc", content: "alpha" },
          { type: "tool_result", callId: "call_def", content: "beta" },
          { type: "text", text: "thanks" },
        ],
      },
    ]);
    expect(ir.tools).toEqual([
      {
        name: "read",
        description: "Read a file",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        strict: true,
      },
    ]);
    expect(ir.toolChoice).toEqual({ type: "tool", name: "read" });
    expect(ir.parallelToolCalls).toBe(false);
  });

  test("limits and sampling: max_completion_tokens over max_tokens, stop as a string or list, reasoning_effort, response_format", () => {
    const ir = decodeRequest(
      body({
        max_tokens: 100,
        max_completion_tokens: 200,
        temperature: 0.3,
        top_p: 0.8,
        stop: "END",
        reasoning_effort: "xhigh",
        response_format: {
          type: "json_schema",
          json_schema: { name: "out", schema: { type: "object" }, strict: true },
        },
        stream: true,
        stream_options: { include_usage: true },
        user: "u-1",
      }),
    );
    expect(ir).toMatchObject({
      maxOutputTokens: 200,
      temperature: 0.3,
      topP: 0.8,
      stop: ["END"],
      reasoning: { effort: "high" },
      stream: true,
      user: "u-1",
    });
    expect(ir.responseFormat).toEqual({ type: "json_schema", name: "out", schema: { type: "object" }, strict: true });
    expect(decodeRequest(body({ max_tokens: 100, stop: ["a", "b"] }))).toMatchObject({
      maxOutputTokens: 100,
      stop: ["a", "b"],
    });
    expect(decodeRequest(body({ reasoning_effort: "none" })).reasoning).toBeUndefined();
    expect(decodeRequest(body({ response_format: { type: "json_object" } })).responseFormat).toEqual({
      type: "json_object",
    });
  });

  test("harmless fields are dropped: seed, zero penalties, metadata, store, user name, non-priority service tiers", () => {
    const ir = decodeRequest(
      body({
        seed: 7,
        frequency_penalty: 0,
        presence_penalty: 0,
        logit_bias: {},
        metadata: { a: "b" },
        store: false,
        service_tier: "auto",
        prompt_cache_key: "k",
        safety_identifier: "s",
        n: 1,
        logprobs: false,
        parallel_tool_calls: true,
        messages: [{ role: "user", name: "bob", content: "hi" }],
      }),
    );
    expect(ir.messages).toEqual([{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
  });

  const refused: Array<[string, Record<string, unknown>]> = [
    ["n", { n: 2 }],
    ["logprobs", { logprobs: true }],
    ["top_logprobs", { top_logprobs: 3 }],
    ["audio", { audio: { voice: "alloy", format: "wav" } }],
    ["modalities", { modalities: ["text", "audio"] }],
    ["web_search_options", { web_search_options: {} }],
    ["prediction", { prediction: { type: "content", content: "x" } }],
    ["service_tier", { service_tier: "priority" }],
    ["frequency_penalty", { frequency_penalty: 0.5 }],
    ["presence_penalty", { presence_penalty: -1 }],
    ["logit_bias", { logit_bias: { "50256": -100 } }],
    ["functions", { functions: [{ name: "f" }] }],
    ["tools[0]", { tools: [{ type: "custom", custom: { name: "x" } }] }],
    [
      "messages[0].content[0]",
      {
        messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AA==", format: "wav" } }] }],
      },
    ],
    ["messages[0].content[0]", { messages: [{ role: "user", content: [{ type: "file", file: { file_id: "f" } }] }] }],
  ];
  test.each(refused)("refused, naming %s", (param, over) => {
    expect(refusal(body(over)).param).toBe(param);
  });

  const malformed: Array<[string, Record<string, unknown>]> = [
    ["messages", { messages: "hi" }],
    ["messages[0]", { messages: [null] }],
    ["messages[0].role", { messages: [{ role: "robot", content: "x" }] }],
    ["messages[0].content", { messages: [{ role: "user", content: 42 }] }],
    ["messages[0].content", { messages: [{ role: "system", content: null }] }],
    ["messages[0].tool_call_id", { messages: [{ role: "tool", content: "x" }] }],
    ["messages[0].tool_calls", { messages: [{ role: "assistant", tool_calls: {} }] }],
    ["messages[0].tool_calls[0]", { messages: [{ role: "assistant", tool_calls: [{ type: "function" }] }] }],
    [
      "messages[0].content[0]",
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "file:///etc/passwd" } }] }] },
    ],
    ["tools", { tools: { type: "function" } }],
    ["tools[0].function.name", { tools: [{ type: "function", function: {} }] }],
    ["tools[0].function.parameters", { tools: [{ type: "function", function: { name: "f", parameters: "x" } }] }],
    ["tool_choice", { tool_choice: "always" }],
    ["max_completion_tokens", { max_completion_tokens: -5 }],
    ["max_tokens", { max_tokens: 1.5 }],
    ["temperature", { temperature: "hot" }],
    ["stop", { stop: [1, 2] }],
    ["reasoning_effort", { reasoning_effort: "max" }],
    ["response_format", { response_format: { type: "yaml" } }],
  ];
  test.each(malformed)("a malformed request is a TranslationError naming %s, never a TypeError", (param, over) => {
    expect(refusal(body(over)).param).toBe(param);
  });
});

describe("reasoning carried through a chat client", () => {
  test("a Claude thinking block round-trips: reasoning_details carries the sealed signature back to its origin", () => {
    const answer = encodeAnswer(
      {
        id: "msg_1",
        model: "claude-x",
        parts: [
          { type: "reasoning", text: "Let me think.", origin: "anthropic", opaque: "SIG" },
          { type: "reasoning", text: "", origin: "anthropic", opaque: "REDACTED", redacted: true },
          { type: "text", text: "Done." },
        ],
        stop: "end_turn",
        usage: null,
      },
      body(),
    ) as any;
    const message = answer.choices[0].message;
    expect(message.reasoning_content).toBe("Let me think.");
    expect(message.reasoning_details).toEqual([
      { type: "reasoning.text", text: "Let me think.", signature: sealOpaque("anthropic", "SIG"), index: 0 },
      { type: "reasoning.encrypted", data: sealOpaque("anthropic", "REDACTED"), index: 1 },
    ]);
    const next = decodeRequest(
      body({ messages: [{ role: "user", content: "q" }, message, { role: "user", content: "more" }] }),
    );
    expect(next.messages[1]!.parts).toEqual([
      { type: "reasoning", text: "Let me think.", origin: "anthropic", opaque: "SIG" },
      { type: "reasoning", text: "", origin: "anthropic", opaque: "REDACTED", redacted: true },
      { type: "text", text: "Done." },
    ]);
  });

  test("reasoning_content alone, or an unsealed signature, comes back with no origin (no upstream will get it)", () => {
    const ir = decodeRequest(
      body({
        messages: [
          { role: "assistant", content: "a", reasoning_content: "thought" },
          { role: "user", content: "b" },
          {
            role: "assistant",
            content: "c",
            reasoning_details: [{ type: "reasoning.text", text: "t", signature: "forged" }],
          },
        ],
      }),
    );
    expect(ir.messages[0]!.parts[0]).toEqual({ type: "reasoning", text: "thought", origin: null });
    expect(ir.messages[2]!.parts[0]).toEqual({ type: "reasoning", text: "t", origin: null, opaque: "forged" });
  });
});
