// Prices are facts with sources: every built-in LLM and embedding entry names the provider's own page its prices
// and limits were read from, and the day they were read (not before the catalog's release). The research log is
// docs/catalog-sources.md.
import { describe, expect, test } from "bun:test";
import builtin from "../../src/catalog/models.json";
import { CATALOG_RELEASED } from "../../src/catalog/model";
import { loadCatalog } from "../../src/catalog-loader";

// The provider's own hosts: a price "reproduced" on any other host is not a source.
const PROVIDER_HOSTS: Record<string, string[]> = {
  anthropic: ["platform.claude.com", "docs.anthropic.com", "docs.claude.com", "www.anthropic.com", "claude.com"],
  openai: ["developers.openai.com", "platform.openai.com", "openai.com"],
  gemini: ["ai.google.dev"],
  xai: ["docs.x.ai"],
  deepseek: ["api-docs.deepseek.com"],
};

/**
 * Entries carried over from the 2025 catalog that could not be re-checked against a provider page on the release
 * day (docs/catalog-sources.md says why for each). This list may only shrink.
 */
const NOT_RECHECKED = [
  "gpt-5",
  "gpt-4.1",
  "gpt-4o",
  "gpt-4o-mini",
  "gpt-5.2",
  "gemini-2.5-pro",
  "gemini-2.5-flash",
  "gemini-2.5-flash-lite",
  "gemini-embedding-001",
];

describe("built-in catalog sources", () => {
  const entries = builtin as any[];
  const checked = entries.filter((e) => !NOT_RECHECKED.includes(e.id));

  test("every re-checked entry has a provider-host source URL and a check date on or after the catalog's release", () => {
    expect(checked.length).toBeGreaterThan(10);
    for (const e of checked) {
      const where = `${e.id}: `;
      expect(where + typeof e.source).toBe(where + "string");
      const host = new URL(e.source).hostname;
      expect(where + PROVIDER_HOSTS[e.provider]!.includes(host)).toBe(where + "true");
      expect(where + (e.checked >= CATALOG_RELEASED)).toBe(where + "true");
      expect(["current", "legacy", "retired"]).toContain(e.status);
    }
  });

  test("a time-of-day schedule's holiday list reaches past the catalog's release (until then no holiday bills as peak)", () => {
    const timed = entries.filter((e) => e.pricing?.peak);
    expect(timed.map((e) => e.id).sort()).toEqual(["deepseek-flash", "deepseek-v4-pro"]);
    for (const e of timed)
      expect(`${e.id}: ${e.pricing.peak.holidays_through > CATALOG_RELEASED}`).toBe(`${e.id}: true`);
  });

  test("the entries not re-checked carry no source or check date (the pages say so) and are never current", () => {
    for (const id of NOT_RECHECKED) {
      const e = entries.find((x) => x.id === id);
      expect(e).toBeDefined();
      expect(e.source).toBeUndefined();
      expect(e.checked).toBeUndefined();
      expect(e.status).toBe("legacy");
    }
  });

  test("each provider with a re-checked lineup has a current model, and every retired model names a servable successor", () => {
    const c = loadCatalog();
    for (const provider of ["anthropic", "openai", "xai"]) {
      expect(c.llmList.some((m) => m.provider === provider && c.lifecycle.get(m.id)!.status === "current")).toBe(true);
    }
    for (const [id, life] of c.lifecycle) {
      if (life.status !== "retired") continue;
      expect(`${id} → ${c.lifecycle.get(life.successor!)?.status}`).not.toMatch(/→ (retired|undefined)$/);
    }
  });

  test("the models the issue names as retired upstream are marked retired", () => {
    const c = loadCatalog();
    expect(c.lifecycle.get("claude-3-5-haiku")).toMatchObject({ status: "retired", successor: "claude-haiku-4-5" });
    // DeepSeek names deepseek-flash as the successor of both aliases; it is sold here (priced by time of day).
    for (const id of ["deepseek-chat", "deepseek-reasoner"]) {
      expect(c.lifecycle.get(id)).toMatchObject({
        status: "retired",
        retires_after: "2026-07-24",
        successor: "deepseek-flash",
      });
      expect(c.lifecycle.get(id)!.provider_successor).toBeUndefined();
    }
    // xAI retired grok-4-0709, grok-4-fast and grok-code-fast-1 on 2026-05-15 (its migration guide), naming grok-4.3,
    // which is not sold here: the 410 names grok-4.20, xAI's current model of the same price class.
    for (const id of ["grok-4", "grok-4-fast", "grok-code-fast-1"]) {
      expect(c.lifecycle.get(id)).toMatchObject({
        status: "retired",
        retires_after: "2026-05-15",
        successor: "grok-4.20",
        provider_successor: "grok-4.3",
      });
    }
    // Google shut gemini-3-pro-preview down on 2026-03-09 (its deprecations page); its replacement is not sold here.
    expect(c.lifecycle.get("gemini-3-pro-preview")).toMatchObject({
      status: "retired",
      retires_after: "2026-03-09",
      provider_successor: "gemini-3.1-pro-preview",
    });
  });

  test("the Codex models OpenAI shut down on 2026-07-23 are retired and name a model on sale", () => {
    const c = loadCatalog();
    // OpenAI's API reference marks gpt-5.1-codex and gpt-5-codex deprecated with that shutdown date; the
    // gpt-5-codex model page says "Shut down". The successor is GPT-5.1 (same prices, and a web-search price: on the
    // GPT-6 models, which have none here, the web_search tool Codex sends is left out).
    for (const id of ["gpt-5.1-codex", "gpt-5-codex"]) {
      expect(c.lifecycle.get(id)).toMatchObject({
        status: "retired",
        retires_after: "2026-07-23",
        successor: "gpt-5.1",
      });
    }
  });

  test("Opus 4.6-4.8 carry Anthropic's context and output limits (shown on their cards and in /v1/models)", () => {
    const c = loadCatalog();
    for (const id of ["claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6"]) {
      expect(c.llm.get(id)).toMatchObject({ context_window: 1_000_000, max_output_tokens: 128_000 });
    }
  });

  test("models whose shutdown the provider has announced carry the date and the model to move to", () => {
    const c = loadCatalog();
    // OpenAI's deprecations page: gpt-5, gpt-5-mini and gpt-5-nano shut down on 2026-12-11.
    expect(c.lifecycle.get("gpt-5")).toMatchObject({
      status: "legacy",
      retires_after: "2026-12-11",
      successor: "gpt-6.2-sol",
      provider_successor: "gpt-6.1-sol",
    });
    expect(c.lifecycle.get("gpt-5-mini")).toMatchObject({
      status: "legacy",
      retires_after: "2026-12-11",
      successor: "gpt-6.1-terra",
    });
    expect(c.lifecycle.get("gpt-5-nano")).toMatchObject({
      status: "legacy",
      retires_after: "2026-12-11",
      successor: "gpt-6-luna",
    });
    // Anthropic's Sonnet 4.5 overview: deprecated, retires on 2026-11-30, recommended replacement Sonnet 5.5 (not sold
    // here: its cache-read price could not be confirmed).
    expect(c.lifecycle.get("claude-sonnet-4-5")).toMatchObject({
      status: "legacy",
      retires_after: "2026-11-30",
      successor: "claude-sonnet-5",
      provider_successor: "claude-sonnet-5-5",
    });
  });
});
