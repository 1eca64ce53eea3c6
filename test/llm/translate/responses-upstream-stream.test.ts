// The Responses codec's upstream side, streamed answers: the recorded SSE fixtures and reasoning items, fed event by
// event as the seam does, → IR events. Requests and JSON answers are in responses-upstream.test.ts.
import { describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import type { IrEvent, TranslateTarget } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { fixtureText } from "../../fakes/fixtures";

const openai: TranslateTarget = { provider: "openai", dialect: {} };
const up = responsesCodec.upstream;

/** Feeds an SSE text to the decoder one parsed event at a time, as the seam does. */
function decodeSse(sse: string, target = openai): IrEvent[] {
  const dec = up.streamDecoder(target);
  const events: IrEvent[] = [];
  const parser = createParser({ onEvent: (e) => events.push(...dec.feed(e.event, e.data)) });
  parser.feed(sse);
  events.push(...dec.end());
  return events;
}

const sse = (events: object[]) => events.map((e: any) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");

describe("streamDecoder on the recorded fixtures", () => {
  test("C_stream.sse: start, one text part in three deltas, finish with the usage (cached tokens inside input)", () => {
    const events = decodeSse(fixtureText("C_stream.sse"));
    expect(events).toEqual([
      {
        type: "start",
        id: "resp_0a3f9c2e7b1d4c5f0069a1b2c3d481909f1e2d3c4b5a6978",
        model: "gpt-4.1-2025-04-14",
        usage: null,
      },
      { type: "part_start", index: 0, part: { type: "text" } },
      { type: "delta", index: 0, text: "Hi there!" },
      { type: "delta", index: 0, text: " How can I" },
      { type: "delta", index: 0, text: " help?" },
      { type: "part_end", index: 0 },
      {
        type: "finish",
        stop: "end_turn",
        usage: { input: 1320, cacheRead: 1152, cacheWrite: 0, output: 8, reasoning: 0 },
      },
    ]);
  });

  test("C_stream_tool.sse: a tool call with its call_id and streamed arguments, stop tool_use", () => {
    const events = decodeSse(fixtureText("C_stream_tool.sse"));
    expect(events.slice(1)).toEqual([
      {
        type: "part_start",
        index: 0,
        part: { type: "tool_call", id: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy", name: "get_weather" },
      },
      { type: "delta", index: 0, arguments: '{"location":' },
      { type: "delta", index: 0, arguments: '"Paris, France"}' },
      { type: "part_end", index: 0 },
      {
        type: "finish",
        stop: "tool_use",
        usage: { input: 310, cacheRead: 0, cacheWrite: 0, output: 19, reasoning: 0 },
      },
    ]);
  });

  test("C_stream_search.sse: hosted web_search_call items are skipped, the text part still arrives whole", () => {
    const events = decodeSse(fixtureText("C_stream_search.sse"));
    expect(events.filter((e) => e.type === "part_start").map((e: any) => e.part.type)).toEqual(["text"]);
    expect(events.at(-1)).toMatchObject({ type: "finish", stop: "end_turn" });
    const text = events.map((e: any) => e.text ?? "").join("");
    expect(text.length).toBeGreaterThan(0);
  });

  test("C_stream_error.sse: an `error` event becomes an IR error with its code and the status it stands for", () => {
    const events = decodeSse(fixtureText("C_stream_error.sse"));
    expect(events.at(-1)).toEqual({
      type: "error",
      status: 429,
      code: "rate_limit_exceeded",
      message: "Rate limit reached for gpt-4.1 on tokens per min (TPM). Please try again in 1.2s.",
    });
  });

  test("C_stream_failed.sse: response.failed becomes an IR error", () => {
    const events = decodeSse(fixtureText("C_stream_failed.sse"));
    expect(events.map((e) => e.type)).toEqual(["start", "error"]);
    expect(events[1]).toEqual({
      type: "error",
      status: 500,
      code: "server_error",
      message: "The model failed to generate a response.",
    });
  });

  test("a stream cut before its terminal event ends without one (the seam reports the early end)", () => {
    const whole = fixtureText("C_stream.sse");
    const events = decodeSse(whole.slice(0, whole.indexOf("event: response.output_text.done")));
    expect(events.some((e) => e.type === "finish" || e.type === "error")).toBe(false);
  });

  test("an unreadable event becomes an IR error, not a throw", () => {
    const events = decodeSse("event: response.created\ndata: {not json\n\n");
    expect(events).toEqual([
      {
        type: "error",
        status: 500,
        code: "upstream_protocol_error",
        message: "The upstream sent an event that could not be read.",
      },
    ]);
  });
});

describe("streamDecoder: reasoning", () => {
  const item = { id: "rs_1", type: "reasoning", summary: [] };
  const done = {
    ...item,
    summary: [
      { type: "summary_text", text: "First." },
      { type: "summary_text", text: "Second." },
    ],
    encrypted_content: "gAAAA-enc",
  };
  const stream = sse([
    { type: "response.created", response: { id: "resp_r", model: "gpt-5.2", status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item },
    {
      type: "response.reasoning_summary_part.added",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 0,
      part: { type: "summary_text", text: "" },
    },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 0,
      delta: "First.",
    },
    {
      type: "response.reasoning_summary_part.added",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 1,
      part: { type: "summary_text", text: "" },
    },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 1,
      delta: "Second.",
    },
    { type: "response.output_item.done", output_index: 0, item: done },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { id: "msg_1", type: "message", role: "assistant", status: "in_progress", content: [] },
    },
    {
      type: "response.content_part.added",
      item_id: "msg_1",
      output_index: 1,
      content_index: 0,
      part: { type: "output_text", text: "" },
    },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "4" },
    {
      type: "response.content_part.done",
      item_id: "msg_1",
      output_index: 1,
      content_index: 0,
      part: { type: "output_text", text: "4" },
    },
    {
      type: "response.output_item.done",
      output_index: 1,
      item: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "4" }],
      },
    },
    {
      type: "response.incomplete",
      response: {
        id: "resp_r",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        usage: {
          input_tokens: 20,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 50,
          output_tokens_details: { reasoning_tokens: 40 },
        },
      },
    },
  ]);

  test("summary parts join into one reasoning part of this provider; encrypted_content is its opaque value", () => {
    const events = decodeSse(stream, { provider: "xai", dialect: {} });
    expect(events.slice(1, 7)).toEqual([
      { type: "part_start", index: 0, part: { type: "reasoning", origin: "xai", id: "rs_1" } },
      { type: "delta", index: 0, reasoning: "First." },
      { type: "delta", index: 0, reasoning: "\n\n" },
      { type: "delta", index: 0, reasoning: "Second." },
      { type: "delta", index: 0, opaque: "gAAAA-enc" },
      { type: "part_end", index: 0 },
    ]);
    expect(events.at(-1)).toEqual({
      type: "finish",
      stop: "max_tokens",
      usage: { input: 20, cacheRead: 0, cacheWrite: 0, output: 50, reasoning: 40 },
    });
  });

  test("a reasoning item with nothing to show (no summary asked, no encrypted content) makes no part at all", () => {
    const events = decodeSse(
      sse([
        { type: "response.created", response: { id: "resp_e", model: "gpt-5.2" } },
        { type: "response.output_item.added", output_index: 0, item },
        { type: "response.output_item.done", output_index: 0, item },
        {
          type: "response.output_item.added",
          output_index: 1,
          item: { id: "msg_2", type: "message", role: "assistant", content: [] },
        },
        {
          type: "response.content_part.added",
          item_id: "msg_2",
          output_index: 1,
          content_index: 0,
          part: { type: "output_text", text: "" },
        },
        {
          type: "response.content_part.done",
          item_id: "msg_2",
          output_index: 1,
          content_index: 0,
          part: { type: "output_text", text: "Whole." },
        },
        { type: "response.completed", response: { status: "completed", usage: null } },
      ]),
    );
    expect(events.slice(1)).toEqual([
      { type: "part_start", index: 0, part: { type: "text" } },
      { type: "delta", index: 0, text: "Whole." },
      { type: "part_end", index: 0 },
      { type: "finish", stop: "end_turn", usage: null },
    ]);
  });

  test("outputExcludesReasoning: reasoning tokens are added to output", () => {
    const events = decodeSse(stream, { provider: "xai", dialect: { outputExcludesReasoning: true } });
    expect(events.at(-1)).toMatchObject({ usage: { output: 90, reasoning: 40 } });
  });
});
