// The client side's output as the official Anthropic SDKs (1.x and 0.x) read it, with no server: each SDK gets a
// fetch that answers with what the codec wrote for hand-built IR answers and events.
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import Anthropic0 from "anthropic-sdk-0";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";
import type { IrAnswer, IrEvent } from "../../../src/llm/translate/ir";
import { codecFetch, reasoningPart, startEvent, textPart, toolCallPart, type SdkFetch } from "../../support/codecs";

const { client } = anthropicCodec;
const request = { model: "gpt-5.2", max_tokens: 1024, messages: [{ role: "user", content: "Weather in Paris?" }] };
const usage = { input: 120, cacheRead: 64, cacheWrite: 0, output: 85, reasoning: 30 };

// A GPT-style answer: reasoning with an encrypted value, text, then two tool calls; usage known only at the end.
const EVENTS: IrEvent[] = [
  startEvent("resp_abc", "gpt-5.2", null),
  ...reasoningPart(0, "openai", ["The user wants", " the weather."], "gAAAAenc"),
  ...textPart(1, "Let me ", "check."),
  ...toolCallPart(2, "call_0_abc", "get_weather", '{"city":', '"Paris"}'),
  ...toolCallPart(3, "call_1_def", "get_time"),
  { type: "finish", stop: "tool_use", usage },
];

/** The SDK's fetch: the client codec answers with `events` (a stream, or the answer they describe). */
const answering = (reply: Parameters<typeof codecFetch>[1]) => codecFetch(client, reply).fetch;

const ANSWER: IrAnswer = {
  id: "chatcmpl-1",
  model: "gpt-5.2",
  parts: [
    { type: "reasoning", text: "Thinking.", origin: "openai", opaque: "gAAAAenc" },
    { type: "text", text: "Let me check." },
    { type: "tool_call", id: "call_0_abc", name: "get_weather", arguments: '{"city":"Paris"}' },
    { type: "tool_call", id: "call_1_def", name: "broken", arguments: '{"city":' },
  ],
  stop: "tool_use",
  usage,
};

// The 0.x SDK types its fetch with node-fetch's Request and Response; it calls it as the web fetch all the same.
type Anthropic0Fetch = NonNullable<NonNullable<ConstructorParameters<typeof Anthropic0>[0]>["fetch"]>;

const sdks = [
  ["@anthropic-ai/sdk 1.x", (fetch: SdkFetch) => new Anthropic({ apiKey: "k", fetch, maxRetries: 0 })],
  [
    "anthropic-sdk-0",
    (fetch: SdkFetch) => new Anthropic0({ apiKey: "k", fetch: fetch as unknown as Anthropic0Fetch, maxRetries: 0 }),
  ],
] as const;

describe.each(sdks)("%s parses the translated answers", (_name, make) => {
  test("a stream: thinking with a sealed signature, text, tool calls with parsed input, usage from message_delta", async () => {
    const sdk = make(answering({ events: EVENTS })) as Anthropic;
    const stream = sdk.messages.stream(request as any);
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const m = await stream.finalMessage();
    expect(texts.join("")).toBe("Let me check.");
    expect(m.id).toBe("msg_resp_abc");
    expect(m.content).toEqual([
      { type: "thinking", thinking: "The user wants the weather.", signature: "sy1.openai.gAAAAenc" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "call_0_abc", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "call_1_def", name: "get_time", input: {} },
    ] as any);
    expect(m.stop_reason).toBe("tool_use");
    expect(m.usage.output_tokens).toBe(85);
  });

  test("a JSON answer: blocks, stop reason and usage with input excluding cache reads; bad arguments become {}", async () => {
    const sdk = make(answering({ answer: ANSWER })) as Anthropic;
    const m = await sdk.messages.create(request as any);
    expect(m.content).toEqual([
      { type: "thinking", thinking: "Thinking.", signature: "sy1.openai.gAAAAenc" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "call_0_abc", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: "call_1_def", name: "broken", input: {} },
    ] as any);
    expect(m.stop_reason).toBe("tool_use");
    expect(m.usage).toMatchObject({
      input_tokens: 56,
      cache_read_input_tokens: 64,
      cache_creation_input_tokens: 0,
      output_tokens: 85,
    });
  });

  test("a tool-use round trip: the SDK's message sent back as history keeps reasoning's origin and the call ids", async () => {
    const sdk = make(answering({ events: EVENTS })) as Anthropic;
    const m = await sdk.messages.stream(request as any).finalMessage();
    const next = client.decodeRequest({
      ...request,
      messages: [
        ...request.messages,
        { role: "assistant", content: m.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_0_abc", content: "18C" },
            { type: "tool_result", tool_use_id: "call_1_def", content: "noon" },
          ],
        },
      ],
    });
    expect(next.messages[1]!.parts).toEqual([
      { type: "reasoning", text: "The user wants the weather.", origin: "openai", opaque: "gAAAAenc" },
      { type: "text", text: "Let me check." },
      { type: "tool_call", id: "call_0_abc", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "tool_call", id: "call_1_def", name: "get_time", arguments: "{}" },
    ]);
    expect(next.messages[2]!.parts.map((p: any) => p.callId)).toEqual(["call_0_abc", "call_1_def"]);
  });

  test("a mid-stream error reaches the SDK as its own error", async () => {
    const events: IrEvent[] = [
      ...EVENTS.slice(0, 8),
      { type: "error", status: 529, code: "overloaded", message: "The model is overloaded" },
    ];
    const sdk = make(answering({ events })) as Anthropic;
    const err = await sdk.messages
      .stream(request as any)
      .finalMessage()
      .then(
        () => null,
        (e) => e,
      );
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toContain("overloaded");
  });
});

test("@anthropic-ai/sdk 1.x takes the input counts stated only at message_delta over message_start's zeros", async () => {
  const sdk = new Anthropic({ apiKey: "k", fetch: answering({ events: EVENTS }), maxRetries: 0 });
  const m = await sdk.messages.stream(request as any).finalMessage();
  expect(m.usage).toMatchObject({ input_tokens: 56, cache_read_input_tokens: 64, output_tokens: 85 });
});

test("an end without usage restates message_start's counts instead of zeroing them", async () => {
  const known = { input: 500, cacheRead: 100, cacheWrite: 0, output: 1, reasoning: 0 };
  const events: IrEvent[] = [
    startEvent("r", "m", known),
    ...textPart(0, "ok"),
    { type: "finish", stop: "end_turn", usage: null },
  ];
  const sdk = new Anthropic({ apiKey: "k", fetch: answering({ events }), maxRetries: 0 });
  const m = await sdk.messages.stream(request as any).finalMessage();
  expect(m.usage).toMatchObject({ input_tokens: 400, cache_read_input_tokens: 100 });
});
