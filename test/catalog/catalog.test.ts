import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadCatalog } from "../../src/catalog-loader";
import { startGateway, type TestGateway } from "../support/gateway";
import type { ModelCard, PublicModel } from "../../src/catalog/schemas";
import { errorOf, jsonOf, type AnswerOf, type ListOf } from "../support/json";

/** A model as /v1/models lists it, with the fields these tests read beyond the published schema. */
type ListedModel = AnswerOf<typeof PublicModel> & { endpoints: string[]; pricing: Record<string, unknown> };

let gw: TestGateway;
beforeAll(async () => (gw = await startGateway()));
afterAll(() => gw.stop());

describe("GET /v1/models", () => {
  test("lists every model with endpoint, capabilities and USD pricing per million tokens; no key needed", async () => {
    const r = await fetch(gw.url + "/v1/models");
    expect(r.status).toBe(200);
    const { object, data } = await jsonOf<ListOf<ListedModel>>(r);
    expect(object).toBe("list");
    const sonnet = data.find((m) => m.id === "claude-sonnet-4-5")!;
    expect(sonnet).toMatchObject({
      endpoint: "/v1/messages",
      type: "llm",
      pricing: {
        currency: "USD",
        unit: "per_million_tokens",
        input: 3,
        output: 15,
        cache_read: 0.3,
        cache_write: 3.75,
      },
    });
    expect(sonnet.pricing.long_context).toEqual({
      above_input_tokens: 200000,
      input: 6,
      output: 22.5,
      cache_read: 0.6,
      cache_write: 7.5,
      cache_write_1h: 12,
    });
    expect(sonnet.capabilities).toContain("tools");
    const gpt = data.find((m) => m.id === "gpt-5.1")!;
    expect(gpt.endpoint).toBe("/v1/responses");
    expect(gpt.pricing.cache_write).toBeUndefined(); // absent where not applicable
    const emb = data.find((m) => m.id === "text-embedding-3-small")!;
    expect(emb).toMatchObject({ endpoint: "/v1/embeddings", type: "embedding", pricing: { input: 0.02 } });
    expect(emb.pricing.output).toBeUndefined();
    for (const m of data.filter((m) => m.type === "llm" || m.type === "embedding"))
      expect(["/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/embeddings"]).toContain(m.endpoint);
    // The spec: GPT/Codex/Grok/DeepSeek on Responses; Gemini and GPT-5.2 on Chat Completions.
    expect(data.find((m) => m.id === "gpt-5.2")!.endpoint).toBe("/v1/chat/completions");
    expect(data.find((m) => m.id === "gemini-2.5-pro")!.endpoint).toBe("/v1/chat/completions");
    expect(data.find((m) => m.id === "deepseek-reasoner")!).toMatchObject({
      endpoint: "/v1/responses",
      status: "retired",
    });
    expect(data.find((m) => m.id === "gpt-6.2-sol")!.endpoint).toBe("/v1/responses");
    expect(data.find((m) => m.id === "claude-opus-5-5")!.endpoint).toBe("/v1/messages");
    expect(data.find((m) => m.id === "grok-4.20")!.endpoint).toBe("/v1/responses");
  });

  test("`endpoints`: every LLM on the three LLM endpoints, its native `endpoint` first; embeddings only their own", async () => {
    const { data } = await jsonOf<ListOf<ListedModel>>(await fetch(gw.url + "/v1/models"));
    const llms = data.filter((m) => m.type === "llm");
    expect(llms.length).toBeGreaterThan(20);
    for (const m of llms) {
      expect(m.endpoints[0]).toBe(m.endpoint);
      expect([...m.endpoints].sort()).toEqual(["/v1/chat/completions", "/v1/messages", "/v1/responses"]);
    }
    expect(data.find((m) => m.id === "gemini-2.5-pro")!.endpoints).toEqual([
      "/v1/chat/completions",
      "/v1/messages",
      "/v1/responses",
    ]);
    expect(data.find((m) => m.id === "text-embedding-3-small")!.endpoints).toEqual(["/v1/embeddings"]);
    const one = await (await fetch(gw.url + "/v1/models/claude-haiku-4-5")).json();
    expect(one).toMatchObject({
      endpoint: "/v1/messages",
      endpoints: ["/v1/messages", "/v1/responses", "/v1/chat/completions"],
    });
  });

  test("one model by id or alias; unknown id is a clear 404", async () => {
    const m = await jsonOf<AnswerOf<typeof ModelCard>>(await fetch(gw.url + "/v1/models/claude-haiku-4-5"));
    expect(m.id).toBe("claude-haiku-4-5");
    const byAlias = await jsonOf<AnswerOf<typeof ModelCard>>(
      await fetch(gw.url + "/v1/models/claude-haiku-4-5-20251001"),
    );
    expect(byAlias.id).toBe("claude-haiku-4-5");
    const r = await fetch(gw.url + "/v1/models/no-such-model");
    expect(r.status).toBe(404);
    expect((await errorOf(r)).error.message).toContain("no-such-model");
  });
});

describe("catalog data", () => {
  test("prices become exact integer micro-credits per token", () => {
    const c = loadCatalog();
    // one-hour cache writes at $6 per million; web search at $10 per 1,000 searches = 10^7 µcr per search
    expect(c.llm.get("claude-sonnet-4-5")!.prices).toEqual({
      input: 3000,
      output: 15000,
      cacheRead: 300,
      cacheWrite: 3750,
      cacheWrite1h: 6000,
      webSearch: 10_000_000,
      // prompts over 200k tokens (its 1M context): $6 / $22.50, cache read $0.60, writes $7.50 and $12
      longContext: {
        aboveInputTokens: 200_000,
        input: 6000,
        output: 22500,
        cacheRead: 600,
        cacheWrite: 7500,
        cacheWrite1h: 12000,
      },
    });
    // a long-context kind left out keeps its ordinary price (Gemini 2.5 Pro names no cache writes at all)
    expect(c.llm.get("gemini-2.5-pro")!.prices.longContext).toEqual({
      aboveInputTokens: 200_000,
      input: 2500,
      output: 15000,
      cacheRead: 250,
      cacheWrite: 1250,
      cacheWrite1h: 1250,
    });
    // absent prices: cache writes as input, one-hour writes as cache writes, no web search
    expect(c.llm.get("deepseek-reasoner")!.prices).toEqual({
      input: 280,
      output: 420,
      cacheRead: 28,
      cacheWrite: 280,
      cacheWrite1h: 280,
    });
    expect(c.llm.get("gpt-5-nano")!.prices.cacheRead).toBe(5);
  });

  test("CATALOG_PATH overrides a price and adds a model; a bad entry stops loading with its id named", () => {
    const good = catalogFile("", [
      llmEntry({
        id: "claude-sonnet-4-5",
        name: "Sonnet (house price)",
        endpoint: "/v1/messages",
        provider: "anthropic",
        upstream_model: "claude-sonnet-4-5-20250929",
        pricing: { input: 3.3, output: 16.5 },
      }),
      llmEntry({
        id: "my-local-model",
        name: "Local",
        endpoint: "/v1/chat/completions",
        provider: "openai",
        upstream_model: "local",
        pricing: { input: 0.001, output: 0.002 },
      }),
    ]);
    const c = loadCatalog(good);
    expect(c.llm.get("claude-sonnet-4-5")!.prices.input).toBe(3300);
    expect(c.llm.get("my-local-model")!.prices).toMatchObject({ input: 1, output: 2 });
    const bad = catalogFile("bad-", [
      llmEntry({ id: "typo-model", ...anthropicUpstream, pricing: { input: 0.0001, output: 1 } }),
    ]);
    expect(() => loadCatalog(bad)).toThrow(/typo-model.*more than 3 decimals/);
    const notJson = catalogFile("nj-", "{");
    expect(() => loadCatalog(notJson)).toThrow(/CATALOG_PATH/);
    // An alias that is another model's id would silently take the name over: refused, naming both.
    const shadow = catalogFile("shadow-", [
      llmEntry({
        id: "house-model",
        aliases: ["gpt-5.2"],
        endpoint: "/v1/chat/completions",
        provider: "openai",
        upstream_model: "x",
        pricing: { input: 1, output: 1 },
      }),
    ]);
    expect(() => loadCatalog(shadow)).toThrow(/house-model.*"gpt-5.2" already names gpt-5.2|gpt-5.2.*already names/);
    const badLong = catalogFile("long-", [
      llmEntry({
        id: "long-model",
        ...anthropicUpstream,
        pricing: { input: 1, output: 1, long_context: { above_input_tokens: 0, input: 2 } },
      }),
    ]);
    expect(() => loadCatalog(badLong)).toThrow(/long-model.*above_input_tokens must be a positive integer/);
  });
});

/** A CATALOG_PATH file in the temporary directory holding `entries` (as JSON) or `text` as it is. */
function catalogFile(label: string, entries: object[] | string): string {
  const path = join(tmpdir(), `catalog-${label}${Date.now()}.json`);
  writeFileSync(path, typeof entries === "string" ? entries : JSON.stringify(entries));
  return path;
}

/** An LLM catalog entry: `fields`, over a placeholder name and description and no capabilities. */
const llmEntry = (fields: Record<string, unknown>) => ({
  type: "llm",
  name: "x",
  description: "x",
  capabilities: [],
  ...fields,
});

/** An entry served by Anthropic's Messages API under a placeholder upstream model. */
const anthropicUpstream = { endpoint: "/v1/messages", provider: "anthropic", upstream_model: "x" };
