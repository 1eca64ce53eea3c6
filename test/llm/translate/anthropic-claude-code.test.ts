// What Claude Code 2.1.x really sends on /v1/messages, read into IR for a model that is not Claude: the request
// shapes found by running the CLI against the gateway (agents-translated.e2e.test.ts) pinned here as unit tests.
import { expect, test } from "bun:test";
import { anthropicCodec } from "../../../src/llm/translate/anthropic";

const { client } = anthropicCodec;

test("system-role messages inside `messages` (Claude Code's environment notes) join the system prompt, in order", () => {
  const ir = client.decodeRequest({
    model: "gpt-5.1",
    max_tokens: 32000,
    stream: true,
    system: [{ type: "text", text: "You are Claude Code." }],
    messages: [
      { role: "user", content: [{ type: "text", text: "<system-reminder>attribution</system-reminder>" }] },
      { role: "system", content: [{ type: "text", text: "# Environment\ncwd: /tmp/p" }] },
      { role: "system", content: "Second note" },
      { role: "user", content: "Change the colour to green." },
    ],
  });
  expect(ir.system.map((p) => p.text)).toEqual(["You are Claude Code.", "# Environment\ncwd: /tmp/p", "Second note"]);
  expect(ir.messages.map((m) => m.role)).toEqual(["user", "user"]);
  expect(ir.messages[1]!.parts).toEqual([{ type: "text", text: "Change the colour to green." }]);
});
