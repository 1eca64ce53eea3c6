// Grok 4.20's price tier, charged exactly against a fake xAI answering in its documented Responses shape, on SQLite
// and Postgres. Its model page on docs.x.ai prices a prompt of under 200k tokens at $1.25 in / $0.20 cached /
// $2.50 out and bills "requests whose prompt reaches 200k tokens" at $2.50 / $0.40 / $5.00 "for all tokens in the
// request"; xAI's prompt-caching page counts cached tokens inside input_tokens (input_tokens_details.cached_tokens).
import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { useGatewayOn } from "../support/gateway";
import { dialects, skipNote } from "../support/services";
import { expectCharged } from "../llm/support";
import { startNextAnswerUpstream } from "../fakes/next-answer";

// µcr per token ($1 per million tokens = 1,000 µcr per token), written out from the model page.
const GROK = { input: 1250, output: 2500, cacheRead: 200 };
const GROK_LONG = { input: 2500, output: 5000, cacheRead: 400 };
const CACHED = 50_000;
const OUTPUT = 2_000;

/** xAI's Responses answer: input_tokens counts every prompt token, cached ones included. */
function grokAnswer(prompt: number) {
  return {
    id: "resp_g420",
    object: "response",
    created_at: 1790000000,
    status: "completed",
    model: "grok-4.20-0309-reasoning",
    error: null,
    incomplete_details: null,
    output: [
      {
        id: "msg_g420",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Done.", annotations: [] }],
      },
    ],
    usage: {
      input_tokens: prompt,
      input_tokens_details: { cached_tokens: CACHED },
      output_tokens: OUTPUT,
      output_tokens_details: { reasoning_tokens: 500 },
      total_tokens: prompt + OUTPUT,
    },
  };
}
const grokCharge = (prompt: number, p: typeof GROK) =>
  (prompt - CACHED) * p.input + CACHED * p.cacheRead + OUTPUT * p.output;

function grokStream(prompt: number): string {
  const answer = grokAnswer(prompt);
  const message = answer.output[0]!;
  const part = message.content[0]!;
  const at = { item_id: message.id, output_index: 0, content_index: 0 };
  const ev = (data: { type: string; [field: string]: unknown }) =>
    `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  return [
    ev({ type: "response.created", response: { ...answer, status: "in_progress", output: [], usage: null } }),
    ev({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...message, status: "in_progress", content: [] },
    }),
    ev({ type: "response.content_part.added", ...at, part: { ...part, text: "" } }),
    ev({ type: "response.output_text.delta", ...at, delta: part.text }),
    ev({ type: "response.output_text.done", ...at, text: part.text }),
    ev({ type: "response.content_part.done", ...at, part }),
    ev({ type: "response.output_item.done", output_index: 0, item: message }),
    ev({ type: "response.completed", response: answer }),
  ].join("");
}

const upstream = startNextAnswerUpstream();
afterAll(() => upstream.stop());
const env = { ...upstream.env, XAI_API_KEY: "xai-fake", XAI_BASE_URL: upstream.env.OPENAI_BASE_URL! };

for (const dialect of dialects) {
  describe.skipIf(!dialect.available)(`Grok 4.20's 200k tier (${dialect.name})`, () => {
    skipNote("Postgres", dialect.available || dialect.name !== "pg", "Grok 4.20's price tier on Postgres");
    const gateway = useGatewayOn(dialect.name, env);
    const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: gateway.gw.url + "/v1", maxRetries: 0 });
    const ask = { model: "grok-4.20", input: "Summarise the filing.", max_output_tokens: 4000 };

    test("a prompt of 199,999 tokens (cached ones included): every token at the ordinary prices", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ json: grokAnswer(199_999) });
      const r = await openai(key).responses.create(ask);
      expect(r.output_text).toBe("Done.");
      await expectCharged(gateway.gw, accountId, 1000, grokCharge(199_999, GROK));
      expect(grokCharge(199_999, GROK)).toBe(202_498_750);
    });

    test("a prompt that reaches 200,000 tokens: every token of the call, output and cache reads too, at the higher prices", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ json: grokAnswer(200_000) });
      await openai(key).responses.create(ask);
      await expectCharged(gateway.gw, accountId, 1000, grokCharge(200_000, GROK_LONG));
      expect(grokCharge(200_000, GROK_LONG)).toBe(405_000_000);
    });

    test("streamed: the usage of response.completed decides the tier", async () => {
      const { accountId, key } = await gateway.gw.account(1000);
      upstream.answer({ sse: grokStream(200_000) });
      const stream = openai(key).responses.stream(ask);
      const final = await stream.finalResponse();
      expect(final.output_text).toBe("Done.");
      await expectCharged(gateway.gw, accountId, 1000, grokCharge(200_000, GROK_LONG));
    });
  });
}
