// Fees beyond tokens (src/llm/protocols/paid-tools.ts and usage.ts): what a request offering web search holds and
// is charged, what the answers state about searches and one-hour cache writes, and which paid tools and tiers are
// refused before anything is held.
import { describe, expect, test } from "bun:test";
import { loadCatalog } from "../../src/catalog-loader";
import { ApiError } from "../../src/http/errors";
import { streamVerdict, planHold } from "../../src/llm/meter";
import { protocols } from "../../src/llm/protocols/index";
import {
  DEFAULT_HELD_SEARCHES,
  NO_PAID_TOOLS,
  paidToolUse,
  withoutUnpricedTools,
} from "../../src/llm/protocols/paid-tools";
import { fromAnthropicUsage, fromResponsesUsage, priceUsage } from "../../src/llm/usage";
import { fixtureBytes, fixtureJson } from "../fakes/fixtures";

const catalog = loadCatalog();
const sonnet = catalog.llm.get("claude-sonnet-4-5")!;
const gpt51 = catalog.llm.get("gpt-5.1")!;
const SEARCH = 10_000_000; // $10 per 1,000 searches = $0.01 = 10 credits = 10^7 µcr

function refusal(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("catalog prices beyond tokens", () => {
  test("web search per 1,000 calls and one-hour cache writes become exact integer µcr", () => {
    expect(sonnet.prices.webSearch).toBe(SEARCH);
    expect(sonnet.prices.cacheWrite1h).toBe(6000); // $6 per million: 2× input
    expect(catalog.llm.get("gpt-4o")!.prices.webSearch).toBe(25_000_000);
    expect(catalog.llm.get("gpt-5.2")!.prices.webSearch).toBeUndefined();
    // a model without a one-hour price bills those writes as ordinary cache writes
    expect(gpt51.prices.cacheWrite1h).toBe(gpt51.prices.cacheWrite);
  });
});

describe("priceUsage", () => {
  const p = { input: 3000, output: 15000, cacheRead: 300, cacheWrite: 3750, cacheWrite1h: 6000, webSearch: SEARCH };

  test("one-hour writes at their own price, the rest of the writes at the cache-write price, searches per search", () => {
    const u = { input: 2310, output: 96, cacheRead: 0, cacheWrite: 1200, cacheWrite1h: 1000, webSearches: 2 };
    expect(priceUsage(u, p)).toBe(2310 * 3000 + 200 * 3750 + 1000 * 6000 + 96 * 15000 + 2 * SEARCH);
  });

  test("without them, the issue's formula unchanged", () => {
    expect(priceUsage({ input: 10, output: 5, cacheRead: 7, cacheWrite: 3 }, p)).toBe(
      10 * 3000 + 5 * 15000 + 7 * 300 + 3 * 3750,
    );
  });

  test("more one-hour writes than writes is a defect, not a discount", () => {
    expect(() => priceUsage({ input: 0, output: 0, cacheRead: 0, cacheWrite: 1, cacheWrite1h: 2 }, p)).toThrow(
      RangeError,
    );
  });
});

describe("what answers state", () => {
  test("Anthropic: cache_creation's one-hour part and server_tool_use's search count", () => {
    expect(fromAnthropicUsage(fixtureJson("A_nonstream_search.json").usage)).toEqual({
      input: 2310,
      output: 96,
      cacheRead: 0,
      cacheWrite: 1200,
      cacheWrite1h: 1000,
      webSearches: 2,
    });
    // the recorded answers state zeros: the usage stays the four counts
    expect(fromAnthropicUsage(fixtureJson("A_nonstream.json").usage)).toEqual({
      input: 38,
      output: 74,
      cacheRead: 2113,
      cacheWrite: 0,
    });
  });

  test("Responses: one web_search_call output item per search", () => {
    const r = fixtureJson("C_nonstream_search.json");
    expect(fromResponsesUsage(r.usage, r.output)).toEqual({
      input: 5210,
      output: 96,
      cacheRead: 0,
      cacheWrite: 0,
      webSearches: 2,
    });
    expect(protocols.responses.usageFromBody(r)!.webSearches).toBe(2);
  });

  for (const [proto, name] of [
    ["anthropic", "A_stream_search.sse"],
    ["responses", "C_stream_search.sse"],
  ] as const) {
    test(`${proto} stream: the searches are counted as they run, and stated at the end`, () => {
      const bytes = fixtureBytes(name);
      const whole = protocols[proto].createStreamTap({ stripUsageChunk: false });
      whole.feed(bytes);
      const r = whole.end();
      expect(r.completed).toBe(true);
      expect(r.usage!.webSearches).toBe(2);
      expect(r.webSearchesSoFar).toBe(2);

      // cut after the searches, before the end: the client left; the searches ran and are charged
      const cut = new TextDecoder()
        .decode(bytes)
        .indexOf(proto === "anthropic" ? '"type":"text_delta"' : "response.output_text.delta");
      const part = protocols[proto].createStreamTap({ stripUsageChunk: false });
      part.feed(bytes.subarray(0, cut));
      const model = proto === "anthropic" ? sonnet : gpt51;
      const plan = planHold(protocols[proto], {}, 3000, model, { webSearch: true, heldSearches: 5 });
      const v = streamVerdict(part.end(), "client_abort", model, plan);
      expect(v.outcome).toBe("client_abort");
      expect(v.usage!.webSearches).toBe(2);
      expect(v.charge).toBeGreaterThanOrEqual(2 * SEARCH);
    });
  }
});

describe("the hold of a request offering web search", () => {
  const body = (tool: object) => ({ model: "claude-sonnet-4-5", max_tokens: 100, messages: [], tools: [tool] });
  const use = (b: object) => paidToolUse(protocols.anthropic.paidTools!, b, sonnet);

  test("its search limit (max_uses / max_tool_calls), else DEFAULT_HELD_SEARCHES, × the search price", () => {
    expect(use(body({ type: "web_search_20250305", name: "web_search", max_uses: 2 }))).toEqual({
      webSearch: true,
      heldSearches: 2,
    });
    expect(use(body({ type: "web_search_20250305", name: "web_search" }))).toEqual({
      webSearch: true,
      heldSearches: DEFAULT_HELD_SEARCHES,
    });
    expect(
      paidToolUse(protocols.responses.paidTools!, { tools: [{ type: "web_search" }], max_tool_calls: 3 }, gpt51),
    ).toEqual({ webSearch: true, heldSearches: 3 });
    const withSearch = planHold(protocols.anthropic, {}, 300, sonnet, { webSearch: true, heldSearches: 3 });
    const without = planHold(protocols.anthropic, {}, 300, sonnet, NO_PAID_TOOLS);
    // each search's fee, and its results as input (SEARCH_INPUT_TOKENS = 10,000 tokens each, at Sonnet 4.5's highest
    // input rate, the one-hour cache write: $6 per million = 6,000 µcr per token)
    expect(withSearch.amount - without.amount).toBe(3 * SEARCH + 3 * 10_000 * 6_000);
  });

  test("client tools and free server tools cost nothing extra", () => {
    expect(use(body({ name: "get_weather", input_schema: { type: "object" } }))).toEqual(NO_PAID_TOOLS);
    expect(use(body({ type: "web_fetch_20250910", name: "web_fetch" }))).toEqual(NO_PAID_TOOLS);
    expect(use(body({ type: "bash_20250124", name: "bash" }))).toEqual(NO_PAID_TOOLS);
    // Codex CLI's own tools besides web_search
    expect(
      paidToolUse(
        protocols.responses.paidTools!,
        {
          tools: [
            { type: "function", name: "exec_command" },
            { type: "namespace", name: "multi_agent_v1" },
            { type: "local_shell" },
          ],
        },
        gpt51,
      ),
    ).toEqual(NO_PAID_TOOLS);
  });
});

describe("refused before anything is held", () => {
  const cases: [string, keyof typeof protocols, object, string][] = [
    [
      "Anthropic code execution (container time)",
      "anthropic",
      { tools: [{ type: "code_execution_20250825", name: "code_execution" }] },
      "code_execution_20250825",
    ],
    [
      "Responses file search",
      "responses",
      { tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] },
      "file_search",
    ],
    [
      "Responses code interpreter",
      "responses",
      { tools: [{ type: "code_interpreter", container: { type: "auto" } }] },
      "code_interpreter",
    ],
    ["Responses image generation", "responses", { tools: [{ type: "image_generation" }] }, "image_generation"],
    ["Responses priority tier", "responses", { service_tier: "priority" }, "priority"],
    ["chat priority tier", "chat", { service_tier: "priority" }, "priority"],
    ["chat web_search_options", "chat", { web_search_options: {} }, "web_search_options"],
  ];
  for (const [what, proto, body, named] of cases) {
    test(what, () => {
      const e = refusal(() => paidToolUse(protocols[proto].paidTools!, body, gpt51));
      expect(e.status).toBe(400);
      expect(e.code).toBe("unsupported_parameter");
      expect(e.message).toContain(named);
    });
  }

  test("the default and flex tiers pass", () => {
    for (const tier of ["auto", "default", "flex"])
      expect(paidToolUse(protocols.chat.paidTools!, { service_tier: tier }, gpt51)).toEqual(NO_PAID_TOOLS);
  });

  describe("web search on a model the catalog gives no search price", () => {
    const unpriced = { ...gpt51, id: "gpt-unpriced", prices: { ...gpt51.prices, webSearch: undefined } };
    const rules = protocols.responses.paidTools!;
    const fn = { type: "function", name: "read_file", parameters: {} };

    test("is left out, not billed: nothing held for searches", () => {
      const use = paidToolUse(rules, { tools: [{ type: "web_search" }, fn] }, unpriced);
      expect(use).toEqual({ webSearch: false, heldSearches: 0, unpriced: ["web_search"] });
      expect(withoutUnpricedTools({ model: "m", tools: [{ type: "web_search" }, fn] }, use)).toEqual({
        model: "m",
        tools: [fn],
      });
    });

    test("the only tool left out takes tool_choice with it", () => {
      const body = { model: "m", tools: [{ type: "web_search_preview" }], tool_choice: "auto" };
      expect(withoutUnpricedTools(body, paidToolUse(rules, body, unpriced))).toEqual({ model: "m" });
    });

    test("a tool_choice forcing it is refused", () => {
      for (const tool_choice of [{ type: "web_search" }, "required"]) {
        const e = refusal(() => paidToolUse(rules, { tools: [{ type: "web_search" }], tool_choice }, unpriced));
        expect(e).toMatchObject({ status: 400, param: "tool_choice" });
        expect(e.message).toContain("gpt-unpriced has no web-search price");
      }
      // "required" with another tool offered still has a tool to call
      expect(
        paidToolUse(rules, { tools: [{ type: "web_search" }, fn], tool_choice: "required" }, unpriced).unpriced,
      ).toEqual(["web_search"]);
    });
  });
});
