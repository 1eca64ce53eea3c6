// The price tiers of the models added to the catalog in November 2026, charged exactly against a fake upstream
// answering in each provider's documented shape, on SQLite and Postgres:
// - Claude Haiku 5.5: a prompt (input, cache reads and cache writes) of up to 100,000 tokens at one set of prices,
//   over 100,000 at another, on every token of the call (its overview page on platform.claude.com);
// - GPT-6.1 Terra and GPT-6 Luna: cache writes at their own price, and over 272K input tokens every token of the
//   call at 2× input and cache prices and 1.5× output (their model pages on developers.openai.com).
import { afterAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { useGatewayOn } from "../support/gateway";
import { dialects, skipNote } from "../support/services";
import { expectCharged } from "../llm/support";
import { startNextAnswerUpstream } from "../fakes/next-answer";

// µcr per token ($1 per million tokens = 1,000 µcr per token), written out from the providers' pages.
const HAIKU = { input: 100, output: 500, cacheRead: 10, cacheWrite: 125, cacheWrite1h: 200 };
const HAIKU_LONG = { input: 500, output: 2500, cacheRead: 50, cacheWrite: 625, cacheWrite1h: 1000 };
const TERRA = { input: 1000, output: 5000, cacheRead: 50, cacheWrite: 1250 };
const TERRA_LONG = { input: 2000, output: 7500, cacheRead: 100, cacheWrite: 2500 };
const LUNA = { input: 100, output: 500, cacheRead: 10, cacheWrite: 125 };
const LUNA_LONG = { input: 200, output: 750, cacheRead: 20, cacheWrite: 250 };

/** Anthropic's usage object: input excludes the cache counts; cache_creation splits writes by lifetime. */
function haikuUsage(input: number) {
  return {
    input_tokens: input,
    cache_read_input_tokens: 30_000,
    cache_creation_input_tokens: 10_000,
    cache_creation: { ephemeral_5m_input_tokens: 6_000, ephemeral_1h_input_tokens: 4_000 },
    output_tokens: 1_000,
  };
}
const haikuCharge = (input: number, p: typeof HAIKU) =>
  input * p.input + 30_000 * p.cacheRead + 6_000 * p.cacheWrite + 4_000 * p.cacheWrite1h + 1_000 * p.output;
const haikuMessage = (input: number) => ({
  id: "msg_h55",
  type: "message",
  role: "assistant",
  model: "claude-haiku-5-5",
  content: [{ type: "text", text: "Sorted." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: haikuUsage(input),
});
function haikuStream(input: number): string {
  const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
  const usage = haikuUsage(input);
  return [
    ev("message_start", {
      message: { ...haikuMessage(input), content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Sorted." } }),
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    ev("message_stop", {}),
  ].join("");
}

/** A Responses answer: input_tokens counts every prompt token; the details say how many were cached or written. */
function responsesAnswer(model: string, input: number) {
  return {
    id: "resp_t1",
    object: "response",
    created_at: 1790000000,
    status: "completed",
    model,
    error: null,
    incomplete_details: null,
    output: [
      {
        id: "msg_t1",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Done.", annotations: [] }],
      },
    ],
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 20_000, cache_write_tokens: 50_000 },
      output_tokens: 2_000,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + 2_000,
    },
  };
}
const responsesCharge = (input: number, p: typeof TERRA) =>
  (input - 70_000) * p.input + 20_000 * p.cacheRead + 50_000 * p.cacheWrite + 2_000 * p.output;

const upstream = startNextAnswerUpstream();
afterAll(() => upstream.stop());

for (const dialect of dialects) {
  describe.skipIf(!dialect.available)(`price tiers of the November 2026 models (${dialect.name})`, () => {
    skipNote("Postgres", dialect.available || dialect.name !== "pg", "new models' price tiers on Postgres");
    const gateway = useGatewayOn(dialect.name, upstream.env);
    const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gateway.gw.url, maxRetries: 0 });
    const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: gateway.gw.url + "/v1", maxRetries: 0 });
    const ask = {
      model: "claude-haiku-5-5",
      max_tokens: 2000,
      messages: [{ role: "user" as const, content: "Sort these." }],
    };

    test("Haiku 5.5, a prompt of exactly 100,000 tokens: every token at the ordinary prices", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ json: haikuMessage(60_000) }); // 60,000 + 30,000 read + 10,000 written = 100,000
      await anthropic(key).messages.create(ask);
      await expectCharged(gateway.gw, accountId, 1000, haikuCharge(60_000, HAIKU));
    });

    test("Haiku 5.5, a prompt of 100,001 tokens: every token of the call, output included, at the higher prices", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ json: haikuMessage(60_001) });
      await anthropic(key).messages.create(ask);
      await expectCharged(gateway.gw, accountId, 1000, haikuCharge(60_001, HAIKU_LONG));
      expect(haikuCharge(60_001, HAIKU_LONG)).toBe(41_750_500);
    });

    test("Haiku 5.5 streamed: the counts of message_start decide the tier", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ sse: haikuStream(60_001) });
      const final = await anthropic(key).messages.stream(ask).finalMessage();
      expect(final.content[0]).toMatchObject({ type: "text", text: "Sorted." });
      await expectCharged(gateway.gw, accountId, 1000, haikuCharge(60_001, HAIKU_LONG));
    });

    for (const [model, short, long] of [
      ["gpt-6.1-terra", TERRA, TERRA_LONG],
      ["gpt-6-luna", LUNA, LUNA_LONG],
    ] as const) {
      test(`${model}: cache writes at their own price below 272K input tokens`, async () => {
        const { accountId, key } = await gateway.gw.account(1000);
        upstream.answer({ json: responsesAnswer(model, 272_000) });
        const r = await openai(key).responses.create({ model, input: "hi", max_output_tokens: 4000 });
        expect(r.output_text).toBe("Done.");
        await expectCharged(gateway.gw, accountId, 1000, responsesCharge(272_000, short));
      });

      test(`${model}: over 272K input tokens every token of the call at the long-context prices`, async () => {
        const { accountId, key } = await gateway.gw.account(1000);
        upstream.answer({ json: responsesAnswer(model, 272_001) });
        await openai(key).responses.create({ model, input: "hi", max_output_tokens: 4000 });
        await expectCharged(gateway.gw, accountId, 1000, responsesCharge(272_001, long));
      });
    }
  });
}
