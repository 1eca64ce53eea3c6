// What a non-streaming answer's generated content measures, per protocol (outputCharsOfBody): the basis of the
// estimate when an answer states no usage (json-answers.e2e.test.ts). Checked on the recorded and synthesized
// answers against a count made from the parsed JSON, block by block; the scanner never parses.
import { expect, test } from "bun:test";
import { protocols } from "../../src/llm/protocols/index";
import { fixtureText, type FixtureName } from "../fakes/fixtures";

const len = (v: unknown) => (typeof v === "string" ? v.length : 0);

function anthropicContent(a: any): number {
  let n = 0;
  // tool_use and server_tool_use (the search query the model wrote): their input, as its input_json deltas stream it
  for (const b of a.content)
    n += len(b.text) + len(b.thinking) + (b.input !== undefined ? JSON.stringify(b.input).length : 0);
  return n;
}

function chatContent(a: any): number {
  let n = 0;
  for (const c of a.choices) {
    const m = c.message;
    n += len(m.content) + len(m.reasoning_content) + len(m.refusal);
    for (const t of m.tool_calls ?? []) n += len(t.function?.arguments);
  }
  return n;
}

function responsesContent(a: any): number {
  let n = 0;
  for (const item of a.output) {
    for (const c of item.content ?? []) n += len(c.text) + len(c.refusal);
    for (const s of item.summary ?? []) n += len(s.text);
    n += len(item.arguments) + len(item.input);
  }
  return n;
}

const cases: Array<[FixtureName, keyof typeof protocols, (a: any) => number]> = [
  ["A_nonstream.json", "anthropic", anthropicContent],
  ["A_nonstream_search.json", "anthropic", anthropicContent],
  ["B_nonstream.json", "chat", chatContent],
  ["B_nonstream_tool.json", "chat", chatContent],
  ["C_nonstream.json", "responses", responsesContent],
  ["C_nonstream_tool.json", "responses", responsesContent],
  ["C_nonstream_search.json", "responses", responsesContent],
];

for (const [name, proto, count] of cases) {
  test(`${name}: the generated content the ${proto} scanner counts is the content the answer carries`, () => {
    const text = fixtureText(name);
    const expected = count(JSON.parse(text));
    expect(expected).toBeGreaterThan(0);
    expect(protocols[proto].outputCharsOfBody(text)).toBe(expected);
  });
}

test("Anthropic: a tool_use input is counted as its JSON text, nested objects and strings with braces included", () => {
  const answer = { content: [{ type: "tool_use", id: "t", name: "f", input: { a: { b: "}{" }, c: [1, { d: '"' }] } }] };
  expect(protocols.anthropic.outputCharsOfBody(JSON.stringify(answer))).toBe(
    JSON.stringify(answer.content[0]!.input).length,
  );
});

test("embeddings carry no generated content", () => {
  expect(protocols.embeddings.outputCharsOfBody(fixtureText("D_float.json"))).toBe(0);
});
