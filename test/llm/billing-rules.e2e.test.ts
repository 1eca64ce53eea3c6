// Billing rules the 2026 models bring, charged exactly against a fake upstream answering in the documented shape, on
// SQLite and Postgres:
// - Anthropic server-side compaction (compact_20260112): usage.iterations lists every sampling step and all are
//   billed; the top-level counts are only the last step. Each step is priced on its own (a long-context tier applies
//   to the long step only).
// - OpenAI Responses cache writes (input_tokens_details.cache_write_tokens) at the model's cache-write price, and the
//   272K long-context tier of GPT-6.2 Sol on every token of the call.
import { afterAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { useGatewayOn } from "../support/gateway";
import { dialects, skipNote } from "../support/services";
import { expectCharged } from "./support";
import { jsonOf, type AnswerOf } from "../support/json";
import type { UsageList } from "../../src/llm/usage-api";
import { startNextAnswerUpstream } from "../fakes/next-answer";

// µcr per token, from src/catalog/models.json. claude-sonnet-4-5: prompts over 200k tokens at long-context prices.
const SONNET = { input: 3000, output: 15000, cacheRead: 300 };
const SONNET_LONG = { input: 6000, output: 22500 };
// gpt-6.2-sol: $2 / $10, cached $0.10, cache writes $2.50; over 272K input tokens $4 / $15, $0.20, $5.
const SOL = { input: 2000, output: 10000, cacheRead: 100, cacheWrite: 2500 };
const SOL_LONG = { input: 4000, output: 15000, cacheRead: 200, cacheWrite: 5000 };

// The documented compaction answer: a compaction step that read the whole conversation, then the answer.
const ITERATIONS = [
  { type: "compaction", input_tokens: 210_000, output_tokens: 3_500 },
  { type: "message", input_tokens: 23_000, output_tokens: 1_000, cache_read_input_tokens: 1_000 },
];
const TOP_LEVEL = {
  input_tokens: 23_000,
  output_tokens: 1_000,
  cache_read_input_tokens: 1_000,
  cache_creation_input_tokens: 0,
};
const COMPACTED =
  210_000 * SONNET_LONG.input +
  3_500 * SONNET_LONG.output +
  23_000 * SONNET.input +
  1_000 * SONNET.output +
  1_000 * SONNET.cacheRead;
const compactionMessage = {
  id: "msg_compact1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [
    { type: "compaction", content: "Summary of the conversation so far." },
    { type: "text", text: "Continuing from the summary." },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { ...TOP_LEVEL, iterations: ITERATIONS },
};
function compactionStream(): string {
  const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
  return [
    ev("message_start", {
      message: { ...compactionMessage, content: [], stop_reason: null, usage: { ...TOP_LEVEL, output_tokens: 1 } },
    }),
    ev("content_block_start", { index: 0, content_block: { type: "compaction", content: "" } }),
    ev("content_block_delta", {
      index: 0,
      delta: { type: "compaction_delta", content: "Summary of the conversation so far." },
    }),
    ev("content_block_stop", { index: 0 }),
    ev("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 1, delta: { type: "text_delta", text: "Continuing from the summary." } }),
    ev("content_block_stop", { index: 1 }),
    ev("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { ...TOP_LEVEL, iterations: ITERATIONS },
    }),
    ev("message_stop", {}),
  ].join("");
}

function responsesAnswer(usage: object) {
  return {
    id: "resp_cw1",
    object: "response",
    created_at: 1790000000,
    status: "completed",
    model: "gpt-6.2-sol",
    error: null,
    incomplete_details: null,
    output: [
      {
        id: "msg_cw1",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Done.", annotations: [] }],
      },
    ],
    usage,
  };
}
const SHORT_USAGE = {
  input_tokens: 10_000,
  input_tokens_details: { cached_tokens: 2_000, cache_write_tokens: 5_000 },
  output_tokens: 500,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 10_500,
};
const SHORT = 3_000 * SOL.input + 2_000 * SOL.cacheRead + 5_000 * SOL.cacheWrite + 500 * SOL.output;
const LONG_USAGE = {
  input_tokens: 300_000,
  input_tokens_details: { cached_tokens: 100_000, cache_write_tokens: 150_000 },
  output_tokens: 2_000,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 302_000,
};
const LONG =
  50_000 * SOL_LONG.input + 100_000 * SOL_LONG.cacheRead + 150_000 * SOL_LONG.cacheWrite + 2_000 * SOL_LONG.output;

/** The fake upstream: each test sets the answer it gives next. */
const upstream = startNextAnswerUpstream();
afterAll(() => upstream.stop());

for (const dialect of dialects) {
  describe.skipIf(!dialect.available)(`billing rules of the 2026 models (${dialect.name})`, () => {
    skipNote("Postgres", dialect.available || dialect.name !== "pg", "billing rules on Postgres");
    const gateway = useGatewayOn(dialect.name, upstream.env);
    const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gateway.gw.url, maxRetries: 0 });
    const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: gateway.gw.url + "/v1", maxRetries: 0 });
    const ask = {
      model: "claude-sonnet-4-5",
      max_tokens: 4096,
      messages: [{ role: "user" as const, content: "Keep going." }],
    };

    test("compaction, non-streaming: every iteration is charged, the long one at long-context prices", async () => {
      const { accountId, key } = await gateway.gw.account(5000);
      upstream.answer({ json: compactionMessage });
      const msg = await anthropic(key).messages.create(ask);
      expect(msg.usage.input_tokens).toBe(23_000); // the client sees the upstream's usage unchanged
      await expectCharged(gateway.gw, accountId, 5000, COMPACTED);
      // Priced as one 234k-token prompt it would all be at long-context prices: the steps are priced apart.
      expect(COMPACTED).toBeLessThan(233_000 * SONNET_LONG.input + 4_500 * SONNET_LONG.output + 1_000 * 600);
    });

    test("compaction, streaming: the iterations in message_delta are charged the same", async () => {
      const { accountId, key } = await gateway.gw.account(5000);
      upstream.answer({ sse: compactionStream() });
      const final = await anthropic(key).messages.stream(ask).finalMessage();
      expect(final.content.at(-1)).toMatchObject({ type: "text", text: "Continuing from the summary." });
      await expectCharged(gateway.gw, accountId, 5000, COMPACTED);
    });

    test("Responses cache writes at GPT-6.2 Sol's cache-write price", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ json: responsesAnswer(SHORT_USAGE) });
      const r = await openai(key).responses.create({ model: "gpt-6.2-sol", input: "hi", max_output_tokens: 1000 });
      expect(r.output_text).toBe("Done.");
      await expectCharged(gateway.gw, accountId, 1000, SHORT);
      const { data } = await jsonOf<AnswerOf<typeof UsageList>>(
        await fetch(`${gateway.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } }),
      );
      expect(data[0]!.usage).toMatchObject({
        input_tokens: 3_000,
        cache_read_tokens: 2_000,
        cache_write_tokens: 5_000,
        output_tokens: 500,
      });
    });

    test("a prompt over 272K tokens: every token of the call at GPT-6.2 Sol's long-context prices", async () => {
      const { accountId, key } = await gateway.gw.account(5000);
      upstream.answer({ json: responsesAnswer(LONG_USAGE) });
      await openai(key).responses.create({ model: "gpt-6.2-sol", input: "hi", max_output_tokens: 4000 });
      await expectCharged(gateway.gw, accountId, 5000, LONG);
    });
  });
}
