// The request a coding agent sends on every turn of a long session, in the bench's protocol (chat completions,
// streamed): a long system prompt, a score of tools with JSON schemas, eighty turns of conversation with code, tool
// output and some non-ASCII text. About 180 KB; built the same way every run, so runs compare.

const LINE =
  "The function reads the configuration, validates each field and returns a typed object; errors name the field. ";
const CODE =
  'export function parse(input: string): Config {\n  const raw = JSON.parse(input);\n  if (typeof raw.port !== "number") throw new Error("port: expected a number");\n  return { port: raw.port, host: raw.host ?? "127.0.0.1" };\n}\n';
const OUTPUT = "✓ 42 tests passed — 0 failed (1.84 s)\n  src/config.test.ts … ok\n  src/server.test.ts … ok\n";

function tool(i: number) {
  const properties: Record<string, object> = {};
  for (let j = 0; j < 6; j++)
    properties[`arg_${j}`] = { type: j % 2 ? "integer" : "string", description: `Argument ${j} of tool ${i}. ${LINE}` };
  return {
    type: "function",
    function: {
      name: `tool_${i}`,
      description: `Tool ${i}. ${LINE.repeat(6)}`,
      parameters: { type: "object", properties, required: ["arg_0"] },
    },
  };
}

function turn(i: number) {
  if (i % 2 === 0) return { role: "user", content: `Step ${i}: ${LINE.repeat(14)}\n\`\`\`ts\n${CODE}\`\`\`` };
  return { role: "assistant", content: `Done with step ${i}. ${LINE.repeat(6)}\n${OUTPUT.repeat(4)}` };
}

export function agentBody(): string {
  return JSON.stringify({
    model: "gpt-5.2",
    max_completion_tokens: 4096,
    stream: true,
    messages: [{ role: "system", content: LINE.repeat(200) }, ...Array.from({ length: 80 }, (_, i) => turn(i))],
    tools: Array.from({ length: 20 }, (_, i) => tool(i)),
  });
}
