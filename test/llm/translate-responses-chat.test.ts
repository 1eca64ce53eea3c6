// Responses ⇄ Chat translation (DeepSeek on /v1/responses): request mapping, answer mapping, stream events.
// The openai SDK's own parsing of the translated output is in translate-sdk.test.ts.
import { describe, expect, test } from "bun:test";
import { chat, responses } from "../../src/llm/protocols/index.ts";
import {
  chatResponseToResponses,
  createChatToResponsesStream,
  createTranslateContext,
  responsesRequestToChat,
  TranslationError,
} from "../../src/llm/translate/responses-chat.ts";
import { concatBytes, randomPieces, rng } from "../fakes/chunking.ts";
import { fixtureBytes, fixtureJson } from "../fakes/fixtures.ts";

const ctxFor = (req: any) => createTranslateContext(req, { id: "resp_test0001", createdAt: 1767225700 });

describe("responsesRequestToChat", () => {
  test("string input, instructions, limits, stream", () => {
    const out = responsesRequestToChat({ model: "deepseek-chat", instructions: "Be brief.", input: "hi", max_output_tokens: 256, temperature: 0.2, top_p: 0.9, stream: true });
    expect(out).toEqual({
      model: "deepseek-chat",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }],
      max_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test("item input: messages, reasoning, function calls and their outputs, tools, tool_choice", () => {
    const out = responsesRequestToChat({
      model: "deepseek-reasoner",
      input: [
        { role: "developer", content: "Use tools." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Weather in " }, { type: "input_text", text: "Paris?" }] },
        { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "Need the tool." }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"location":"Paris"}' },
        { type: "function_call", call_id: "call_2", name: "get_time", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "18C" },
        { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "noon" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "18C at noon." }] },
        { role: "user", content: "Thanks" },
      ],
      tools: [
        { type: "function", name: "get_weather", description: "Weather", parameters: { type: "object", properties: { location: { type: "string" } } }, strict: true },
        { type: "web_search" },
      ],
      tool_choice: { type: "function", name: "get_weather" },
    });
    expect(out.messages).toEqual([
      { role: "system", content: "Use tools." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Need the tool.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } },
          { id: "call_2", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "tool", tool_call_id: "call_2", content: "noon" },
      { role: "assistant", content: "18C at noon." },
      { role: "user", content: "Thanks" },
    ]);
    expect(out.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }]);
    expect(out.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(out.stream).toBeUndefined();
  });

  test("reasoning items with content or summary that are not lists are read as empty, not a crash", () => {
    const out = responsesRequestToChat({ model: "m", input: [{ type: "reasoning", content: 5, summary: {} }, { role: "assistant", content: "hi" }] });
    expect(out.messages).toEqual([{ role: "assistant", content: "hi" }]);
  });

  test("refuses what a stateless translation cannot honour", () => {
    expect(() => responsesRequestToChat({ model: "m", input: "x", previous_response_id: "resp_1" })).toThrow(TranslationError);
    expect(() => responsesRequestToChat({ model: "m", input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] })).toThrow(TranslationError);
  });
});

describe("chatResponseToResponses", () => {
  test("text answer with cached tokens (recorded chat answer)", () => {
    const r: any = chatResponseToResponses(fixtureJson("B_nonstream.json"), ctxFor({ model: "deepseek-chat", input: "hi" }));
    expect(r).toMatchObject({ id: "resp_test0001", object: "response", status: "completed", model: "deepseek-chat" });
    expect(r.output).toEqual([{ id: "msg_test0001000", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], logprobs: [], text: "Hello! How can I help you today?" }] }]);
    expect(r.usage).toEqual({ input_tokens: 1543, input_tokens_details: { cached_tokens: 1408 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1553 });
    // metered the same whichever side reads it
    expect(responses.usageFromBody(r)).toEqual(chat.usageFromBody(fixtureJson("B_nonstream.json")));
  });

  test("reasoning, tool calls, length → incomplete, DeepSeek cache fields", () => {
    const r: any = chatResponseToResponses(
      {
        choices: [{ index: 0, finish_reason: "length", message: { role: "assistant", reasoning_content: "Think.", content: "Partial", tool_calls: [{ id: "call_9", type: "function", function: { name: "f", arguments: "{}" } }] } }],
        usage: { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36, completion_tokens_details: { reasoning_tokens: 12 } },
      },
      ctxFor({ model: "deepseek-reasoner", input: "x" }),
    );
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output.map((o: any) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(r.output[0].content).toEqual([{ type: "reasoning_text", text: "Think." }]);
    expect(r.output[2]).toMatchObject({ call_id: "call_9", name: "f", arguments: "{}" });
    expect(r.usage).toEqual({ input_tokens: 100, input_tokens_details: { cached_tokens: 64 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 140 });
    expect(responses.usageFromBody(r)).toEqual({ input: 36, cacheRead: 64, cacheWrite: 0, output: 40 });
  });
});

/** Run the translation over chat SSE bytes cut into random pieces; returns the Responses SSE text. */
async function translate(chatSse: Uint8Array, seed = 3): Promise<string> {
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of randomPieces(chatSse, rng(seed), 40)) c.enqueue(p);
      c.close();
    },
  });
  const out = source.pipeThrough(createChatToResponsesStream(ctxFor({ model: "deepseek-chat", input: "x" })));
  const parts: Uint8Array[] = [];
  for await (const p of out as any as AsyncIterable<Uint8Array>) parts.push(p);
  return new TextDecoder().decode(concatBytes(parts));
}

/** Each event is exactly `event: <type>` + `data: {...}` whose type matches. */
function events(sse: string): { event: string; data: any }[] {
  return sse
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const [e, d, ...rest] = block.split("\n");
      expect(rest).toEqual([]);
      expect(e!.startsWith("event: ") && d!.startsWith("data: ")).toBe(true);
      const data = JSON.parse(d!.slice(6));
      expect(data.type).toBe(e!.slice(7));
      return { event: e!.slice(7), data };
    });
}

describe("createChatToResponsesStream", () => {
  test("the recorded chat stream becomes the Responses event sequence, numbered from 0", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const evs = events(await translate(fixtureBytes("B_stream.sse"), seed));
      expect(evs.map((e) => e.event)).toEqual([
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
      ]);
      expect(evs.map((e) => e.data.sequence_number)).toEqual(evs.map((_, i) => i));
      const done = evs.at(-1)!.data.response;
      expect(done.output[0].content[0].text).toBe("Hello! How can I help?");
      expect(responses.usageFromBody(done)).toEqual({ input: 19, cacheRead: 0, cacheWrite: 0, output: 7 });
    }
  });

  test("tool-call stream: function_call item with argument deltas", async () => {
    const evs = events(await translate(fixtureBytes("B_stream_tool.sse")));
    expect(evs.map((e) => e.event).slice(2)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(evs.at(-1)!.data.response.output).toEqual([
      { id: "fc_test0001000", type: "function_call", status: "completed", arguments: '{"location":"Paris, France"}', call_id: "call_Qm3vK8sTn2Wd5Lp9Xr4Hb7Jy", name: "get_weather" },
    ]);
  });

  test("an error chunk or an unfinished stream ends in response.failed", async () => {
    const failed = events(await translate(fixtureBytes("B_stream_midstream_error.sse"))).at(-1)!;
    expect(failed.event).toBe("response.failed");
    expect(failed.data.response.error).toEqual({ code: "server_error", message: "The server had an error while processing your request. Sorry about that!" });
    const cut = events(await translate(fixtureBytes("B_stream.sse").subarray(0, 900))).at(-1)!;
    expect(cut.event).toBe("response.failed");
    expect(cut.data.response.error.code).toBe("upstream_incomplete");
  });
});
