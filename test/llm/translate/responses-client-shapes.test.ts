// The Responses codec's client side, request direction: the shapes an openai SDK or Codex request may take (string
// input, content parts, tool outputs, limits, tool choices) and what each becomes in the IR; hosted tools are dropped.
import { describe, expect, test } from "bun:test";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { agents, applyPatch, shellTool } from "../../support/codex-tools";

const decode = responsesCodec.client.decodeRequest;

describe("decodeRequest: shapes", () => {
  test("a string input is one user message; images by URL and data URL; refusal parts are text", () => {
    expect(decode({ model: "m", input: "hi" }).messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "hi" }] },
    ]);
    const ir = decode({
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: "https://x.test/a.png", detail: "high" },
            { type: "input_image", image_url: "data:image/jpeg;base64,/9j/4AAQ" },
          ],
        },
        { role: "assistant", content: [{ type: "refusal", refusal: "No." }] },
      ],
    });
    expect(ir.messages[0]!.parts).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image", source: { kind: "url", url: "https://x.test/a.png" }, detail: "high" },
      { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: "/9j/4AAQ" } },
    ]);
    expect(ir.messages[1]).toEqual({ role: "assistant", parts: [{ type: "text", text: "No." }] });
  });

  test("tool output as content parts; unsealed encrypted_content has no origin (never sent anywhere)", () => {
    const ir = decode({
      model: "m",
      input: [
        {
          type: "reasoning",
          id: "rs_1",
          summary: [],
          content: [{ type: "reasoning_text", text: "raw" }],
          encrypted_content: "gAAAAB-openai",
        },
        { type: "function_call", call_id: "c1", name: "look", arguments: "{}" },
        {
          type: "function_call_output",
          call_id: "c1",
          output: [
            { type: "input_text", text: "see" },
            { type: "input_image", image_url: "https://x.test/i.png" },
          ],
        },
      ],
    });
    expect(ir.messages[0]!.parts[0]).toEqual({
      type: "reasoning",
      text: "raw",
      origin: null,
      opaque: "gAAAAB-openai",
      id: "rs_1",
    });
    expect(ir.messages[1]!.parts[0]).toEqual({
      type: "tool_result",
      callId: "c1",
      content: [
        { type: "text", text: "see" },
        { type: "image", source: { kind: "url", url: "https://x.test/i.png" } },
      ],
    });
  });

  test("a tool output sent as {content, success: false} is an error result", () => {
    const ir = decode({
      model: "m",
      input: [{ type: "function_call_output", call_id: "c1", output: { content: "exit 1", success: false } }],
    });
    expect(ir.messages[0]!.parts[0]).toEqual({ type: "tool_result", callId: "c1", content: "exit 1", isError: true });
  });

  test("limits, sampling, json_schema output, tool_choice naming a function", () => {
    const ir = decode({
      model: "m",
      input: "x",
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true } },
      tools: [shellTool],
      tool_choice: { type: "function", name: "shell" },
      reasoning: { effort: "xhigh" },
    });
    expect(ir).toMatchObject({
      maxOutputTokens: 300,
      temperature: 0.2,
      topP: 0.9,
      toolChoice: { type: "tool", name: "shell" },
      reasoning: { effort: "high" },
    });
    expect(ir.responseFormat).toEqual({
      type: "json_schema",
      name: "answer",
      schema: { type: "object" },
      strict: true,
    });
    expect(decode({ model: "m", input: "x", reasoning: { effort: "none" } }).reasoning).toBeUndefined();
  });

  test("a hosted tool (Codex's web_search, local_shell, file_search) is left out and named in droppedTools", () => {
    for (const [tools, kept, dropped] of [
      [[shellTool, { type: "web_search", external_web_access: false }], ["shell"], ["web_search"]],
      [[{ type: "local_shell" }], [], ["local_shell"]],
      [[{ type: "file_search", vector_store_ids: ["vs_1"] }], [], ["file_search"]],
      [
        [
          {
            type: "namespace",
            name: "n",
            tools: [{ type: "web_search" }, { type: "function", name: "f", parameters: { type: "object" } }],
          },
        ],
        ["n__f"],
        ["web_search"],
      ],
    ] as const) {
      const ir = decode({ model: "m", input: "x", tools, tool_choice: "auto" });
      expect(ir.tools.map((t) => t.name)).toEqual([...kept]);
      expect(ir.droppedTools).toEqual([...dropped]);
    }
    expect(decode({ model: "m", input: "x", tools: [shellTool] }).droppedTools).toBeUndefined();
  });

  test("tool_choice may name a namespace member", () => {
    const ir = decode({
      model: "m",
      input: "x",
      tools: [agents],
      tool_choice: { type: "function", namespace: "multi_agent_v1", name: "spawn_agent" },
    });
    expect(ir.toolChoice).toEqual({ type: "tool", name: "multi_agent_v1__spawn_agent" });
  });

  test("allowed_tools narrows the tools and sets the mode", () => {
    const ir = decode({
      model: "m",
      input: "x",
      tools: [shellTool, applyPatch],
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "shell" }] },
    });
    expect(ir.tools.map((t) => t.name)).toEqual(["shell"]);
    expect(ir.toolChoice).toEqual({ type: "required" });
  });
});
