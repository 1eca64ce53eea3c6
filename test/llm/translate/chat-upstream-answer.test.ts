// The chat upstream side, answer direction: Chat Completions JSON answers read into IR, and Gemini's thought
// signatures, which arrive on an answer's tool calls and must go back on the same calls in the next request.
import { describe, expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import type { TranslateTarget } from "../../../src/llm/translate/ir";
import { fixtureJson } from "../../fakes/fixtures";
import { irRequest } from "../../support/codecs";

const { encodeRequest, decodeAnswer } = chatCodec.upstream;
const openai: TranslateTarget = { provider: "openai", dialect: {} };
const deepseek: TranslateTarget = {
  provider: "deepseek",
  dialect: { maxTokensField: "max_tokens", reasoningField: "reasoning_content" },
};

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
      irRequest({
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
          irRequest({
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
