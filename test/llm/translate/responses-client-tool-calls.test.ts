// The Responses codec's client side, answer direction: a custom tool's call goes back as a custom_tool_call item
// and a namespace member's call under its namespace, streamed (read by the openai SDK) and as JSON.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import type { IrEvent } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { agents, applyPatch, shellTool } from "../../support/codex-tools";

describe("custom tool calls go back as custom_tool_call items", () => {
  const args = JSON.stringify({ input: "*** Begin Patch\n*** End Patch" });
  const events: IrEvent[] = [
    { type: "start", id: "msg_1", model: "claude" },
    { type: "part_start", index: 0, part: { type: "tool_call", id: "toolu_9", name: "apply_patch" } },
    { type: "delta", index: 0, arguments: args.slice(0, 10) },
    { type: "delta", index: 0, arguments: args.slice(10) },
    { type: "part_end", index: 0 },
    { type: "finish", stop: "tool_use", usage: null },
  ];

  test("streamed: the SDK gets the freeform input whole, with the call id", async () => {
    const openai = new OpenAI({
      apiKey: "k",
      baseURL: "http://gateway.test/v1",
      maxRetries: 0,
      fetch: (async (_u: string, init: RequestInit) => {
        const enc = responsesCodec.client.streamEncoder(JSON.parse(String(init.body)));
        return new Response(events.map((e) => enc.write(e)).join(""), {
          headers: { "content-type": "text/event-stream" },
        });
      }) as any,
    });
    const r = await openai.responses
      .stream({ model: "claude", input: "edit", tools: [applyPatch as any] })
      .finalResponse();
    expect(r.output[0]).toMatchObject({
      type: "custom_tool_call",
      call_id: "toolu_9",
      name: "apply_patch",
      input: "*** Begin Patch\n*** End Patch",
    });
  });

  test("JSON answer: the same item", () => {
    const out: any = responsesCodec.client.encodeAnswer(
      {
        id: "m",
        model: "c",
        parts: [{ type: "tool_call", id: "toolu_9", name: "apply_patch", arguments: args }],
        stop: "tool_use",
        usage: null,
      },
      { model: "c", tools: [applyPatch] },
    );
    expect(out.output[0]).toMatchObject({
      type: "custom_tool_call",
      call_id: "toolu_9",
      name: "apply_patch",
      input: "*** Begin Patch\n*** End Patch",
    });
  });
});

describe("a namespace member's call goes back under its namespace", () => {
  const events: IrEvent[] = [
    { type: "start", id: "msg_1", model: "claude" },
    { type: "part_start", index: 0, part: { type: "tool_call", id: "toolu_7", name: "multi_agent_v1__spawn_agent" } },
    { type: "delta", index: 0, arguments: '{"message":"go"}' },
    { type: "part_end", index: 0 },
    { type: "finish", stop: "tool_use", usage: null },
  ];
  const item = {
    type: "function_call",
    call_id: "toolu_7",
    namespace: "multi_agent_v1",
    name: "spawn_agent",
    arguments: '{"message":"go"}',
  };

  test("streamed: output_item.added and done name the member and its namespace", () => {
    const enc = responsesCodec.client.streamEncoder({ model: "c", tools: [agents] });
    const sse = events.map((e) => enc.write(e)).join("");
    const data = sse
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(data.find((d) => d.type === "response.output_item.added").item).toMatchObject({ ...item, arguments: "" });
    expect(data.find((d) => d.type === "response.output_item.done").item).toMatchObject(item);
    expect(data.find((d) => d.type === "response.completed").response.output[0]).toMatchObject(item);
  });

  test("JSON answer: the same item; a tool outside any namespace keeps its name and has none", () => {
    const out: any = responsesCodec.client.encodeAnswer(
      {
        id: "m",
        model: "c",
        parts: [
          { type: "tool_call", id: "toolu_7", name: "multi_agent_v1__spawn_agent", arguments: '{"message":"go"}' },
          { type: "tool_call", id: "toolu_8", name: "shell", arguments: "{}" },
        ],
        stop: "tool_use",
        usage: null,
      },
      { model: "c", tools: [agents, shellTool] },
    );
    expect(out.output[0]).toMatchObject(item);
    expect(out.output[1]).toMatchObject({ type: "function_call", name: "shell" });
    expect(out.output[1].namespace).toBeUndefined();
  });
});
