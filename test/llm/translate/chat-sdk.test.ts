// The chat client side's answers as the openai SDK reads them, with no server: the SDK's fetch hands its request
// body to decodeRequest and answers with what encodeAnswer / streamEncoder write for a scripted IR answer.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { chatCodec } from "../../../src/llm/translate/chat";
import { sealOpaque, type IrEvent, type IrUsage } from "../../../src/llm/translate/ir";
import { codecFetch, reasoningPart, startEvent, textPart, toolCallPart } from "../../support/codecs";

const USAGE: IrUsage = { input: 20, cacheRead: 8, cacheWrite: 0, output: 12, reasoning: 4 };

const TEXT: IrEvent[] = [
  startEvent("msg_01", "claude-x", null),
  ...textPart(0, "Hello", " world"),
  { type: "finish", stop: "end_turn", usage: USAGE },
];

const TOOLS: IrEvent[] = [
  startEvent("msg_02", "claude-x", null),
  ...textPart(0, "Reading both."),
  ...toolCallPart(1, "toolu_01", "read", '{"pa', 'th":"a"}'),
  ...toolCallPart(2, "toolu_02", "read", '{"path":"b"}'),
  { type: "finish", stop: "tool_use", usage: USAGE },
];

const THINKING: IrEvent[] = [
  startEvent("msg_03", "claude-x", null),
  ...reasoningPart(0, "anthropic", ["Two plus ", "two."], "SIG"),
  ...textPart(1, "4"),
  { type: "finish", stop: "end_turn", usage: USAGE },
];

const FAILING: IrEvent[] = [
  startEvent("msg_04", "claude-x", null),
  ...textPart(0, "partial").slice(0, -1), // no part_end: the error cuts the text
  { type: "error", status: 529, code: "overloaded_error", message: "Overloaded" },
];

/** An openai client whose "gateway" is the chat client codec answering with `events`; `calls` keeps what it decoded. */
function client(events: IrEvent[]) {
  const { fetch, calls } = codecFetch(chatCodec.client, { events });
  return { sdk: new OpenAI({ apiKey: "sk-test", baseURL: "http://gateway.test/v1", fetch, maxRetries: 0 }), calls };
}

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "read",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

describe("openai SDK reads the chat client encoders' output", () => {
  test("non-streaming: content, finish_reason and usage in chat's fields (prompt incl. cached, completion incl. reasoning)", async () => {
    const { sdk } = client(TEXT);
    const r = await sdk.chat.completions.create({ model: "claude-x", messages: [{ role: "user", content: "hi" }] });
    expect(r.object).toBe("chat.completion");
    expect(r.id).toBe("chatcmpl-msg_01");
    expect(r.choices[0]!.message.content).toBe("Hello world");
    expect(r.choices[0]!.finish_reason).toBe("stop");
    expect(r.usage).toEqual({
      prompt_tokens: 20,
      completion_tokens: 12,
      total_tokens: 32,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 4 },
    });
  });

  test("non-streaming tool round trip: the calls come back with their ids, and the next turn's tool results answer to them", async () => {
    const { sdk, calls } = client(TOOLS);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "read a and b" }];
    const r = await sdk.chat.completions.create({ model: "claude-x", messages, tools, tool_choice: "auto" });
    const msg = r.choices[0]!.message;
    expect(r.choices[0]!.finish_reason).toBe("tool_calls");
    expect(msg.content).toBe("Reading both.");
    expect(msg.tool_calls).toEqual([
      { id: "toolu_01", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
      { id: "toolu_02", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
    ]);
    messages.push(
      msg,
      ...msg.tool_calls!.map((c) => ({
        role: "tool" as const,
        tool_call_id: c.id,
        content: `contents of ${JSON.parse((c as any).function.arguments).path}`,
      })),
    );
    await sdk.chat.completions.create({ model: "claude-x", messages, tools });
    expect(calls.at(-1)!.ir.messages.at(-1)!.parts).toEqual([
      { type: "tool_result", callId: "toolu_01", content: "contents of a" },
      { type: "tool_result", callId: "toolu_02", content: "contents of b" },
    ]);
    expect(
      calls
        .at(-1)!
        .ir.messages[1]!.parts.filter((p) => p.type === "tool_call")
        .map((p: any) => p.id),
    ).toEqual(["toolu_01", "toolu_02"]);
  });

  test("streaming without include_usage: role, text deltas, finish_reason on the last choice chunk, no usage anywhere, [DONE]", async () => {
    const { sdk, calls } = client(TEXT);
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of await sdk.chat.completions.create({
      model: "claude-x",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    }))
      chunks.push(c);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello world");
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
    expect(
      chunks.every(
        (c) =>
          c.object === "chat.completion.chunk" &&
          c.id === "chatcmpl-msg_01" &&
          c.choices.length === 1 &&
          !("usage" in c),
      ),
    ).toBe(true);
    expect(calls.at(-1)!.sse!.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("streaming with include_usage: every chunk says usage null, then one usage chunk with no choices", async () => {
    const { sdk } = client(TEXT);
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    const stream = await sdk.chat.completions.create({
      model: "claude-x",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 20,
      completion_tokens: 12,
      total_tokens: 32,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 4 },
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop");
  });

  test("streamed tool calls: the SDK's stream helper assembles both calls (index, id and name first, arguments in pieces)", async () => {
    const { sdk, calls } = client(TOOLS);
    const stream = sdk.chat.completions.stream({
      model: "claude-x",
      messages: [{ role: "user", content: "read a and b" }],
      tools,
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    const msg = final.choices[0]!.message;
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(msg.content).toBe("Reading both.");
    expect(msg.tool_calls!.map((c: any) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["toolu_01", "read", { path: "a" }],
      ["toolu_02", "read", { path: "b" }],
    ]);
    expect(final.usage?.completion_tokens).toBe(12);
    // The first delta of each call names it; later ones carry only arguments, never an empty arguments piece.
    const deltas = calls
      .at(-1)!
      .sse!.split("\n\n")
      .filter((l) => l.includes('"delta":{"tool_calls"'))
      .map((l) => JSON.parse(l.slice(6)).choices[0].delta.tool_calls[0]);
    expect(deltas).toEqual([
      { index: 0, id: "toolu_01", type: "function", function: { name: "read", arguments: "" } },
      { index: 0, function: { arguments: '{"pa' } },
      { index: 0, function: { arguments: 'th":"a"}' } },
      { index: 1, id: "toolu_02", type: "function", function: { name: "read", arguments: "" } },
      { index: 1, function: { arguments: '{"path":"b"}' } },
    ]);
  });

  test("a mid-stream error is a {error} chunk the SDK raises as an APIError, after the text it had", async () => {
    const { sdk, calls } = client(FAILING);
    let text = "";
    let error: unknown;
    try {
      for await (const c of await sdk.chat.completions.create({
        model: "claude-x",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }))
        text += c.choices[0]?.delta.content ?? "";
    } catch (e) {
      error = e;
    }
    expect(text).toBe("partial");
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain("Overloaded");
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("overloaded_error");
    expect(calls.at(-1)!.sse).not.toContain("[DONE]");
  });

  test("thinking streams as reasoning_content deltas, then one reasoning_details entry with the sealed signature", async () => {
    const { sdk } = client(THINKING);
    const deltas: any[] = [];
    for await (const c of await sdk.chat.completions.create({
      model: "claude-x",
      messages: [{ role: "user", content: "2+2" }],
      stream: true,
      reasoning_effort: "low",
    }))
      if (c.choices[0]) deltas.push(c.choices[0].delta);
    expect(deltas.map((d) => d.reasoning_content ?? "").join("")).toBe("Two plus two.");
    expect(deltas.flatMap((d) => d.reasoning_details ?? [])).toEqual([
      { type: "reasoning.text", text: "Two plus two.", signature: sealOpaque("anthropic", "SIG"), index: 0 },
    ]);
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("4");
  });

  test("non-streaming thinking: reasoning_content and reasoning_details on the message", async () => {
    const { sdk, calls } = client(THINKING);
    const r: any = await sdk.chat.completions.create({
      model: "claude-x",
      messages: [{ role: "user", content: "2+2" }],
      reasoning_effort: "low",
    });
    expect(calls.at(-1)!.ir.reasoning).toEqual({ effort: "low" });
    expect(r.choices[0].message.reasoning_content).toBe("Two plus two.");
    expect(r.choices[0].message.reasoning_details).toEqual([
      { type: "reasoning.text", text: "Two plus two.", signature: sealOpaque("anthropic", "SIG"), index: 0 },
    ]);
  });
});

describe("the stream encoder writes as it goes", () => {
  test("each text and argument delta is written the moment it arrives, not held to the end", () => {
    const enc = chatCodec.client.streamEncoder({ stream: true });
    for (const e of TOOLS) {
      const out = enc.write(e);
      if (e.type === "delta" || e.type === "start" || (e.type === "part_start" && e.part.type === "tool_call"))
        expect(out).toStartWith("data: {");
      if (e.type === "delta" && e.text) expect(JSON.parse(out.slice(6)).choices[0].delta.content).toBe(e.text);
    }
  });

  test("nothing is written after the terminal event", () => {
    const enc = chatCodec.client.streamEncoder({ stream: true });
    for (const e of FAILING) enc.write(e);
    expect(enc.write({ type: "finish", stop: "end_turn", usage: USAGE })).toBe("");
  });
});

test("a call with no arguments at all says {} (JSON), streamed and not", async () => {
  const events: IrEvent[] = [
    startEvent("msg_05", "claude-x", null),
    ...toolCallPart(0, "toolu_9", "list_files", ""),
    { type: "finish", stop: "tool_use", usage: USAGE },
  ];
  const { sdk } = client(events);
  const final = await sdk.chat.completions
    .stream({ model: "claude-x", messages: [{ role: "user", content: "ls" }], tools })
    .finalChatCompletion();
  expect((final.choices[0]!.message.tool_calls![0] as any).function.arguments).toBe("{}");
  const r = await sdk.chat.completions.create({
    model: "claude-x",
    messages: [{ role: "user", content: "ls" }],
    tools,
  });
  expect((r.choices[0]!.message.tool_calls![0] as any).function.arguments).toBe("{}");
});
