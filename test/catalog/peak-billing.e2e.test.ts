// DeepSeek's time-of-day prices (pricing.peak), charged exactly against a fake DeepSeek answering in its documented
// Chat Completions shape (prompt_cache_hit_tokens / prompt_cache_miss_tokens), on SQLite and Postgres: a call sent
// upstream in peak hours (weekdays 09:00–12:00 and 14:00–18:00 Beijing time) at the peak prices, one sent at any
// other time at the off-peak ones, and the hold at the peak prices whenever the call is made.
import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { useGatewayOn } from "../support/gateway";
import { dialects, skipNote } from "../support/services";
import { expectCharged } from "../llm/support";

// µcr per token ($1 per million tokens = 1,000 µcr per token), from DeepSeek's pricing page.
const FLASH_OFF_PEAK = { input: 150, output: 600, cacheRead: 3 };
const FLASH_PEAK = { input: 300, output: 1200, cacheRead: 6 };
const PRO_OFF_PEAK = { input: 660, output: 1980, cacheRead: 22 };
const PRO_PEAK = { input: 1320, output: 3960, cacheRead: 44 };

// Wednesday 2026-11-25 in Beijing time (UTC+8): 10:30 is peak, 12:30 (lunch) and 19:00 are not; Saturday never is.
const WED_1030 = Date.parse("2026-11-25T02:30:00Z");
const WED_1230 = Date.parse("2026-11-25T04:30:00Z");
const WED_1900 = Date.parse("2026-11-25T11:00:00Z");
const SAT_1030 = Date.parse("2026-11-28T02:30:00Z");

/** DeepSeek's usage: prompt_tokens counts hits and misses; the hits are stated apart (no prompt_tokens_details). */
const usage = { hit: 40_000, miss: 9_000, output: 3_000 };
const dsUsage = {
  prompt_tokens: usage.hit + usage.miss,
  completion_tokens: usage.output,
  total_tokens: usage.hit + usage.miss + usage.output,
  prompt_cache_hit_tokens: usage.hit,
  prompt_cache_miss_tokens: usage.miss,
  completion_tokens_details: { reasoning_tokens: 1_000 },
};
const charge = (p: typeof FLASH_PEAK) => usage.miss * p.input + usage.hit * p.cacheRead + usage.output * p.output;
const completion = (model: string) => ({
  id: "chatcmpl-peak",
  object: "chat.completion",
  created: 1795000000,
  model,
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Done.", reasoning_content: "Short." },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: dsUsage,
});
function completionStream(model: string): string {
  const chunk = (data: object) =>
    `data: ${JSON.stringify({ id: "chatcmpl-peak", object: "chat.completion.chunk", created: 1795000000, model, ...data })}\n\n`;
  return [
    chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "Done." }, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    chunk({ choices: [], usage: dsUsage }),
    "data: [DONE]\n\n",
  ].join("");
}

// A fake DeepSeek: answers every call with the completion of the model asked for; `onCall` runs as a call arrives.
let onCall = () => {};
const fake = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body: any = await req.json();
    onCall();
    if (body.stream)
      return new Response(completionStream(body.model), { headers: { "content-type": "text/event-stream" } });
    return Response.json(completion(body.model));
  },
});
afterAll(() => fake.stop(true));
const env = { DEEPSEEK_API_KEY: "ds-fake", DEEPSEEK_BASE_URL: `http://127.0.0.1:${fake.port}` };

for (const dialect of dialects) {
  describe.skipIf(!dialect.available)(`DeepSeek's peak and off-peak prices (${dialect.name})`, () => {
    skipNote("Postgres", dialect.available || dialect.name !== "pg", "DeepSeek's time-of-day prices on Postgres");
    const gateway = useGatewayOn(dialect.name, env);
    const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: gateway.gw.url + "/v1", maxRetries: 0 });
    const at = (ms: number) => {
      gateway.gw.ctx.clock = () => ms;
    };
    afterAll(() => {
      gateway.gw.ctx.clock = undefined;
      onCall = () => {};
    });

    for (const [when, ms, prices] of [
      ["Wednesday 10:30 Beijing time (peak)", WED_1030, FLASH_PEAK],
      ["Wednesday 12:30 Beijing time (off-peak: the lunch break)", WED_1230, FLASH_OFF_PEAK],
      ["Wednesday 19:00 Beijing time (off-peak)", WED_1900, FLASH_OFF_PEAK],
      ["Saturday 10:30 Beijing time (off-peak: weekends are)", SAT_1030, FLASH_OFF_PEAK],
    ] as const) {
      test(`deepseek-flash on Responses, sent ${when}`, async () => {
        at(ms);
        const { accountId, key } = await gateway.gw.account(1000);
        const r = await openai(key).responses.create({ model: "deepseek-flash", input: "hi", max_output_tokens: 8000 });
        expect(r.output_text).toBe("Done.");
        await expectCharged(gateway.gw, accountId, 1000, charge(prices));
      });
    }

    test("the peak charge is exactly twice the off-peak one, as DeepSeek's page says", () => {
      expect(charge(FLASH_PEAK)).toBe(2 * charge(FLASH_OFF_PEAK));
      expect(charge(FLASH_PEAK)).toBe(6_540_000);
      expect(charge(PRO_PEAK)).toBe(2 * charge(PRO_OFF_PEAK));
    });

    test("deepseek-v4-pro streamed on Chat Completions: peak and off-peak", async () => {
      for (const [ms, prices] of [
        [WED_1030, PRO_PEAK],
        [WED_1900, PRO_OFF_PEAK],
      ] as const) {
        at(ms);
        const { accountId, key } = await gateway.gw.account(1000);
        const stream = await openai(key).chat.completions.create({
          model: "deepseek-v4-pro",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 8000,
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = "";
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
        expect(text).toBe("Done.");
        await expectCharged(gateway.gw, accountId, 1000, charge(prices));
      }
    });

    test("the period the call was sent upstream in decides, not the one its answer ends in", async () => {
      at(Date.parse("2026-11-25T03:59:59Z")); // 11:59:59 Beijing time: the last second of the morning peak
      onCall = () => at(WED_1230); // the answer comes back after 12:00
      const { accountId, key } = await gateway.gw.account(1000);
      await openai(key).responses.create({ model: "deepseek-flash", input: "hi", max_output_tokens: 8000 });
      await expectCharged(gateway.gw, accountId, 1000, charge(FLASH_PEAK));
      onCall = () => {};
    });

    test("off-peak too, the hold is sized at the peak prices: a wallet that only covers the off-peak hold is refused", async () => {
      at(WED_1900);
      // 100,000 output tokens hold 60 credits at the off-peak output price and 120 at the peak one (plus input).
      const { key } = await gateway.gw.account(100);
      const calls = { n: 0 };
      onCall = () => calls.n++;
      const r = await gateway.gw.post(key, "/v1/responses", {
        model: "deepseek-flash",
        input: "hi",
        max_output_tokens: 100_000,
      });
      expect(r.status).toBe(402);
      expect(calls.n).toBe(0);
      onCall = () => {};
    });
  });
}
