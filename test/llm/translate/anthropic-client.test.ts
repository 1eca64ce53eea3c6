// The client side of the Anthropic codec, request direction: a Messages request (Claude Code, the Anthropic SDKs)
// read into IR, and what it refuses. The answers it writes, read again on the next turn: anthropic-client-answer.test.ts.
import { describe, expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";
import { TranslationError } from "../../../src/llm/translate/ir";

const { client } = anthropicCodec;
const base = { model: "gpt-5.2", max_tokens: 2048, messages: [{ role: "user", content: "Hi" }] };

function refusal(body: Record<string, any>): TranslationError {
  try {
    client.decodeRequest(body);
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error("the request was accepted");
}

/** A Claude Code turn: cached system blocks, a tool use and its results (one an error), and fields IR does not carry. */
const claudeCodeTurn = {
  model: "gpt-5.2",
  max_tokens: 32000,
  stream: true,
  system: [
    { type: "text", text: "You are Claude Code." },
    { type: "text", text: "Project notes", cache_control: { type: "ephemeral", ttl: "1h" } },
  ],
  messages: [
    { role: "user", content: [{ type: "text", text: "Read a.txt" }] },
    { role: "user", content: "and be quick" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "call_1", name: "Read", input: { path: "a.txt" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: "hello", cache_control: { type: "ephemeral" } },
        {
          type: "tool_result",
          tool_use_id: "call_2",
          is_error: true,
          content: [{ type: "text", text: "no such file" }],
        },
      ],
    },
  ],
  tools: [
    {
      name: "Read",
      description: "Reads a file",
      input_schema: { type: "object", properties: { path: { type: "string" } } },
      cache_control: { type: "ephemeral" },
    },
  ],
  tool_choice: { type: "auto", disable_parallel_tool_use: true },
  metadata: { user_id: "user_abc_session_1" },
  stop_sequences: ["###"],
  temperature: 0.3,
  top_k: 5,
  service_tier: "auto",
  context_management: { edits: [] },
};

describe("Messages request → IR", () => {
  test("a Claude Code turn: system blocks with cache_control, history with tool use and results, in order", () => {
    const ir = client.decodeRequest(claudeCodeTurn);
    expect(ir.system).toEqual([
      { type: "text", text: "You are Claude Code." },
      { type: "text", text: "Project notes", cache: { type: "ephemeral", ttl: "1h" } },
    ]);
    expect(ir.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "Read a.txt" }] },
      { role: "user", parts: [{ type: "text", text: "and be quick" }] },
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Reading." },
          { type: "tool_call", id: "call_1", name: "Read", arguments: '{"path":"a.txt"}' },
        ],
      },
      {
        role: "user",
        parts: [
          { type: "tool_result", callId: "call_1", content: "hello", cache: { type: "ephemeral" } },
          { type: "tool_result", callId: "call_2", isError: true, content: [{ type: "text", text: "no such file" }] },
        ],
      },
    ]);
    expect(ir.tools).toEqual([
      {
        name: "Read",
        description: "Reads a file",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        cache: { type: "ephemeral" },
      },
    ]);
    expect(ir).toMatchObject({
      toolChoice: { type: "auto" },
      parallelToolCalls: false,
      maxOutputTokens: 32000,
      stream: true,
      user: "user_abc_session_1",
      stop: ["###"],
      temperature: 0.3,
    });
    expect(ir).not.toHaveProperty("topP");
  });

  test("a plain-text document is its text, in a message or a tool result", () => {
    const doc = { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } };
    const ir = client.decodeRequest({
      ...base,
      messages: [{ role: "user", content: [doc, { type: "tool_result", tool_use_id: "t", content: [doc] }] }],
    });
    expect(ir.messages[0]!.parts).toEqual([
      { type: "text", text: "notes" },
      { type: "tool_result", callId: "t", content: [{ type: "text", text: "notes" }] },
    ]);
  });

  test("images: base64 and url sources", () => {
    const ir = client.decodeRequest({
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
          ],
        },
      ],
    });
    expect(ir.messages[0]!.parts).toEqual([
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { kind: "url", url: "https://example.com/a.jpg" } },
    ]);
  });

  test("thinking: enabled gives its budget, adaptive the effort asked for (medium by default), disabled none", () => {
    expect(client.decodeRequest({ ...base, thinking: { type: "enabled", budget_tokens: 4000 } }).reasoning).toEqual({
      budgetTokens: 4000,
    });
    expect(client.decodeRequest({ ...base, thinking: { type: "adaptive" } }).reasoning).toEqual({ effort: "medium" });
    expect(
      client.decodeRequest({ ...base, thinking: { type: "adaptive" }, output_config: { effort: "max" } }).reasoning,
    ).toEqual({ effort: "high" });
    expect(client.decodeRequest({ ...base, output_config: { effort: "low" } }).reasoning).toEqual({ effort: "low" });
    expect(client.decodeRequest({ ...base, thinking: { type: "disabled" } }).reasoning).toBeUndefined();
  });

  test("output_config.format becomes a JSON schema response format", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    expect(
      client.decodeRequest({ ...base, output_config: { format: { type: "json_schema", schema } } }).responseFormat,
    ).toEqual({ type: "json_schema", name: "output", schema, strict: true });
  });

  test("thinking blocks: a real Anthropic signature is Anthropic's; a sealed one names its provider; none is of unknown origin", () => {
    const ir = client.decodeRequest({
      ...base,
      messages: [
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "from Claude", signature: "EqQBCkYIARgCIkB" },
            { type: "thinking", thinking: "from GPT", signature: "sy1.openai@rs_12.gAAAAenc" },
            { type: "thinking", thinking: "from DeepSeek", signature: "sy1.deepseek." },
            { type: "thinking", thinking: "unsigned", signature: "" },
            { type: "redacted_thinking", data: "EmwKAhgBEgy" },
          ],
        },
        { role: "user", content: "next" },
      ],
    });
    expect(ir.messages[0]!.parts).toEqual([
      { type: "reasoning", text: "from Claude", origin: "anthropic", opaque: "EqQBCkYIARgCIkB" },
      { type: "reasoning", text: "from GPT", origin: "openai", opaque: "gAAAAenc", id: "rs_12" },
      { type: "reasoning", text: "from DeepSeek", origin: "deepseek" },
      { type: "reasoning", text: "unsigned", origin: null },
      { type: "reasoning", text: "", redacted: true, origin: "anthropic", opaque: "EmwKAhgBEgy" },
    ]);
  });

  test("refused: server tools, containers, MCP servers, documents, file images — each naming the field", () => {
    expect(refusal({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }] }).param).toBe(
      "tools[0].type",
    );
    expect(refusal({ ...base, tools: [{ type: "bash_20250124", name: "bash" }] }).param).toBe("tools[0].type");
    expect(refusal({ ...base, tools: [{ type: "code_execution_20250825", name: "code_execution" }] }).param).toBe(
      "tools[0].type",
    );
    expect(refusal({ ...base, container: "cntr_1" }).param).toBe("container");
    expect(refusal({ ...base, mcp_servers: [{ type: "url", url: "https://x", name: "x" }] }).param).toBe("mcp_servers");
    const doc = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } };
    expect(refusal({ ...base, messages: [{ role: "user", content: [doc] }] }).param).toBe(
      "messages[0].content[0].source",
    );
    const search = { type: "search_result", source: "https://x", title: "x", content: [] };
    expect(refusal({ ...base, messages: [{ role: "user", content: [search] }] }).param).toBe(
      "messages[0].content[0].type",
    );
    const file = { type: "image", source: { type: "file", file_id: "file_1" } };
    expect(refusal({ ...base, messages: [{ role: "user", content: [file] }] }).param).toBe(
      "messages[0].content[0].source",
    );
  });

  test("malformed shapes are TranslationErrors naming the field, never TypeErrors", () => {
    expect(refusal(null as any)).toBeInstanceOf(TranslationError);
    const cases: Array<[Record<string, any>, string]> = [
      [{ model: "m", max_tokens: 10 }, "messages"],
      [{ ...base, messages: [null] }, "messages[0].role"],
      [{ ...base, messages: [{ role: "tool", content: "x" }] }, "messages[0].role"],
      [{ ...base, messages: [{ role: "system", content: 42 }] }, "messages[0].content"],
      [{ ...base, messages: [{ role: "developer", content: "x" }] }, "messages[0].role"],
      [{ ...base, messages: [{ role: "user", content: 5 }] }, "messages[0].content"],
      [{ ...base, messages: [{ role: "user", content: [null] }] }, "messages[0].content[0]"],
      [{ ...base, messages: [{ role: "user", content: [{ type: "text" }] }] }, "messages[0].content[0].text"],
      [
        { ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", name: "x", input: {} }] }] },
        "messages[0].content[0].id",
      ],
      [
        { ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: 7 }] }] },
        "messages[0].content[0].content",
      ],
      [{ ...base, system: 42 }, "system"],
      [{ ...base, system: [{ type: "image" }] }, "system[0]"],
      [{ ...base, tools: {} }, "tools"],
      [{ ...base, tools: [{ name: "x" }] }, "tools[0].input_schema"],
      [{ ...base, tool_choice: "auto" }, "tool_choice"],
      [{ ...base, tool_choice: { type: "tool" } }, "tool_choice.name"],
      [{ ...base, max_tokens: -1 }, "max_tokens"],
      [{ ...base, temperature: "hot" }, "temperature"],
      [{ ...base, stop_sequences: "###" }, "stop_sequences"],
      [{ ...base, thinking: { type: "enabled" } }, "thinking.budget_tokens"],
      [{ ...base, thinking: { type: "sometimes" } }, "thinking.type"],
      [{ ...base, output_config: { effort: "extreme" } }, "output_config.effort"],
      [{ ...base, output_config: { format: { type: "xml" } } }, "output_config.format"],
    ];
    for (const [body, param] of cases) expect(refusal(body).param).toBe(param);
  });

  test("a mid-conversation system message (Claude Code sends them) joins the system prompt in order", () => {
    const ir = client.decodeRequest({
      ...base,
      system: "First.",
      messages: [
        { role: "user", content: "Hi" },
        { role: "system", content: [{ type: "text", text: "Second." }] },
        { role: "user", content: "Again" },
      ],
    });
    expect(ir.system.map((p) => p.text)).toEqual(["First.", "Second."]);
    expect(ir.messages.map((m) => m.role)).toEqual(["user", "user"]);
  });

  test("tool input nested beyond the limit is refused, not serialised", () => {
    let input: any = {};
    for (let i = 0; i < 300; i++) input = { a: input };
    const body = {
      ...base,
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input }] }],
    };
    expect(refusal(body).param).toBe("messages[0].content[0].input");
  });
});

test("metadata.user_id longer than OpenAI's 64-character user becomes a stable 64-character digest", () => {
  const long = "user_" + "a".repeat(64) + "_account_1234_session_abcd";
  const a = client.decodeRequest({ ...base, metadata: { user_id: long } }).user!;
  expect(a).toHaveLength(64);
  expect(client.decodeRequest({ ...base, metadata: { user_id: long } }).user).toBe(a);
  expect(client.decodeRequest({ ...base, metadata: { user_id: long + "x" } }).user).not.toBe(a);
  expect(client.decodeRequest({ ...base, metadata: { user_id: "u1" } }).user).toBe("u1");
});
