// A custom tool's freeform input read out of the function arguments it travels in, piece by piece: whatever way
// the arguments are cut, the pieces join into exactly the input, and the SDK sees input deltas before the item ends.
import { describe, expect, test } from "bun:test";
import type { IrEvent } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { customInputReader } from "../../../src/llm/translate/responses/custom-input";
import { rng } from "../../fakes/chunking";

const PATCH = '*** Begin Patch\n*** Update File: a "quoted" \\ path\tx.txt\n@@\n-helo\n+hello é 😀\n*** End Patch';

function cut(text: string, random: () => number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(random() * 6);
    pieces.push(text.slice(i, i + n));
    i += n;
  }
  return pieces;
}

describe("customInputReader", () => {
  test('any cut of {"input": ...} (escapes, \\u escapes, spaces) reads back exactly the input', () => {
    const random = rng(3);
    for (const args of [
      JSON.stringify({ input: PATCH }),
      `{ "input" : ${JSON.stringify(PATCH).replace("é", "\\u00e9")} }`,
    ]) {
      for (let round = 0; round < 200; round++) {
        const reader = customInputReader();
        const text = cut(args, random)
          .map((p) => reader.feed(p))
          .join("");
        expect(text).toBe(PATCH);
      }
    }
  });

  test("arguments of another shape are not read (the done event carries them whole)", () => {
    for (const args of ['{"other":"x","input":"y"}', "not json", '["input"]']) {
      const reader = customInputReader();
      expect([...args].map((c) => reader.feed(c)).join("")).toBe("");
    }
  });
});

describe("streamed custom tool calls", () => {
  const args = JSON.stringify({ input: PATCH });
  const events: IrEvent[] = [
    { type: "start", id: "m", model: "claude" },
    { type: "part_start", index: 0, part: { type: "tool_call", id: "toolu_1", name: "apply_patch" } },
    ...cut(args, rng(9)).map((a): IrEvent => ({ type: "delta", index: 0, arguments: a })),
    { type: "part_end", index: 0 },
    { type: "finish", stop: "tool_use", usage: null },
  ];
  const request = { model: "claude", input: "x", tools: [{ type: "custom", name: "apply_patch" }] };

  function sse(evts: IrEvent[]) {
    const enc = responsesCodec.client.streamEncoder(request);
    return evts
      .map((e) => enc.write(e))
      .join("")
      .split("\n\n")
      .filter(Boolean)
      .map((b) => JSON.parse(b.slice(b.indexOf("data: ") + 6)));
  }

  test("input deltas leave as the arguments stream in, and join into the input the done event states", () => {
    const out = sse(events);
    const deltas = out.filter((e) => e.type === "response.custom_tool_call_input.delta");
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.map((d) => d.delta).join("")).toBe(PATCH);
    expect(out.find((e) => e.type === "response.custom_tool_call_input.done").input).toBe(PATCH);
    const firstDelta = out.findIndex((e) => e.type === "response.custom_tool_call_input.delta");
    expect(firstDelta).toBeLessThan(out.length - 4); // well before the item's end, not all at once
  });

  test('arguments that are not {"input": ...}: the done event and the item carry them as written', () => {
    const odd = sse([
      events[0]!,
      events[1]!,
      { type: "delta", index: 0, arguments: "raw patch text" },
      { type: "part_end", index: 0 },
      events.at(-1)!,
    ]);
    expect(odd.find((e) => e.type === "response.custom_tool_call_input.done").input).toBe("raw patch text");
    expect(odd.find((e) => e.type === "response.output_item.done").item).toMatchObject({
      type: "custom_tool_call",
      input: "raw patch text",
      call_id: "toolu_1",
    });
  });
});
