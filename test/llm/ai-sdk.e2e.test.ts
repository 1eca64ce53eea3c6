// The Vercel AI SDK on translated models: `generateText` and `streamText` with a tool and a tool round trip
// (model calls the tool → the SDK runs it → the model answers, two steps under `stopWhen`) through
// `@ai-sdk/anthropic` on a model of each other provider, and through `@ai-sdk/openai` `.chat()` and `.responses()`
// on models whose native protocol is another one. The fake upstream scripts the model in its native protocol
// (agent-script.ts), so both steps cross the translation both ways. Checked: the SDK's result, the tool's input as
// the SDK parsed it, the tool call's id and result reaching the upstream, and each call's charge, from the ledger.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SCRIPT_USAGE, upstreamPathOf, type AgentStep } from "../fakes/agent-script";
import { ledgerOf, MICROS, startEnv, stopEnv, type Env } from "./support";
import { chargeOf, LLMS } from "./translated/clients";

let e: Env;
beforeAll(async () => {
  e = await startEnv();
});
afterAll(() => stopEnv(e));

const ANSWER = "It is sunny in Paris, 21 degrees.";
const STEPS: AgentStep[] = [{ call: { name: "get_weather", input: { location: "Paris" } } }, { text: ANSWER }];
const WEATHER_RESULT = "Sunny, 21 degrees";

const nativePath = (id: string) => upstreamPathOf(LLMS.find((x) => x.id === id)!);

type Sdk = "anthropic" | "openai.chat" | "openai.responses";
const CASES: Array<[Sdk, string]> = [
  ["anthropic", "gpt-5.1"],
  ["anthropic", "gpt-5.2"],
  ["anthropic", "gemini-2.5-flash"],
  ["anthropic", "grok-4.20"],
  ["anthropic", "deepseek-test"],
  ["openai.chat", "claude-haiku-4-5"],
  ["openai.chat", "gpt-5.1"],
  ["openai.chat", "grok-4.20"],
  ["openai.responses", "claude-haiku-4-5"],
  ["openai.responses", "gemini-2.5-flash"],
  ["openai.responses", "gpt-5.2"],
  ["openai.responses", "deepseek-test"],
];

function modelFor(sdk: Sdk, id: string, key: string): LanguageModel {
  if (sdk === "anthropic") return createAnthropic({ baseURL: `${e.gw.url}/v1`, apiKey: key })(id);
  const openai = createOpenAI({ baseURL: `${e.gw.url}/v1`, apiKey: key });
  return sdk === "openai.chat" ? openai.chat(id) : openai.responses(id);
}

for (const [sdk, id] of CASES) {
  test(`AI SDK ${sdk} on ${id}: generateText and streamText with a tool round trip; ids kept; each call charged`, async () => {
    const { accountId, key } = await e.gw.account(1000);
    e.fake.reset();
    e.fake.setScenario({ kind: "script", steps: STEPS });
    const inputs: unknown[] = [];
    const tools = {
      get_weather: tool({
        description: "The current weather for a city",
        inputSchema: jsonSchema<{ location: string }>({
          type: "object",
          properties: { location: { type: "string" } },
          required: ["location"],
        }),
        execute: async (input) => {
          inputs.push(input);
          return WEATHER_RESULT;
        },
      }),
    };
    const ask = {
      model: modelFor(sdk, id, key),
      tools,
      prompt: "What's the weather in Paris?",
      maxOutputTokens: 300,
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    };

    const generated = await generateText(ask);
    expect(generated.text).toBe(ANSWER);
    expect(generated.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);

    let failure: unknown;
    const streamed = streamText({ ...ask, onError: ({ error }) => void (failure = error) });
    let deltas = "";
    for await (const piece of streamed.textStream) deltas += piece;
    expect(failure).toBeUndefined();
    expect(deltas).toBe(ANSWER);
    expect((await streamed.steps).map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);

    expect(inputs).toEqual([{ location: "Paris" }, { location: "Paris" }]);
    const calls = e.fake.requests.filter((q) => q.method === "POST");
    expect(calls.map((q) => q.path)).toEqual(Array(4).fill(nativePath(id)));
    expect(calls.map((q) => JSON.parse(q.body).stream === true)).toEqual([false, false, true, true]);
    for (const second of [calls[1]!, calls[3]!]) {
      expect(second.body).toContain("_script_0"); // the tool call's id, back to the upstream unchanged
      expect(second.body).toContain(WEATHER_RESULT);
    }
    const each = chargeOf(LLMS.find((x) => x.id === id)!, {
      input: SCRIPT_USAGE.input,
      cacheRead: 0,
      cacheWrite: 0,
      output: SCRIPT_USAGE.output,
    });
    const { calls: lines, wallet } = await ledgerOf(e.gw, accountId);
    expect(lines.map((l) => [l.status, l.cost])).toEqual(Array(4).fill(["ok", each]));
    expect(Number(wallet.balance)).toBe(1000 * MICROS - 4 * each);
    expect(Number(wallet.held)).toBe(0);
  });
}
