// The Responses codec's client side, request direction: what a Codex CLI request becomes in the IR and what is
// refused (a TranslationError naming the field, which the seam answers with a 400 before anything is held or sent).
// The other request shapes are in responses-client-shapes.test.ts, the answer's tool call items in
// responses-client-tool-calls.test.ts.
import { describe, expect, test } from "bun:test";
import { sealOpaque, TranslationError } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { agents, applyPatch, shellTool } from "../../support/codex-tools";

const decode = responsesCodec.client.decodeRequest;

/** A Codex CLI turn after a shell call and an apply_patch edit (the shapes codex-rs sends). */
const codexTurn = {
  model: "claude-sonnet-4-5",
  instructions: "You are a coding agent.",
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Sandbox: workspace-write." }] },
    {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "<environment_context>cwd=/w</environment_context>" }],
    },
    { type: "message", role: "user", content: [{ type: "input_text", text: "fix the typo in a.txt" }] },
    {
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Look at the file." }],
      content: null,
      encrypted_content: sealOpaque("anthropic", "sigA"),
    },
    { type: "function_call", name: "shell", arguments: '{"command":["cat","a.txt"]}', call_id: "toolu_01" },
    { type: "function_call_output", call_id: "toolu_01", output: "helo" },
    {
      type: "custom_tool_call",
      status: "completed",
      call_id: "toolu_02",
      name: "apply_patch",
      input: "*** Begin Patch\n*** End Patch",
    },
    { type: "custom_tool_call_output", call_id: "toolu_02", output: "Done" },
    { type: "web_search_call", status: "completed", action: { type: "search", query: "x" } },
    {
      type: "function_call",
      namespace: "multi_agent_v1",
      name: "spawn_agent",
      arguments: '{"message":"go"}',
      call_id: "toolu_03",
    },
    { type: "function_call_output", call_id: "toolu_03", output: "spawned" },
  ],
  tools: [shellTool, applyPatch, agents],
  tool_choice: "auto",
  parallel_tool_calls: false,
  reasoning: { effort: "medium", summary: "auto" },
  store: false,
  stream: true,
  include: ["reasoning.encrypted_content"],
  prompt_cache_key: "sess-1",
  text: { verbosity: "medium" },
};

describe("decodeRequest: a Codex CLI turn", () => {
  const ir = decode(structuredClone(codexTurn));

  test("instructions and developer messages become the system prompt, in order", () => {
    expect(ir.system).toEqual([
      { type: "text", text: "You are a coding agent." },
      { type: "text", text: "Sandbox: workspace-write." },
    ]);
  });

  test("history: turns merge by role, call ids stay, custom tool calls carry their input as one string argument", () => {
    expect(ir.messages).toEqual([
      {
        role: "user",
        parts: [
          { type: "text", text: "<environment_context>cwd=/w</environment_context>" },
          { type: "text", text: "fix the typo in a.txt" },
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "Look at the file.", origin: "anthropic", opaque: "sigA" },
          { type: "tool_call", id: "toolu_01", name: "shell", arguments: '{"command":["cat","a.txt"]}' },
        ],
      },
      { role: "user", parts: [{ type: "tool_result", callId: "toolu_01", content: "helo" }] },
      {
        role: "assistant",
        parts: [
          {
            type: "tool_call",
            id: "toolu_02",
            name: "apply_patch",
            arguments: JSON.stringify({ input: "*** Begin Patch\n*** End Patch" }),
          },
        ],
      },
      { role: "user", parts: [{ type: "tool_result", callId: "toolu_02", content: "Done" }] },
      {
        role: "assistant",
        parts: [
          { type: "tool_call", id: "toolu_03", name: "multi_agent_v1__spawn_agent", arguments: '{"message":"go"}' },
        ],
      },
      { role: "user", parts: [{ type: "tool_result", callId: "toolu_03", content: "spawned" }] },
    ]);
  });

  test("tools: function kept, custom → a function with one string `input` and the grammar in its description, a namespace → its members", () => {
    expect(ir.tools.map((t) => t.name)).toEqual(["shell", "apply_patch", "multi_agent_v1__spawn_agent"]);
    expect(ir.tools[2]).toEqual({
      name: "multi_agent_v1__spawn_agent",
      description: "Tools for sub-agents.\n\nSpawn a sub-agent.",
      parameters: agents.tools[0]!.parameters,
      strict: false,
    });
    expect(ir.tools[0]).toEqual({
      name: "shell",
      description: "Runs a shell command",
      parameters: shellTool.parameters,
      strict: false,
    });
    expect(ir.tools[1]!.parameters).toMatchObject({
      type: "object",
      properties: { input: { type: "string" } },
      required: ["input"],
    });
    expect(ir.tools[1]!.description).toContain("start: begin_patch hunk+ end_patch");
    expect(ir.toolChoice).toEqual({ type: "auto" });
    expect(ir.parallelToolCalls).toBe(false);
  });

  test("reasoning effort and stream carried; store, include, prompt_cache_key, verbosity dropped", () => {
    expect(ir.reasoning).toEqual({ effort: "medium" });
    expect(ir.stream).toBe(true);
    expect(ir.responseFormat).toBeUndefined();
  });
});

describe("decodeRequest: refused, naming the field", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["previous_response_id (nothing is stored)", { previous_response_id: "resp_1" }, "previous_response_id"],
    ["conversation", { conversation: "conv_1" }, "conversation"],
    ["background", { background: true }, "background"],
    ["a stored prompt", { prompt: { id: "pmpt_1" } }, "prompt"],
    ["top_logprobs", { top_logprobs: 3 }, "top_logprobs"],
    ["logprobs through include", { include: ["message.output_text.logprobs"] }, "include"],
    ["priority tier", { service_tier: "priority" }, "service_tier"],
    [
      "a tool_choice forcing a hosted tool",
      { tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } },
      "tool_choice",
    ],
    ["a tool without a type", { tools: [{ name: "x" }] }, "tools[0].type"],
    ["tool_choice required with no tool offered", { tools: [], tool_choice: "required" }, "tool_choice"],
    [
      "a tool_choice naming an absent function",
      { tools: [shellTool], tool_choice: { type: "function", name: "nope" } },
      "tool_choice",
    ],
    ["input that is a number", { input: 5 }, "input"],
    ["an input item that is not an object", { input: ["hi"] }, "input[0]"],
    ["a message with an unknown role", { input: [{ role: "robot", content: "x" }] }, "input[0].role"],
    [
      "an input_file part",
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] },
      "input[0].content[0]",
    ],
    [
      "an image by file_id",
      { input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] },
      "input[0].content[0]",
    ],
    [
      "a function_call without call_id",
      { input: [{ type: "function_call", name: "f", arguments: "{}" }] },
      "input[0].call_id",
    ],
    ["an item_reference", { input: [{ type: "item_reference", id: "msg_1" }] }, "input[0]"],
    ["max_output_tokens 0", { max_output_tokens: 0 }, "max_output_tokens"],
    ["temperature as a string", { temperature: "hot" }, "temperature"],
    ["an unknown reasoning effort", { reasoning: { effort: "max" } }, "reasoning.effort"],
    [
      "a json_schema format without schema",
      { text: { format: { type: "json_schema", name: "x" } } },
      "text.format.schema",
    ],
    ["tools not an array", { tools: { type: "function" } }, "tools"],
    ["instructions as an object", { instructions: { text: "x" } }, "instructions"],
  ];
  for (const [what, fields, param] of cases) {
    test(what, () => {
      let err: unknown;
      try {
        decode({ model: "m", input: "x", ...fields });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TranslationError);
      expect((err as TranslationError).param).toBe(param);
    });
  }

  test("a body nested deeper than the gateway serialises is refused before anything runs", () => {
    let deep: any = {};
    for (let i = 0; i < 300; i++) deep = { a: deep };
    expect(() => decode({ model: "m", input: "x", metadata: deep })).toThrow(TranslationError);
  });
});
