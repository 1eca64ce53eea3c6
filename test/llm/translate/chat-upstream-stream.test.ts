// The chat upstream stream decoder fed recorded and synthesized chat streams, cut at arbitrary byte boundaries.
import { describe, expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import type { IrEvent, TranslateTarget } from "../../../src/llm/translate/ir";
import { fixtureBytes } from "../../fakes/fixtures";
import { assemble, chunk, decodeSse, sse } from "./chat-sse";

const openai: TranslateTarget = { provider: "openai", dialect: {} };
const decode = (bytes: Uint8Array, target = openai, seed = 1) =>
  decodeSse(chatCodec.upstream.streamDecoder(target), bytes, seed);
const terminal = (events: IrEvent[]) => events.filter((e) => e.type === "finish" || e.type === "error");

describe("chat upstream stream → IR", () => {
  test("B_stream.sse: start, one text part, then one finish carrying the usage chunk's counts", () => {
    for (const seed of [1, 2, 3]) {
      const events = decode(fixtureBytes("B_stream.sse"), openai, seed);
      expect(events[0]).toEqual({
        type: "start",
        id: "chatcmpl-CZ7o1LkV9cTq2WnRe8sPdY4mHbA6x",
        model: "gpt-4o-2024-08-06",
        usage: null,
      });
      expect(assemble(events)).toEqual([{ type: "text", text: "Hello! How can I help?", arguments: "" }]);
      expect(terminal(events)).toEqual([
        {
          type: "finish",
          stop: "end_turn",
          usage: { input: 19, cacheRead: 0, cacheWrite: 0, output: 7, reasoning: 0 },
        },
      ]);
      expect(events.at(-1)!.type).toBe("finish");
    }
  });

  test("the finish waits for the usage chunk that follows finish_reason", () => {
    const d = chatCodec.upstream.streamDecoder(openai);
    d.feed(undefined, JSON.stringify(chunk({ role: "assistant", content: "Hi" })));
    const atFinishReason = d.feed(undefined, JSON.stringify(chunk({}, "stop")));
    expect(atFinishReason).toEqual([{ type: "part_end", index: 0 }]);
    const atUsage = d.feed(
      undefined,
      JSON.stringify(chunk(null, null, { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 })),
    );
    expect(atUsage).toEqual([
      { type: "finish", stop: "end_turn", usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 } },
    ]);
    expect(d.feed(undefined, "[DONE]")).toEqual([]);
    expect(d.end()).toEqual([]);
  });

  test("B_stream_cache.sse: cached prompt tokens come back as cacheRead, inside input", () => {
    const fin = terminal(decode(fixtureBytes("B_stream_cache.sse")))[0] as any;
    expect(fin.usage).toEqual({ input: 1543, cacheRead: 1408, cacheWrite: 0, output: 7, reasoning: 0 });
  });

  test("B_stream_tool.sse: one tool_call part with the upstream's id, its arguments in pieces, stop tool_use", () => {
    const events = decode(fixtureBytes("B_stream_tool.sse"), openai, 7);
    expect(assemble(events)).toEqual([
      {
        type: "tool_call",
        id: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy",
        name: "get_weather",
        text: "",
        arguments: '{"location":"Paris, France"}',
      },
    ]);
    expect(events.filter((e) => e.type === "delta").length).toBe(2); // streamed as it came, not joined
    expect((terminal(events)[0] as any).stop).toBe("tool_use");
  });

  test("B_stream_midstream_error.sse: an IR error, and nothing after it", () => {
    const events = decode(fixtureBytes("B_stream_midstream_error.sse"));
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    expect(events[1]).toEqual({
      type: "error",
      status: 500,
      code: "server_error",
      message: "The server had an error while processing your request. Sorry about that!",
    });
  });

  test("DeepSeek: reasoning_content is a reasoning part of the provider's origin; usage on the finishing chunk finishes at once", () => {
    const ds: TranslateTarget = {
      provider: "deepseek",
      dialect: { reasoningField: "reasoning_content", maxTokensField: "max_tokens" },
    };
    const usage = {
      prompt_tokens: 120,
      completion_tokens: 85,
      total_tokens: 205,
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: 56,
      completion_tokens_details: { reasoning_tokens: 30 },
    };
    const d = chatCodec.upstream.streamDecoder(ds);
    const events = [
      chunk({ role: "assistant", content: null, reasoning_content: "" }),
      chunk({ reasoning_content: "The user wants" }),
      chunk({ reasoning_content: " the weather." }),
      chunk({ content: "Let me check." }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_0_abc", type: "function", function: { name: "get_weather", arguments: "" } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
      chunk({}, "tool_calls", usage),
    ].flatMap((c) => d.feed(undefined, JSON.stringify(c)));
    expect(assemble(events)).toEqual([
      { type: "reasoning", origin: "deepseek", text: "The user wants the weather.", arguments: "" },
      { type: "text", text: "Let me check.", arguments: "" },
      { type: "tool_call", id: "call_0_abc", name: "get_weather", text: "", arguments: '{"city":"Paris"}' },
    ]);
    expect(events.at(-1)).toEqual({
      type: "finish",
      stop: "tool_use",
      usage: { input: 120, cacheRead: 64, cacheWrite: 0, output: 85, reasoning: 30 },
    });
    expect(d.feed(undefined, "[DONE]")).toEqual([]);
  });

  test("parallel calls: a new index closes the open call; calls that all say index 0 but have their own ids stay apart", () => {
    const call = (index: number, id: string | undefined, name: string | undefined, args: string) =>
      chunk({
        tool_calls: [
          { index, ...(id && { id, type: "function" }), function: { ...(name && { name }), arguments: args } },
        ],
      });
    const byIndex = decode(
      sse(
        chunk({ role: "assistant" }),
        call(0, "call_a", "read", '{"p":'),
        call(0, undefined, undefined, '"a"}'),
        call(1, "call_b", "read", '{"p":"b"}'),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    const sameIndex = decode(
      sse(
        chunk({ role: "assistant" }),
        call(0, "call_a", "read", '{"p":"a"}'),
        call(0, "call_b", "read", '{"p":"b"}'),
        chunk({}, "stop"),
        "[DONE]",
      ),
    );
    for (const events of [byIndex, sameIndex]) {
      expect(assemble(events).map((p) => [p.id, p.arguments])).toEqual([
        ["call_a", '{"p":"a"}'],
        ["call_b", '{"p":"b"}'],
      ]);
      // Gemini says "stop" on an answer that called tools: the client must still be told to run them.
      expect((terminal(events)[0] as any).stop).toBe("tool_use");
    }
  });

  test("a call the upstream gave no id gets one, and the same id in part_start is the one the client answers to", () => {
    const events = decode(
      sse(
        chunk({ tool_calls: [{ index: 0, function: { name: "ls", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    const start = events.find((e) => e.type === "part_start") as any;
    expect(start.part.id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  test("finish_reason then the end of the stream (no usage chunk, no [DONE]) still finishes, with usage unknown", () => {
    const events = decode(sse(chunk({ content: "x" }), chunk({}, "length")));
    expect(terminal(events)).toEqual([{ type: "finish", stop: "max_tokens", usage: null }]);
  });

  test("a stream that ends (or says [DONE]) before any finish_reason has no terminal event: the seam reports it", () => {
    expect(terminal(decode(sse(chunk({ content: "x" }))))).toEqual([]);
    expect(terminal(decode(sse(chunk({ content: "x" }), "[DONE]")))).toEqual([]);
  });

  test("an event that is not JSON is an IR error, not an exception", () => {
    const events = decode(sse(chunk({ content: "x" }), "{not json"));
    expect(events.at(-1)).toMatchObject({ type: "error", status: 502, code: "upstream_bad_response" });
  });

  test("a rate-limit error chunk keeps its status; a numeric code is taken as the status", () => {
    expect(
      decode(sse({ error: { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded" } })),
    ).toEqual([{ type: "error", status: 429, code: "rate_limit_exceeded", message: "slow down" }]);
    expect(decode(sse({ error: { message: "overloaded", code: 503, status: "UNAVAILABLE" } }))[0]).toMatchObject({
      status: 503,
    });
  });

  test("usage: reasoning left out of completion_tokens (xAI) or stated only in total_tokens (Gemini) is output all the same", () => {
    const xai = decode(
      sse(
        chunk({}, "stop"),
        chunk(null, null, {
          prompt_tokens: 10,
          completion_tokens: 5,
          total_tokens: 45,
          completion_tokens_details: { reasoning_tokens: 30 },
        }),
      ),
    );
    expect((terminal(xai)[0] as any).usage).toEqual({
      input: 10,
      cacheRead: 0,
      cacheWrite: 0,
      output: 35,
      reasoning: 30,
    });
    const gemini = decode(
      sse(chunk({}, "stop"), chunk(null, null, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 40 })),
    );
    expect((terminal(gemini)[0] as any).usage).toEqual({
      input: 10,
      cacheRead: 0,
      cacheWrite: 0,
      output: 30,
      reasoning: 25,
    });
  });
});

test("a streamed Gemini call's thought signature is a reasoning part (opaque, no text) opened and closed just before the call", () => {
  const gemini: TranslateTarget = { provider: "gemini", dialect: { thoughtSignatures: true } };
  const call = {
    index: 0,
    id: "c1",
    type: "function",
    function: { name: "read", arguments: '{"path":"a"}' },
    extra_content: { google: { thought_signature: "SIG1" } },
  };
  const events = decode(sse(chunk({ role: "assistant", tool_calls: [call] }), chunk({}, "stop"), "[DONE]"), gemini);
  expect(events.slice(1, 7)).toEqual([
    { type: "part_start", index: 0, part: { type: "reasoning", origin: "gemini" } },
    { type: "delta", index: 0, opaque: "SIG1" },
    { type: "part_end", index: 0 },
    { type: "part_start", index: 1, part: { type: "tool_call", id: "c1", name: "read" } },
    { type: "delta", index: 1, arguments: '{"path":"a"}' },
    { type: "part_end", index: 1 },
  ]);
  expect(events.at(-1)).toMatchObject({ type: "finish", stop: "tool_use" });
});

test("a leading chunk with no choices (Azure's prompt_filter_results, empty id) does not start the answer", () => {
  const filter = {
    id: "",
    object: "",
    created: 0,
    model: "",
    choices: [],
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }],
  };
  const events = decode(sse(filter, chunk({ role: "assistant", content: "ok" }), chunk({}, "stop"), "[DONE]"));
  expect(events[0]).toEqual({ type: "start", id: "chatcmpl-t1", model: "m-1", usage: null });
  expect(events.filter((e) => e.type === "start").length).toBe(1);
});
