// Malformed requests and upstream events never crash the Responses codec: a request is either decoded or refused
// with a TranslationError (the seam's 400 naming the field), and an upstream stream of mangled events gives IR
// events or an IR error, never a throw. Seeded mutations of realistic bodies, so a failure replays exactly.
import { describe, expect, test } from "bun:test";
import { TranslationError } from "../../../src/llm/translate/ir";
import { responsesCodec } from "../../../src/llm/translate/responses";
import { rng } from "../../fakes/chunking";
import { fixtureText } from "../../fakes/fixtures";
import { paths } from "./mutations";

const WEIRD = [null, 0, -1, 1.5, "", "x", true, [], {}, [null], [{}], { type: 5 }, { type: "input_text" }, { text: 3 }];

const request = {
  model: "claude-sonnet-4-5",
  instructions: "Be useful.",
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "hi" },
        { type: "input_image", image_url: "data:image/png;base64,AAAA" },
      ],
    },
    { type: "reasoning", summary: [{ type: "summary_text", text: "t" }], encrypted_content: "sy1.anthropic.sig" },
    { type: "function_call", name: "shell", arguments: "{}", call_id: "c1" },
    { type: "function_call_output", call_id: "c1", output: "ok" },
    { type: "custom_tool_call", call_id: "c2", name: "apply_patch", input: "p" },
    { type: "custom_tool_call_output", call_id: "c2", output: [{ type: "input_text", text: "done" }] },
  ],
  tools: [
    { type: "function", name: "shell", parameters: { type: "object" } },
    { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: x" } },
    {
      type: "namespace",
      name: "agents",
      description: "d",
      tools: [{ type: "function", name: "spawn", parameters: { type: "object" } }],
    },
  ],
  tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "shell" }] },
  reasoning: { effort: "low", summary: "auto" },
  text: { format: { type: "json_schema", name: "n", schema: { type: "object" } } },
  max_output_tokens: 100,
  temperature: 0.3,
  stream: true,
};

function setAt(root: any, path: Array<string | number>, value: unknown): void {
  let o = root;
  for (const k of path.slice(0, -1)) {
    o = o?.[k];
    if (typeof o !== "object" || o === null) return; // an earlier mutation replaced this branch
  }
  o[path.at(-1)!] = value;
}

describe("decodeRequest on mutated requests", () => {
  test("every field replaced by every odd value: decoded or a TranslationError, never another throw", () => {
    const all = paths(request);
    let refused = 0;
    for (const p of all) {
      for (const weird of WEIRD) {
        const body = structuredClone(request);
        setAt(body, p, structuredClone(weird));
        try {
          responsesCodec.client.decodeRequest(body);
        } catch (e) {
          if (!(e instanceof TranslationError)) throw new Error(`${p.join(".")} = ${JSON.stringify(weird)}: ${e}`);
          refused++;
        }
      }
    }
    expect(refused).toBeGreaterThan(0);
  });

  test("a decoded mutation still encodes for a Responses upstream without throwing", () => {
    const random = rng(21);
    const all = paths(request);
    for (let i = 0; i < 300; i++) {
      const body = structuredClone(request);
      for (let k = 0; k < 3; k++)
        setAt(
          body,
          all[Math.floor(random() * all.length)]!,
          structuredClone(WEIRD[Math.floor(random() * WEIRD.length)]),
        );
      let ir;
      try {
        ir = responsesCodec.client.decodeRequest(body);
      } catch (e) {
        expect(e).toBeInstanceOf(TranslationError);
        continue;
      }
      responsesCodec.upstream.encodeRequest(ir, { provider: "openai", dialect: {} });
    }
  });
});

describe("streamDecoder on mangled events", () => {
  test("each event of the recorded streams with its fields replaced: IR events or an IR error, never a throw", () => {
    const random = rng(7);
    const events = ["C_stream.sse", "C_stream_failed.sse", "C_stream_error.sse"].flatMap((f) =>
      fixtureText(f as any)
        .split("\n\n")
        .filter(Boolean)
        .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)![1]! })),
    );
    for (let round = 0; round < 200; round++) {
      const dec = responsesCodec.upstream.streamDecoder({ provider: "openai", dialect: {} });
      for (const e of events) {
        const j = JSON.parse(e.data);
        const keys = paths(j);
        if (keys.length && random() < 0.5)
          setAt(
            j,
            keys[Math.floor(random() * keys.length)]!,
            structuredClone(WEIRD[Math.floor(random() * WEIRD.length)]),
          );
        for (const out of dec.feed(e.event, JSON.stringify(j))) expect(typeof out.type).toBe("string");
      }
      dec.end();
    }
  });
});
