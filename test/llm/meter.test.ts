// The metering verdicts on odd usage: an upstream stating usage too large to price is charged the hold (the most
// the caller agreed to), never an exception that would leave the call's reservation unfinished; and a defect in
// working out a verdict releases the call instead of leaving it.
import { describe, expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";
import { usageVerdict, streamVerdict, planHold, verdictOr } from "../../src/llm/meter";
import { protocols } from "../../src/llm/protocols/index";
import { NO_PAID_TOOLS } from "../../src/llm/protocols/paid-tools";

const model = loadCatalog().llm.get("claude-opus-4-5")!;
const body = { model: "claude-opus-4-5", max_tokens: 1000, messages: [{ role: "user", content: "Hi" }] };
const plan = planHold(protocols.anthropic, body, Buffer.byteLength(JSON.stringify(body)), model, NO_PAID_TOOLS);
const tap = (events: string) => {
  const t = protocols.anthropic.createStreamTap({ stripUsageChunk: false });
  t.feed(new TextEncoder().encode(events));
  return t.end();
};

describe("usage too large to price", () => {
  test("a JSON answer stating 1e300 output tokens: charged the hold, the recorded counts capped", () => {
    const v = usageVerdict({ input: 10, output: 1e300, cacheRead: 0, cacheWrite: 0 }, model, plan);
    expect(v).toMatchObject({ outcome: "estimated", charge: plan.amount });
    expect(v.usage!.output).toBe(Number.MAX_SAFE_INTEGER);
    expect(v.error).toContain("out of range");
  });

  test("a stream whose message_delta states 1e400 output tokens (Infinity once parsed): the count is ignored, priced as stated before", () => {
    const events =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":21,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":1e400}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const v = streamVerdict(tap(events), "end", model, plan);
    expect(v.outcome).toBe("ok");
    expect(v.usage).toEqual({ input: 21, output: 1, cacheRead: 0, cacheWrite: 0 });
    expect(v.charge).toBe(21 * 5000 + 1 * 25000);
  });

  test("a stream stating 1e300 output tokens: charged the hold", () => {
    const events =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":21,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":1e300}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(streamVerdict(tap(events), "end", model, plan)).toMatchObject({ outcome: "estimated", charge: plan.amount });
  });
});

test("a verdict that cannot be worked out releases the call (and is reported), never throws", () => {
  const logged: string[] = [];
  const v = verdictOr(
    () => {
      throw new TypeError("boom");
    },
    (e) => logged.push(e),
  );
  expect(v).toEqual({ outcome: "failed", charge: null, usage: null, error: "metering failed; released" });
  expect(logged).toEqual(["boom"]);
});

describe("the hold for chat's n choices", () => {
  const gpt = loadCatalog().llm.get("gpt-5.2")!;
  const hold = (b: Record<string, unknown>) => planHold(protocols.chat, b, 100, gpt, NO_PAID_TOOLS);
  const max = gpt.max_output_tokens!;

  test("each choice may produce its limit: the output part of the hold is limit × n", () => {
    expect(hold({ max_completion_tokens: 100, n: 8 }).outputTokens).toBe(800);
    expect(hold({ max_completion_tokens: 100 }).outputTokens).toBe(100);
  });

  test("a limit above the model's maximum is capped per choice, then multiplied (not capped after multiplying)", () => {
    expect(hold({ max_completion_tokens: max * 10, n: 8 }).outputTokens).toBe(max * 8);
  });

  test("no limit: the model's maximum for each of the n choices", () => {
    expect(hold({ n: 8 }).outputTokens).toBe(max * 8);
    expect(hold({ n: 8 }).amount).toBe(hold({}).amount + 7 * max * gpt.prices.output);
  });
});

describe("Responses requests whose input is stored upstream", () => {
  const gpt = loadCatalog().llm.get("gpt-4.1")!;
  const hold = (b: Record<string, unknown>) =>
    planHold(protocols.responses, b, Buffer.byteLength(JSON.stringify(b)), gpt, NO_PAID_TOOLS);

  test("previous_response_id, conversation or a stored prompt: the input part of the hold is the context window", () => {
    expect(gpt.context_window).toBeGreaterThan(100_000);
    for (const b of [{ previous_response_id: "resp_1" }, { conversation: "conv_1" }, { prompt: { id: "pmpt_1" } }]) {
      expect(hold({ model: "gpt-4.1", input: "and then?", max_output_tokens: 100, ...b }).inputTokens).toBe(
        gpt.context_window!,
      );
    }
    expect(hold({ model: "gpt-4.1", input: "and then?", max_output_tokens: 100 }).inputTokens).toBeLessThan(100);
  });

  test("background mode is refused before any hold: it answers without usage", () => {
    expect(() => protocols.responses.refuseUnmeterable!({ background: true })).toThrow("background");
    expect(() => protocols.responses.refuseUnmeterable!({ background: false })).not.toThrow();
  });
});
