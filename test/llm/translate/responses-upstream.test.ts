// The Responses codec's upstream side: IR → a Responses request for GPT/Codex/Grok, and their answers (JSON and the
// recorded SSE fixtures, fed event by event) → IR.
import { describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import type { IrEvent, IrRequest, TranslateTarget } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { fixtureJson, fixtureText, type FixtureName } from "../../fakes/fixtures";

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
  test("system → instructions, history → items with stable call ids, tools non-strict, store false", () => {
    const body = up.encodeRequest(
      ir({
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
      }),
      openai,
    );
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
