// Long-context prices: a call whose prompt (input, cached or not) is longer than a model's threshold is billed at
// its long-context prices for every token, as Gemini Pro, Claude Sonnet's 1M context and Grok bill; the hold
// follows the tier its estimate falls in. Prices written out from src/catalog/models.json, µcr per token.
import { expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";
import { usageVerdict, planHold } from "../../src/llm/meter";
import { protocols } from "../../src/llm/protocols/index";
import { NO_PAID_TOOLS } from "../../src/llm/protocols/paid-tools";

const catalog = loadCatalog().llm;
const geminiPro = catalog.get("gemini-2.5-pro")!; // $1.25 / $10 / cache read $0.125; over 200k: $2.50 / $15 / $0.25
const sonnet = catalog.get("claude-sonnet-4-5")!; // $3 / $15, cache read $0.30, write $3.75; over 200k: $6 / $22.50, $0.60, $7.50
const plan = (model = geminiPro) => planHold(protocols.chat, {}, 3000, model, NO_PAID_TOOLS);

test("Gemini 2.5 Pro: up to 200,000 prompt tokens the ordinary prices; one more and every token at the long-context ones", () => {
  const at = usageVerdict({ input: 150_000, cacheRead: 50_000, cacheWrite: 0, output: 1000 }, geminiPro, plan());
  expect(at.charge).toBe(150_000 * 1250 + 50_000 * 125 + 1000 * 10_000);
  const over = usageVerdict({ input: 150_001, cacheRead: 50_000, cacheWrite: 0, output: 1000 }, geminiPro, plan());
  expect(over.charge).toBe(150_001 * 2500 + 50_000 * 250 + 1000 * 15_000);
});

test("Claude Sonnet with its 1M context: cache reads and writes count toward the 200,000 and are billed at their long prices", () => {
  const v = usageVerdict({ input: 100, cacheRead: 150_000, cacheWrite: 60_000, output: 2000 }, sonnet, plan(sonnet));
  expect(v.charge).toBe(100 * 6000 + 150_000 * 600 + 60_000 * 7500 + 2000 * 22_500);
  const short = usageVerdict(
    { input: 100, cacheRead: 150_000, cacheWrite: 40_000, output: 2000 },
    sonnet,
    plan(sonnet),
  );
  expect(short.charge).toBe(100 * 3000 + 150_000 * 300 + 40_000 * 3750 + 2000 * 15_000);
});

test("the hold prices an estimate over the threshold at the long-context prices", () => {
  const body = { model: "gemini-2.5-pro", max_completion_tokens: 1000 };
  const small = planHold(protocols.chat, body, 300_000, geminiPro, NO_PAID_TOOLS); // 100,000 tokens estimated
  expect(small.amount).toBe(100_000 * 1250 + 1000 * 10_000);
  const large = planHold(protocols.chat, body, 900_000, geminiPro, NO_PAID_TOOLS); // 300,000 tokens estimated
  expect(large.amount).toBe(300_000 * 2500 + 1000 * 15_000);
});

test("a model without long-context prices keeps one price however long the prompt", () => {
  const gpt41 = catalog.get("gpt-4.1")!; // $2 / $8, cache read $0.50; 1M context, one price
  expect(usageVerdict({ input: 900_000, cacheRead: 0, cacheWrite: 0, output: 10 }, gpt41, plan(gpt41)).charge).toBe(
    900_000 * 2000 + 10 * 8000,
  );
});
