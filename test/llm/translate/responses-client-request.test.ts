// The Responses codec's client side, request direction: what a Codex CLI or openai SDK request becomes in the IR,
// what is dropped as harmless, and what is refused (a TranslationError naming the field, which the seam answers
// with a 400 before anything is held or sent).
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { sealOpaque, TranslationError, type IrEvent } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";

const decode = responsesCodec.client.decodeRequest;

const shellTool = {
  type: "function",
  name: "shell",
  description: "Runs a shell command",
  strict: false,
  parameters: {
    type: "object",
    properties: { command: { type: "array", items: { type: "string" } } },
    required: ["command"],
  },
};
const agents = {
  type: "namespace",
  name: "multi_agent_v1",
  description: "Tools for sub-agents.",
  tools: [
    {
      type: "function",
      name: "spawn_agent",
      description: "Spawn a sub-agent.",
      strict: false,
      parameters: { type: "object", properties: { message: { type: "string" } } },
    },
  ],
};
const applyPatch = {
  type: "custom",
  name: "apply_patch",
  description: "Use apply_patch to edit files.",
  format: { type: "grammar", syntax: "lark", definition: "start: begin_patch hunk+ end_patch" },
};

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
