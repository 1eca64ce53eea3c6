// The fake upstream's scripted agent model (test/fakes/agent-script.ts) answers as the real upstreams do: each
// protocol's official SDK, talking to the fake directly, parses its tool calls, texts and reasoning, JSON and
// streamed; the step follows the tool results in the conversation; a side call gets text; failFirst fails once.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeEach, expect, test } from "bun:test";
import OpenAI from "openai";
import { scriptReasoning, SIDE_TEXT, type AgentStep } from "../fakes/agent-script";
import { startFakeLlmUpstream } from "../fakes/llm-upstream";

const fake = startFakeLlmUpstream({ seed: 7 });
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const STEPS = (): AgentStep[] => [
  { call: { name: "read", input: { path: "a.txt" } }, reasoning: true },
  { text: "All done.", reasoning: true },
];
const anthropic = new Anthropic({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
const openai = new OpenAI({ apiKey: "k", baseURL: fake.url + "/v1", maxRetries: 0 });
const readTool = { name: "read", input_schema: { type: "object" as const, properties: { path: { type: "string" } } } };
const fnTool = {
  type: "function" as const,
  name: "read",
  parameters: { type: "object", properties: { path: { type: "string" } } },
  strict: false,
};

test("Anthropic Messages: thinking with its signature, then the tool call; after its result, the text (JSON and streamed)", async () => {
  fake.setScenario({ kind: "script", steps: STEPS() });
  const first = [{ role: "user" as const, content: "Read a.txt" }];
  for (const stream of [false, true]) {
    const req = { model: "claude-sonnet-4-5", max_tokens: 100, tools: [readTool], messages: first };
    const msg = stream ? await anthropic.messages.stream(req).finalMessage() : await anthropic.messages.create(req);
    expect(msg.stop_reason).toBe("tool_use");
    expect(msg.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(msg.content[0]).toMatchObject({ thinking: scriptReasoning(0).text, signature: scriptReasoning(0).opaque });
    const call = msg.content[1] as Anthropic.ToolUseBlock;
    expect([call.name, call.input]).toEqual(["read", { path: "a.txt" }]);
    expect(msg.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
    const next = await anthropic.messages.create({
      ...req,
      messages: [
        ...first,
        { role: "assistant", content: msg.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "x" }] },
      ],
    });
    expect(next.stop_reason).toBe("end_turn");
    expect(next.content.at(-1)).toMatchObject({ type: "text", text: "All done." });
  }
});

test("Chat Completions: the tool call with DeepSeek's reasoning_content, then the text; the stream's usage chunk when asked for", async () => {
  fake.setScenario({ kind: "script", steps: STEPS() });
  const tools = [{ type: "function" as const, function: { name: "read", parameters: fnTool.parameters } }];
  const messages = [{ role: "user" as const, content: "Read a.txt" }];
  const json: any = await openai.chat.completions.create({ model: "deepseek-reasoner", tools, messages });
  expect(json.choices[0].finish_reason).toBe("tool_calls");
  expect(json.choices[0].message.reasoning_content).toBe(scriptReasoning(0).text);
  const tc = json.choices[0].message.tool_calls[0];
  expect([tc.function.name, JSON.parse(tc.function.arguments)]).toEqual(["read", { path: "a.txt" }]);
  const streamed = await openai.chat.completions
    .stream({ model: "deepseek-reasoner", tools, messages, stream_options: { include_usage: true } })
    .finalChatCompletion();
  expect(streamed.choices[0]!.message.tool_calls![0]!.id).toBe(tc.id);
  expect(streamed.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 10 });
  const next = await openai.chat.completions.create({
    model: "deepseek-reasoner",
    tools,
    messages: [...messages, json.choices[0].message, { role: "tool", tool_call_id: tc.id, content: "x" }],
  });
  expect(next.choices[0]!.message.content).toBe("All done.");
});

test("Responses: a reasoning item with encrypted_content, then the function call; after its output, the text", async () => {
  fake.setScenario({ kind: "script", steps: STEPS() });
  const input = [{ role: "user" as const, content: "Read a.txt" }];
  for (const stream of [false, true]) {
    const req = { model: "gpt-5.1", tools: [fnTool], input };
    const r = stream ? await openai.responses.stream(req).finalResponse() : await openai.responses.create(req);
    expect(r.output.map((i) => i.type)).toEqual(["reasoning", "function_call"]);
    expect(r.output[0]).toMatchObject({
      encrypted_content: scriptReasoning(0).opaque,
      summary: [{ text: scriptReasoning(0).text }],
    });
    const fc = r.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    expect([fc.name, JSON.parse(fc.arguments)]).toEqual(["read", { path: "a.txt" }]);
    expect(r.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
    const next = await openai.responses.create({
      ...req,
      input: [...input, ...(r.output as any[]), { type: "function_call_output", call_id: fc.call_id, output: "x" }],
    });
    expect(next.output_text).toBe("All done.");
  }
});

test("a call that offers none of the step's tools is a side call: it gets text; failFirst fails that step's first request", async () => {
  fake.setScenario({ kind: "script", steps: [{ call: { name: "read", input: {} }, failFirst: 1 }, { text: "done" }] });
  const side = await anthropic.messages.create({
    model: "claude-haiku-4-5",
    max_tokens: 10,
    messages: [{ role: "user", content: "Title?" }],
  });
  expect<unknown>(side.content).toEqual([{ type: "text", text: SIDE_TEXT }]); // as sent: the SDK type wants `citations`, which the fake leaves out
  const req = {
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    tools: [readTool],
    messages: [{ role: "user" as const, content: "Read" }],
  };
  expect(await anthropic.messages.create(req).catch((e) => e)).toBeInstanceOf(Anthropic.InternalServerError);
  expect((await anthropic.messages.create(req)).stop_reason).toBe("tool_use");
});

test("Chat Completions as Gemini 3: no reasoning text, the thought signature on the tool call (JSON and streamed)", async () => {
  fake.setScenario({ kind: "script", steps: [{ call: { name: "read", input: {} }, reasoning: "signature" }] });
  const req = {
    model: "gemini-3-pro-preview",
    tools: [{ type: "function" as const, function: { name: "read", parameters: fnTool.parameters } }],
    messages: [{ role: "user" as const, content: "Read" }],
  };
  const json: any = await openai.chat.completions.create(req);
  expect(json.choices[0].message.reasoning_content).toBeUndefined();
  expect(json.choices[0].message.tool_calls[0].extra_content).toEqual({
    google: { thought_signature: scriptReasoning(0).opaque },
  });
  const res = await fetch(`${fake.url}/v1beta/openai/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ ...req, stream: true }),
  });
  expect(await res.text()).toContain(`"extra_content":{"google":{"thought_signature":"${scriptReasoning(0).opaque}"}}`);
});
