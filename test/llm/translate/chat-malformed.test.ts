// Every value at every place of a full chat request, and of a chat answer, replaced by junk: the client side
// answers with a TranslationError or a request, the upstream side with an answer or IR events — never a TypeError.
import { expect, test } from "bun:test";
import { chatCodec } from "../../../src/llm/translate/chat";
import { TranslationError } from "../../../src/llm/translate/ir";
import { fixtureJson } from "../../fakes/fixtures";
import { paths } from "./mutations";

const JUNK: unknown[] = [null, 0, -1, 1.5, "", "x", true, [], {}, [null], [{}], { type: "text" }];

function replaced(v: any, path: Array<string | number>, value: unknown): any {
  const copy = structuredClone(v);
  let o = copy;
  for (const k of path.slice(0, -1)) o = o[k];
  o[path.at(-1)!] = value;
  return copy;
}

const REQUEST = {
  model: "claude-x",
  messages: [
    { role: "system", content: "Be terse." },
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AA==", detail: "low" } },
      ],
    },
    {
      role: "assistant",
      content: "ok",
      reasoning_details: [{ type: "reasoning.text", text: "t", signature: "sy1.anthropic.S" }],
      tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "r" }] },
  ],
  tools: [
    { type: "function", function: { name: "f", description: "d", parameters: { type: "object" }, strict: true } },
  ],
  tool_choice: { type: "function", function: { name: "f" } },
  max_completion_tokens: 10,
  stop: ["x"],
  response_format: { type: "json_schema", json_schema: { name: "n", schema: {} } },
  stream: true,
  stream_options: { include_usage: true },
};

test("junk anywhere in a chat request is a TranslationError or a request, never another exception", () => {
  let refused = 0;
  for (const path of paths(REQUEST)) {
    for (const junk of JUNK) {
      const body = replaced(REQUEST, path, junk);
      try {
        chatCodec.client.decodeRequest(body);
      } catch (e) {
        if (!(e instanceof TranslationError))
          throw new Error(`${path.join(".")} = ${JSON.stringify(junk)}: ${String(e)}`);
        refused++;
      }
    }
  }
  expect(refused).toBeGreaterThan(100);
  for (const body of [null, [], "x", 1])
    expect(() => chatCodec.client.decodeRequest(body as any)).toThrow(TranslationError);
});

test("junk anywhere in a chat answer or stream chunk decodes without throwing", () => {
  const target = { provider: "gemini", dialect: { thoughtSignatures: true } };
  const answers = [fixtureJson("B_nonstream.json"), fixtureJson("B_nonstream_tool.json")];
  for (const answer of answers) {
    for (const path of paths(answer)) {
      for (const junk of JUNK) {
        const json = replaced(answer, path, junk);
        chatCodec.upstream.decodeAnswer(json, target);
        const d = chatCodec.upstream.streamDecoder(target);
        // The answer's message as a delta, then a finish, then [DONE]: a chunk of the same shapes.
        const chunk = {
          ...json,
          choices: (Array.isArray(json.choices) ? json.choices : []).map((c: any) => ({ ...c, delta: c?.message })),
        };
        d.feed(undefined, JSON.stringify(chunk));
        d.feed(undefined, "[DONE]");
        d.end();
      }
    }
  }
  for (const data of [
    "null",
    "1",
    '"x"',
    "[]",
    '{"choices":null}',
    '{"choices":[null]}',
    '{"error":"x"}',
    '{"choices":[{"delta":{"tool_calls":[null,1,{"index":"a"}]}}]}',
  ]) {
    const d = chatCodec.upstream.streamDecoder(target);
    expect(() => [...d.feed(undefined, data), ...d.end()]).not.toThrow();
  }
});
