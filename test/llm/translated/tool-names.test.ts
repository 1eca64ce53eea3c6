// Long tool names (translate/tool-names.ts): MCP tool names over 64 characters, which OpenAI refuses, go upstream
// shortened (deterministically: the next turn's history names the same tool) and come back under the client's own
// name, in JSON and streamed answers. Through the gateway with the official SDKs against the scripted fake upstream.
import { afterAll, beforeAll, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startEnv, stopEnv, type Env } from "../support";
import { MAX_TOOL_NAME, shortToolName } from "../../../src/llm/translate/tool-names";

const LONG = "mcp__claude_in_chrome_browser_automation_server__take_a_screenshot_of_the_current_tab";
const SHORT = shortToolName(LONG);
const schema = { type: "object" as const, properties: { tab: { type: "string" } } };

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));
const lastUpstream = () => JSON.parse(e.fake.requests.at(-1)!.body);

test("the short form is deterministic, at most 64 characters, and tells names with one start apart", () => {
  expect(LONG.length).toBeGreaterThan(MAX_TOOL_NAME);
  expect(SHORT.length).toBe(MAX_TOOL_NAME);
  expect(shortToolName(LONG)).toBe(SHORT);
  expect(shortToolName(LONG + "_2")).not.toBe(SHORT);
  expect(shortToolName("Read")).toBe("Read");
});

test("Claude Code's long MCP tool on a GPT model (Responses upstream): shortened up, restored back, JSON and streamed, two turns", async () => {
  const { key } = await e.gw.account(100);
  const client = new Anthropic({ apiKey: key, baseURL: e.gw.url, maxRetries: 0 });
  e.fake.setScenario({ kind: "script", steps: [{ call: { name: SHORT, input: { tab: "1" } } }, { text: "Done." }] });
  const tools = [
    { name: LONG, description: "Screenshot", input_schema: schema },
    { name: "Read", description: "Read a file", input_schema: schema },
  ];
  const ask = { role: "user" as const, content: "Take a screenshot." };
  for (const stream of [false, true]) {
    const req = { model: "gpt-5.1", max_tokens: 500, tools, messages: [ask] };
    const m = stream ? await client.messages.stream(req).finalMessage() : await client.messages.create(req);
    const call: any = m.content.find((b) => b.type === "tool_use");
    expect(call?.name).toBe(LONG);
    expect(lastUpstream().tools.map((t: any) => t.name)).toEqual([SHORT, "Read"]);

    await client.messages.create({
      ...req,
      messages: [
        ask,
        { role: "assistant", content: m.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "png" }] },
      ],
    });
    const history = lastUpstream().input.find((i: any) => i.type === "function_call");
    expect(history.name).toBe(SHORT);
    expect(e.fake.requests.at(-1)!.body).not.toContain(LONG);
  }
});

test("a chat client's long tool on Claude (Anthropic upstream), streamed: the tool_calls delta names the client's tool", async () => {
  const { key } = await e.gw.account(100);
  const client = new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
  e.fake.setScenario({ kind: "script", steps: [{ call: { name: SHORT, input: { tab: "1" } } }, { text: "Done." }] });
  const s = await client.chat.completions.create({
    model: "claude-sonnet-4-5",
    max_completion_tokens: 500,
    stream: true,
    tools: [{ type: "function", function: { name: LONG, parameters: schema } }],
    messages: [{ role: "user", content: "Take a screenshot." }],
  });
  const names: string[] = [];
  for await (const c of s)
    for (const t of c.choices[0]?.delta?.tool_calls ?? []) if (t.function?.name) names.push(t.function.name);
  expect(names).toEqual([LONG]);
  expect(lastUpstream().tools.map((t: any) => t.name)).toEqual([SHORT]);
});
