// The upstream side of the Anthropic codec: an IR request written as a Messages body for Claude, and Claude's
// answers (the recorded A_* fixtures) read back into IR, JSON and stream.
import { describe, expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic.ts";
import type { IrEvent, IrRequest } from "../../../src/llm/translate/ir.ts";
import { fixtureJson, fixtureText, type FixtureName } from "../../fakes/fixtures.ts";
import { sseEvents } from "./anthropic-support.ts";

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
    expect(ev[0]).toEqual({ type: "start", id: "msg_01Xa8QmcR5hUkPZ3vb2Wq9Kd", model: "claude-sonnet-4-5-20250929", usage: { input: 21 + 1450, cacheRead: 0, cacheWrite: 1450, output: 1, reasoning: 0 } });
    expect(ev.slice(1)).toEqual([
      { type: "part_start", index: 0, part: { type: "text" } },
      { type: "delta", index: 0, text: "Hello" },
      { type: "delta", index: 0, text: "! How can I help you today?" },
      { type: "part_end", index: 0 },
      { type: "finish", stop: "end_turn", stopSequence: null, usage: { input: 1471, cacheRead: 0, cacheWrite: 1450, output: 12, reasoning: 0 } },
    ]);
  });

  test("a tool stream: the tool call with its id, name and argument pieces; stop tool_use", () => {
    const ev = decodeStream("A_stream_tool.sse");
    const tool = ev.filter((e) => "index" in e && e.index === 1);
    expect(tool).toEqual([
      { type: "part_start", index: 1, part: { type: "tool_call", id: "toolu_01VtzEc4Rbq3qX4wKqf1Cq8m", name: "get_weather" } },
      { type: "delta", index: 1, arguments: '{"location": "San Fra' },
      { type: "delta", index: 1, arguments: 'ncisco, CA", "unit": "fahrenheit"}' },
      { type: "part_end", index: 1 },
    ]);
    expect(ev.at(-1)).toEqual({ type: "finish", stop: "tool_use", stopSequence: null, usage: { input: 472, cacheRead: 0, cacheWrite: 0, output: 89, reasoning: 0 } });
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
      { type: "tool_call", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: '{"location":"Paris, France","unit":"celsius"}' },
    ]);
    expect(a.stop).toBe("tool_use");
    expect(a.usage).toEqual({ input: 38 + 2113, cacheRead: 2113, cacheWrite: 0, output: 74, reasoning: 0 });
  });
});
