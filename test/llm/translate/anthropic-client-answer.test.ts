// The client side of the Anthropic codec, answer direction: what it writes back (JSON and stream) is read again on the
// client's next turn: reasoning and call ids survive, empty parts send no blocks, and a Claude model's turn goes
// without the thinking blocks written here.
import { describe, expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";
import type { IrAnswer, IrEvent } from "../../../src/llm/translate/ir";
import { sseEvents } from "../../support/codecs";

const { client } = anthropicCodec;
const base = { model: "gpt-5.2", max_tokens: 2048, messages: [{ role: "user", content: "Hi" }] };

describe("what the client is given comes back on its next turn", () => {
  const answer: IrAnswer = {
    id: "resp_1",
    model: "gpt-5.2",
    parts: [
      { type: "reasoning", text: "Plan.", origin: "openai", opaque: "gAAAAenc", id: "rs_1" },
      { type: "reasoning", text: "", origin: "openai", opaque: "gAAAAred", redacted: true },
      { type: "tool_call", id: "call_1", name: "Read", arguments: '{"path":"a.txt"}' },
    ],
    stop: "tool_use",
    usage: null,
  };

  test("JSON: reasoning keeps its origin, value and id; tool call ids stay the same string", () => {
    const json = client.encodeAnswer(answer, base) as any;
    const next = client.decodeRequest({
      ...base,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: json.content },
        { role: "user", content: "next" },
      ],
    });
    expect(next.messages[1]!.parts).toEqual([
      { type: "reasoning", text: "Plan.", origin: "openai", opaque: "gAAAAenc", id: "rs_1" },
      { type: "reasoning", text: "", redacted: true, origin: "openai", opaque: "gAAAAred" },
      { type: "tool_call", id: "call_1", name: "Read", arguments: '{"path":"a.txt"}' },
    ]);
  });

  test("stream: a redacted part goes out as one redacted_thinking block carrying its value", () => {
    const enc = client.streamEncoder(base);
    const events: IrEvent[] = [
      { type: "start", id: "r", model: "m" },
      { type: "part_start", index: 0, part: { type: "reasoning", origin: "openai", redacted: true } },
      { type: "delta", index: 0, opaque: "gAAAAred" },
      { type: "part_end", index: 0 },
      { type: "finish", stop: "end_turn", usage: null },
    ];
    const sse = sseEvents(events.map((e) => enc.write(e)).join(""));
    const start = sse.find((e) => e.event === "content_block_start")!;
    expect(JSON.parse(start.data).content_block).toEqual({ type: "redacted_thinking", data: "sy1.openai.gAAAAred" });
    expect(sse.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });
});

// Chat upstreams often open an empty text part before tool calls; Claude Code sends every block back, and
// Anthropic refuses empty text blocks, so a later turn on a Claude model would fail.
describe("empty parts send no blocks", () => {
  const events: IrEvent[] = [
    { type: "start", id: "c", model: "m" },
    { type: "part_start", index: 0, part: { type: "reasoning", origin: null } },
    { type: "part_end", index: 0 },
    { type: "part_start", index: 1, part: { type: "text" } },
    { type: "delta", index: 1, text: "" },
    { type: "part_end", index: 1 },
    { type: "part_start", index: 2, part: { type: "tool_call", id: "call_1", name: "Read" } },
    { type: "delta", index: 2, arguments: "{}" },
    { type: "part_end", index: 2 },
    { type: "finish", stop: "tool_use", usage: null },
  ];

  test("stream: the tool call is block 0, no empty text or thinking block before it", () => {
    const enc = client.streamEncoder(base);
    const sse = sseEvents(events.map((e) => enc.write(e)).join(""));
    const starts = sse.filter((e) => e.event === "content_block_start").map((e) => JSON.parse(e.data));
    expect(starts).toEqual([
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "call_1", name: "Read", input: {} },
      },
    ]);
    expect(sse.filter((e) => e.event === "content_block_stop").map((e) => JSON.parse(e.data).index)).toEqual([0]);
  });

  test("JSON: empty text and unsigned empty reasoning are left out", () => {
    const json = client.encodeAnswer(
      {
        id: "c",
        model: "m",
        parts: [
          { type: "reasoning", text: "", origin: null },
          { type: "text", text: "" },
          { type: "tool_call", id: "call_1", name: "Read", arguments: "{}" },
        ],
        stop: "tool_use",
        usage: null,
      },
      base,
    ) as any;
    expect(json.content).toEqual([{ type: "tool_use", id: "call_1", name: "Read", input: {} }]);
  });
});

/** The content blocks this codec writes for a finished JSON answer of these parts. */
function writtenContent(model: string, parts: IrAnswer["parts"]): unknown[] {
  return (client.encodeAnswer({ id: "r", model, parts, stop: "end_turn", usage: null }, base) as any).content;
}

describe("a later turn on a Claude model (the native path) goes without the thinking blocks written here", () => {
  test("sealed and unsigned thinking is removed, Claude's own kept; an assistant message left empty goes", async () => {
    const { dropForeignThinking, FOREIGN_THINKING_MARKS } = await import("../../../src/llm/translate/anthropic");
    // The blocks as this codec wrote them on the GPT turns, read back as Claude Code would send them.
    const gpt = writtenContent("gpt-5.2", [
      { type: "reasoning", text: "plan", origin: "openai", opaque: "enc" },
      { type: "text", text: "Done." },
    ]);
    const onlyThinking = writtenContent("m", [{ type: "reasoning", text: "x", origin: "deepseek" }]);
    const body = {
      model: "claude-sonnet-4-5",
      max_tokens: 1000,
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: gpt },
        { role: "user", content: "b" },
        { role: "assistant", content: onlyThinking },
        { role: "user", content: "c" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "claude", signature: "EqQBsig" },
            { type: "text", text: "ok" },
          ],
        },
        { role: "user", content: "d" },
      ],
    };
    const raw = JSON.stringify(body);
    expect(FOREIGN_THINKING_MARKS.some((m) => raw.includes(m))).toBe(true);
    expect(dropForeignThinking(body)).toBe(true);
    expect(body.messages.map((m: any) => m.content)).toEqual([
      "a",
      [{ type: "text", text: "Done." }],
      "b",
      "c",
      [
        { type: "thinking", thinking: "claude", signature: "EqQBsig" },
        { type: "text", text: "ok" },
      ],
      "d",
    ]);
    expect(dropForeignThinking(body)).toBe(false);
  });
});
