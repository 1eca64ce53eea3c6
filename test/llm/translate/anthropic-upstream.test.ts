// The upstream side of the Anthropic codec: an IR request written as a Messages body for Claude, and Claude's
// answers (the recorded A_* fixtures) read back into IR, JSON and stream.
import { describe, expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";
import { TranslationError, type IrEvent } from "../../../src/llm/translate/ir";
import { fixtureJson, fixtureText, type FixtureName } from "../../fakes/fixtures";
import { sseEvents } from "../../support/codecs";

const { upstream } = anthropicCodec;
const target = { provider: "anthropic", dialect: {} };

function decodeStream(name: FixtureName): IrEvent[] {
  const d = upstream.streamDecoder(target);
  const out: IrEvent[] = [];
  for (const e of sseEvents(fixtureText(name))) out.push(...d.feed(e.event, e.data));
  out.push(...d.end());
  return out;
}

describe("Anthropic stream → IR", () => {
  test("a text stream: start with the input counts, text deltas, finish with message_delta's totals", () => {
    const ev = decodeStream("A_stream_text.sse");
    expect(ev[0]).toEqual({
      type: "start",
      id: "msg_01Xa8QmcR5hUkPZ3vb2Wq9Kd",
      model: "claude-sonnet-4-5-20250929",
      usage: { input: 21 + 1450, cacheRead: 0, cacheWrite: 1450, output: 1, reasoning: 0 },
    });
    expect(ev.slice(1)).toEqual([
      { type: "part_start", index: 0, part: { type: "text" } },
      { type: "delta", index: 0, text: "Hello" },
      { type: "delta", index: 0, text: "! How can I help you today?" },
      { type: "part_end", index: 0 },
      {
        type: "finish",
        stop: "end_turn",
        stopSequence: null,
        usage: { input: 1471, cacheRead: 0, cacheWrite: 1450, output: 12, reasoning: 0 },
      },
    ]);
  });

  test("a tool stream: the tool call with its id, name and argument pieces; stop tool_use", () => {
    const ev = decodeStream("A_stream_tool.sse");
    const tool = ev.filter((e) => "index" in e && e.index === 1);
    expect(tool).toEqual([
      {
        type: "part_start",
        index: 1,
        part: { type: "tool_call", id: "toolu_01VtzEc4Rbq3qX4wKqf1Cq8m", name: "get_weather" },
      },
      { type: "delta", index: 1, arguments: '{"location": "San Fra' },
      { type: "delta", index: 1, arguments: 'ncisco, CA", "unit": "fahrenheit"}' },
      { type: "part_end", index: 1 },
    ]);
    expect(ev.at(-1)).toEqual({
      type: "finish",
      stop: "tool_use",
      stopSequence: null,
      usage: { input: 472, cacheRead: 0, cacheWrite: 0, output: 89, reasoning: 0 },
    });
  });

  test("a mid-stream error ends in an IR error event with Anthropic's status for its type", () => {
    const ev = decodeStream("A_stream_error.sse");
    expect(ev.at(-1)).toEqual({ type: "error", status: 529, code: "overloaded_error", message: "Overloaded" });
    expect(ev.some((e) => e.type === "finish")).toBe(false);
  });

  test("server tool blocks are skipped and the kept parts are numbered from 0", () => {
    const ev = decodeStream("A_stream_search.sse");
    const starts = ev.filter((e) => e.type === "part_start");
    expect(starts.length).toBeGreaterThan(0);
    expect(starts.map((e) => (e as any).index)).toEqual(starts.map((_, i) => i));
    expect(starts.every((e) => (e as any).part.type === "text")).toBe(true);
    expect(ev.at(-1)!.type).toBe("finish");
  });

  test("a stream cut before message_stop has no terminal event", () => {
    const text = fixtureText("A_stream_text.sse");
    const d = upstream.streamDecoder(target);
    const ev: IrEvent[] = [];
    for (const e of sseEvents(text.slice(0, text.indexOf("event: message_delta")))) ev.push(...d.feed(e.event, e.data));
    ev.push(...d.end());
    expect(ev.some((e) => e.type === "finish" || e.type === "error")).toBe(false);
  });
});

describe("Anthropic JSON answer → IR", () => {
  test("text and tool_use become parts; input becomes the arguments text; usage counts cache reads in input", () => {
    const a = upstream.decodeAnswer(fixtureJson("A_nonstream.json"), target);
    expect(a.parts).toEqual([
      { type: "text", text: "I'll check the current weather in Paris for you." },
      {
        type: "tool_call",
        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name: "get_weather",
        arguments: '{"location":"Paris, France","unit":"celsius"}',
      },
    ]);
    expect(a.stop).toBe("tool_use");
    expect(a.usage).toEqual({ input: 38 + 2113, cacheRead: 2113, cacheWrite: 0, output: 74, reasoning: 0 });
  });
});

// A Claude answer with extended thinking, in the shapes of the A_* fixtures: a thinking block whose signature
// arrives as a signature_delta, a redacted_thinking block, then text; thinking tokens stated in message_delta.
const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const THINKING_STREAM =
  ev("message_start", {
    message: {
      id: "msg_01Think",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 1 },
    },
  }) +
  ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
  ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "Let me think" } }) +
  ev("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: " about it." } }) +
  ev("content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "EqQBCkYIARgCIkBsig" } }) +
  ev("content_block_stop", { index: 0 }) +
  ev("content_block_start", { index: 1, content_block: { type: "redacted_thinking", data: "EmwKAhgBEgyred" } }) +
  ev("content_block_stop", { index: 1 }) +
  ev("ping", {}) +
  ev("content_block_start", { index: 2, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { index: 2, delta: { type: "text_delta", text: "42" } }) +
  ev("content_block_stop", { index: 2 }) +
  ev("message_delta", {
    delta: { stop_reason: "max_tokens", stop_sequence: null },
    usage: { output_tokens: 300, output_tokens_details: { thinking_tokens: 250 } },
  }) +
  ev("message_stop", {});

describe("Claude's thinking read into IR", () => {
  test("stream: reasoning parts of origin anthropic carrying the signature and the redacted data; usage totals", () => {
    const d = upstream.streamDecoder(target);
    const out = sseEvents(THINKING_STREAM).flatMap((e) => d.feed(e.event, e.data));
    expect(out.slice(1)).toEqual([
      { type: "part_start", index: 0, part: { type: "reasoning", origin: "anthropic" } },
      { type: "delta", index: 0, reasoning: "Let me think" },
      { type: "delta", index: 0, reasoning: " about it." },
      { type: "delta", index: 0, opaque: "EqQBCkYIARgCIkBsig" },
      { type: "part_end", index: 0 },
      {
        type: "part_start",
        index: 1,
        part: { type: "reasoning", origin: "anthropic", redacted: true, opaque: "EmwKAhgBEgyred" },
      },
      { type: "part_end", index: 1 },
      { type: "part_start", index: 2, part: { type: "text" } },
      { type: "delta", index: 2, text: "42" },
      { type: "part_end", index: 2 },
      // input counts kept from message_start (message_delta did not restate them); output and thinking replaced
      {
        type: "finish",
        stop: "max_tokens",
        stopSequence: null,
        usage: { input: 140, cacheRead: 100, cacheWrite: 0, output: 300, reasoning: 250 },
      },
    ]);
  });

  test("the origin is the provider the call went to", () => {
    const d = upstream.streamDecoder({ provider: "anthropic-eu", dialect: {} });
    const out = sseEvents(THINKING_STREAM).flatMap((e) => d.feed(e.event, e.data));
    expect(out.find((e) => e.type === "part_start")).toMatchObject({ part: { origin: "anthropic-eu" } });
  });

  test("JSON: thinking and redacted thinking become reasoning parts; a context-window stop is max_tokens", () => {
    const a = upstream.decodeAnswer(
      {
        id: "msg_1",
        type: "message",
        model: "claude-opus-4-5-20251101",
        content: [
          { type: "thinking", thinking: "Hmm.", signature: "EqQBsig" },
          { type: "redacted_thinking", data: "EmwKred" },
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
          { type: "text", text: "Done." },
        ],
        stop_reason: "model_context_window_exceeded",
        stop_sequence: null,
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 5,
          cache_read_input_tokens: 0,
          output_tokens: 30,
          output_tokens_details: { thinking_tokens: 20 },
        },
      },
      target,
    );
    expect(a.parts).toEqual([
      { type: "reasoning", text: "Hmm.", origin: "anthropic", opaque: "EqQBsig" },
      { type: "reasoning", text: "", origin: "anthropic", redacted: true, opaque: "EmwKred" },
      { type: "text", text: "Done." },
    ]);
    expect(a.stop).toBe("max_tokens");
    expect(a.usage).toEqual({ input: 15, cacheRead: 0, cacheWrite: 5, output: 30, reasoning: 20 });
  });

  test("a stop sequence is reported with the sequence", () => {
    const a = upstream.decodeAnswer(
      {
        id: "m",
        model: "c",
        content: [{ type: "text", text: "a" }],
        stop_reason: "stop_sequence",
        stop_sequence: "###",
        usage: null,
      },
      target,
    );
    expect(a).toMatchObject({ stop: "stop_sequence", stopSequence: "###", usage: null });
  });

  test("an event that is not JSON ends the stream with an error event, not an exception", () => {
    const d = upstream.streamDecoder(target);
    expect(d.feed("content_block_delta", "{not json")).toEqual([
      {
        type: "error",
        status: 502,
        code: "upstream_protocol_error",
        message: "the upstream sent an event that could not be read",
      },
    ]);
    expect(d.feed("message_stop", "{}")).toEqual([]);
  });

  // An upstream fault, not the client's: no TranslationError (that is the client's 400).
  test("an answer that is not a Messages answer throws, and not as a TranslationError", () => {
    let thrown: unknown;
    try {
      upstream.decodeAnswer({ type: "error", error: { type: "api_error" } }, target);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).not.toBeInstanceOf(TranslationError);
  });
});
