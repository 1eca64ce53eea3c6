// A call to a tool that takes no parameters: Claude streams it with no input_json_delta (or an empty one), and a
// chat upstream may give it no arguments at all. A Responses client (Codex parses `arguments` as JSON) gets "{}",
// as chat clients already do: "" is not JSON.
import { expect, test } from "bun:test";
import OpenAI from "openai";
import { useEnv } from "../support";

const sse = (events: object[]) => events.map((d: any) => `event: ${d.type}\ndata: ${JSON.stringify(d)}\n\n`).join("");
const CLAUDE_CALL = sse([
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-haiku-4-5",
      content: [],
      usage: { input_tokens: 30, output_tokens: 1 },
    },
  },
  {
    type: "content_block_start",
    index: 0,
    content_block: { type: "tool_use", id: "toolu_01", name: "now", input: {} },
  },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 12 } },
  { type: "message_stop" },
]);
const CHAT_CALL = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1767225661,
  model: "gemini-2.5-flash",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "now" } }],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
});

const e = useEnv();
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: e.gw.url + "/v1", maxRetries: 0 });
const tools = [
  { type: "function" as const, name: "now", parameters: { type: "object", properties: {} }, strict: false },
];
const callOf = (r: OpenAI.Responses.Response) => r.output.find((i) => i.type === "function_call")!;

test("a streamed Claude call to a tool without parameters reaches a Responses client with arguments {}", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "error", status: 200, contentType: "text/event-stream", whole: true, body: CLAUDE_CALL });
  const stream = openai(key).responses.stream({
    model: "claude-haiku-4-5",
    input: "What time is it?",
    tools,
    max_output_tokens: 500,
  });
  let doneArguments = null as string | null;
  stream.on("response.function_call_arguments.done", (ev) => (doneArguments = ev.arguments));
  const call = callOf(await stream.finalResponse());
  expect(doneArguments).toBe("{}");
  expect(call.type === "function_call" && JSON.parse(call.arguments)).toEqual({});
});

test("a chat model's JSON call with no arguments reaches a Responses client with arguments {}", async () => {
  const { key } = await e.gw.account(100);
  e.fake.enqueue({ kind: "error", status: 200, contentType: "application/json", whole: true, body: CHAT_CALL });
  const r = await openai(key).responses.create({
    model: "gemini-2.5-flash",
    input: "What time is it?",
    tools,
    max_output_tokens: 500,
  });
  const call = callOf(r);
  expect(call.type === "function_call" && JSON.parse(call.arguments)).toEqual({});
});
