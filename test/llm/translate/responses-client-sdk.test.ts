// The Responses codec's client side as the openai SDK (7.x) sees it: the SDK's request is decoded by the codec, and
// the codec's JSON answer or SSE stream (built from IR answers and events, as a Claude or Gemini upstream would
// give them) is what the SDK's custom fetch returns. No server: what the SDK parses is exactly the codec's output.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openOpaque, type IrAnswer, type IrEvent } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { codecFetch, reasoningPart, startEvent, textPart, toolCallPart } from "../../support/codecs";

const client = responsesCodec.client;

/** An SDK whose every call the codec answers with `reply`; the decoded requests are kept in `seen`. */
function sdk(reply: Parameters<typeof codecFetch>[1]) {
  const { fetch, calls } = codecFetch(client, reply);
  return { openai: new OpenAI({ apiKey: "k", baseURL: "http://gateway.test/v1", maxRetries: 0, fetch }), seen: calls };
}

const json = (answer: IrAnswer) => ({ answer });
const stream = (events: IrEvent[]) => ({ events });

const usage = { input: 1500, cacheRead: 1200, cacheWrite: 100, output: 60, reasoning: 20 };
const tools = [
  {
    type: "function" as const,
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    strict: false,
  },
];

const claudeToolEvents: IrEvent[] = [
  startEvent("msg_01XYZ", "claude-sonnet-4-5", { ...usage, output: 1, reasoning: 0 }),
  ...reasoningPart(0, "anthropic", ["The user wants ", "the file."], "EqQBsig=="),
  ...textPart(1, "Let me ", "read it."),
  ...toolCallPart(2, "toolu_01AAA", "read_file", '{"path":', '"a.txt"}'),
  { type: "finish", stop: "tool_use", usage },
];

describe("responses.create (JSON)", () => {
  test("text, reasoning with sealed encrypted_content, a function call, usage in Responses' fields", async () => {
    const { openai } = sdk(
      json({
        id: "msg_01XYZ",
        model: "claude-sonnet-4-5",
        parts: [
          { type: "reasoning", text: "Think.", origin: "anthropic", opaque: "sig1" },
          { type: "text", text: "Reading." },
          { type: "tool_call", id: "toolu_01AAA", name: "read_file", arguments: '{"path":"a.txt"}' },
        ],
        stop: "tool_use",
        usage,
      }),
    );
    const r = await openai.responses.create({ model: "claude-sonnet-4-5", input: "read a.txt", tools });
    expect(r.object).toBe("response");
    expect(r.id).toStartWith("resp_");
    expect(r.status).toBe("completed");
    expect(r.model).toBe("claude-sonnet-4-5");
    expect(r.output_text).toBe("Reading.");
    const [rs, msg, fc] = r.output as any[];
    expect(rs.type).toBe("reasoning");
    expect(rs.summary).toEqual([{ type: "summary_text", text: "Think." }]);
    expect(openOpaque(rs.encrypted_content)).toEqual({ origin: "anthropic", value: "sig1" });
    expect(msg.type).toBe("message");
    expect(fc).toMatchObject({
      type: "function_call",
      call_id: "toolu_01AAA",
      name: "read_file",
      arguments: '{"path":"a.txt"}',
    });
    expect(fc.id).toStartWith("fc_");
    expect(r.usage).toEqual({
      input_tokens: 1500,
      input_tokens_details: { cached_tokens: 1200, cache_write_tokens: 100 } as any,
      output_tokens: 60,
      output_tokens_details: { reasoning_tokens: 20 },
      total_tokens: 1560,
    });
  });

  test("max_tokens → status incomplete, incomplete_details.reason max_output_tokens", async () => {
    const { openai } = sdk(
      json({ id: "m", model: "gemini-3-pro", parts: [{ type: "text", text: "Once upon" }], stop: "max_tokens", usage }),
    );
    const r = await openai.responses.create({ model: "gemini-3-pro", input: "story", max_output_tokens: 16 });
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.max_output_tokens).toBe(16);
  });
});

describe("responses.stream", () => {
  test("reasoning summary, text and a function call arrive as events the SDK accumulates into the final response", async () => {
    const { openai, seen } = sdk(stream(claudeToolEvents));
    const s = openai.responses.stream({
      model: "claude-sonnet-4-5",
      input: "read a.txt",
      tools,
      reasoning: { effort: "high", summary: "auto" },
    });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = "";
    for await (const e of s) {
      types.push(e.type);
      seqs.push(e.sequence_number);
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    const r = await s.finalResponse();
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types).toContain("response.content_part.added");
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("Let me read it.");
    expect(r.output_text).toBe("Let me read it.");
    const [rs, , fc] = r.output as any[];
    expect(rs.summary).toEqual([{ type: "summary_text", text: "The user wants the file." }]);
    expect(openOpaque(rs.encrypted_content)).toEqual({ origin: "anthropic", value: "EqQBsig==" });
    expect(fc).toMatchObject({
      type: "function_call",
      call_id: "toolu_01AAA",
      name: "read_file",
      arguments: '{"path":"a.txt"}',
      status: "completed",
    });
    expect(r.usage?.input_tokens).toBe(1500);
    expect(r.usage?.output_tokens_details.reasoning_tokens).toBe(20);
    expect(seen[0]!.ir.reasoning).toEqual({ effort: "high" });
  });

  test("tool round trip: the next turn's output and reasoning come back to the IR with the same call id and the sealed origin", async () => {
    const { openai, seen } = sdk(stream(claudeToolEvents));
    const first = await openai.responses
      .stream({ model: "claude-sonnet-4-5", input: "read a.txt", tools })
      .finalResponse();
    const { openai: again, seen: seen2 } = sdk(
      json({
        id: "msg_2",
        model: "claude-sonnet-4-5",
        parts: [{ type: "text", text: "It says hi." }],
        stop: "end_turn",
        usage,
      }),
    );
    const call = first.output.find((o) => o.type === "function_call") as any;
    const r = await again.responses.create({
      model: "claude-sonnet-4-5",
      tools,
      input: [
        { role: "user", content: "read a.txt" },
        ...(first.output as any[]),
        { type: "function_call_output", call_id: call.call_id, output: "hi" },
      ],
    });
    expect(r.output_text).toBe("It says hi.");
    expect(seen.length).toBe(1);
    const [user, assistant, results] = seen2[0]!.ir.messages;
    expect(user!.role).toBe("user");
    expect(assistant!.parts.map((p) => p.type)).toEqual(["reasoning", "text", "tool_call"]);
    expect(assistant!.parts[0]).toMatchObject({
      type: "reasoning",
      origin: "anthropic",
      opaque: "EqQBsig==",
      text: "The user wants the file.",
    });
    expect(assistant!.parts[2]).toEqual({
      type: "tool_call",
      id: "toolu_01AAA",
      name: "read_file",
      arguments: '{"path":"a.txt"}',
    });
    expect(results).toEqual({ role: "user", parts: [{ type: "tool_result", callId: "toolu_01AAA", content: "hi" }] });
  });

  test("max_tokens mid-answer ends with response.incomplete, which the SDK reads as a finished, incomplete response", async () => {
    const { openai } = sdk(
      stream([startEvent("m", "gemini-3-pro"), ...textPart(0, "Once"), { type: "finish", stop: "max_tokens", usage }]),
    );
    const r = await openai.responses.stream({ model: "gemini-3-pro", input: "story" }).finalResponse();
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output_text).toBe("Once");
    expect((r.output[0] as any).status).toBe("incomplete");
  });

  test("an upstream error mid-stream becomes response.failed carrying the error code and message", async () => {
    const { openai } = sdk(
      stream([
        startEvent("m", "claude-sonnet-4-5"),
        ...textPart(0, "Par").slice(0, -1),
        { type: "error", status: 529, code: "overloaded_error", message: "Overloaded" },
      ]),
    );
    const s = openai.responses.stream({ model: "claude-sonnet-4-5", input: "hi" });
    const failed: any[] = [];
    s.on("response.failed", (e) => failed.push(e));
    const r = await s.finalResponse().catch((e) => e);
    expect(failed.length).toBe(1);
    expect(failed[0].response.status).toBe("failed");
    expect(failed[0].response.error).toEqual({ code: "overloaded_error", message: "Overloaded" });
    expect(failed[0].response.output[0]).toMatchObject({
      type: "message",
      status: "incomplete",
      content: [{ text: "Par" }],
    });
    expect(r.status).toBe("failed"); // the SDK ends the stream with the failed response as its last snapshot
  });

  test("each IR event is written when it comes: every delta's own write carries it", () => {
    const enc = client.streamEncoder({ model: "m", tools });
    for (const e of claudeToolEvents) {
      const written = enc.write(e);
      if (e.type === "delta" && (e.text || e.reasoning || e.arguments))
        expect(written).toContain(JSON.stringify(e.text ?? e.reasoning ?? e.arguments).slice(1, -1));
      if (e.type === "part_start") expect(written).toContain("response.output_item.added");
      if (e.type === "part_end") expect(written).toContain("response.output_item.done");
    }
  });

  test("nothing is written after the terminal event", () => {
    const enc = client.streamEncoder({ model: "m" });
    for (const e of claudeToolEvents) enc.write(e);
    expect(enc.write({ type: "error", status: 500, code: "x", message: "late" })).toBe("");
  });
});

describe("reasoning that cannot or must not be carried", () => {
  test("a redacted block round-trips as redacted; reasoning of unknown origin gets no encrypted_content", async () => {
    const { openai } = sdk(
      stream([
        { type: "start", id: "msg_r", model: "claude-opus-4-5" },
        {
          type: "part_start",
          index: 0,
          part: { type: "reasoning", origin: "anthropic", redacted: true, opaque: "EncryptedBlob" },
        },
        { type: "part_end", index: 0 },
        { type: "part_start", index: 1, part: { type: "reasoning", origin: null } },
        { type: "delta", index: 1, reasoning: "visible" },
        { type: "delta", index: 1, opaque: "whose?" },
        { type: "part_end", index: 1 },
        { type: "finish", stop: "end_turn", usage: null },
      ]),
    );
    const r = await openai.responses.stream({ model: "claude-opus-4-5", input: "hi" }).finalResponse();
    const [redacted, unknown] = r.output as any[];
    expect(redacted.summary).toEqual([]);
    expect(unknown.summary).toEqual([{ type: "summary_text", text: "visible" }]);
    expect(unknown.encrypted_content).toBeUndefined();
    const ir = client.decodeRequest({ model: "claude-opus-4-5", input: [redacted, unknown] });
    expect(ir.messages[0]!.parts).toEqual([
      { type: "reasoning", text: "", origin: "anthropic", opaque: "EncryptedBlob", redacted: true, id: redacted.id },
      { type: "reasoning", text: "visible", origin: null, id: unknown.id },
    ]);
  });

  test("usage stated only at the start (finish without usage) still reaches response.completed", async () => {
    const { openai } = sdk(
      stream([startEvent("m", "c", usage), ...textPart(0, "ok"), { type: "finish", stop: "end_turn", usage: null }]),
    );
    const r = await openai.responses.stream({ model: "c", input: "hi" }).finalResponse();
    expect(r.usage?.input_tokens).toBe(1500);
    expect(r.usage?.input_tokens_details.cached_tokens).toBe(1200);
  });
});
