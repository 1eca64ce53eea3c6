import { usdPerMillionToMicrosPerToken, usdToMicros } from "../../src/ledger/units";
import llmData from "../../src/catalog/models.json";
import mediaData from "../../src/catalog/media-models.json";

// Expected prices, computed from the catalog DATA FILES and the ledger's unit helpers (and, for media, the pricing
// rule functions) — never from the page code under test.

/** The models on sale: /pricing leaves out retired ones (they answer 410 model_retired). */
export const llmEntries = (llmData as any[]).filter((e) => e.status !== "retired");
export const mediaEntries = (mediaData as any[]).filter((e) => e.status !== "retired");

export interface ExpectedRow {
  label: string;
  usd: number;
  creditsMicros: number;
  unit?: string;
}

/** LLM: per million tokens; credits per million = µcr per token. Web search: per 1,000 searches. */
export function expectedLlmRows(e: any): ExpectedRow[] {
  const row = (label: string, usd: number) => ({
    label,
    usd,
    creditsMicros: usdPerMillionToMicrosPerToken(usd) * 1_000_000,
    unit: "per million tokens",
  });
  const rows = [row("input", e.pricing.input)];
  if (e.type === "llm") rows.push(row("output", e.pricing.output));
  if (e.pricing.cache_read != null) rows.push(row("cache read", e.pricing.cache_read));
  if (e.pricing.cache_write != null) rows.push(row("cache write", e.pricing.cache_write));
  if (e.pricing.cache_write_1h != null) rows.push(row("cache write, 1 hour", e.pricing.cache_write_1h));
  const long = e.pricing.long_context;
  if (long) {
    const over = `, prompts over ${long.above_input_tokens.toLocaleString("en-US")} tokens`;
    rows.push(row("input" + over, long.input));
    if (e.type === "llm") rows.push(row("output" + over, long.output ?? e.pricing.output));
    if (long.cache_read != null) rows.push(row("cache read" + over, long.cache_read));
    if (long.cache_write != null) rows.push(row("cache write" + over, long.cache_write));
    if (long.cache_write_1h != null) rows.push(row("cache write, 1 hour" + over, long.cache_write_1h));
  }
  const peak = e.pricing.peak;
  if (peak) {
    const at = ", peak hours";
    rows.push(row("input" + at, peak.input));
    if (e.type === "llm") rows.push(row("output" + at, peak.output));
    if (peak.cache_read != null) rows.push(row("cache read" + at, peak.cache_read));
    if (peak.cache_write != null) rows.push(row("cache write" + at, peak.cache_write));
    if (peak.cache_write_1h != null) rows.push(row("cache write, 1 hour" + at, peak.cache_write_1h));
  }
  // per 1,000 searches: the credits shown are the USD amount in µcr
  if (e.pricing.web_search_per_1k_calls != null)
    rows.push({
      label: "web search",
      usd: e.pricing.web_search_per_1k_calls,
      creditsMicros: usdToMicros(e.pricing.web_search_per_1k_calls),
      unit: "per 1,000 searches",
    });
  return rows;
}

/**
 * Media: the rows of the rule function describePricing; credits = the USD amount in µcr, rounded up to a whole credit
 * unless the row is a rate (per second, megapixel, characters), since a task is charged whole credits.
 */
export async function expectedMediaRows(e: any): Promise<ExpectedRow[]> {
  const { describePricing } = await import("../../src/media/pricing");
  const rate = (unit: string) => /^per (second|megapixel|1,000 characters)/.test(unit);
  return describePricing(e.pricing).map((r: any) => {
    const micros = usdToMicros(r.usd);
    return {
      label: r.label,
      usd: Number(r.usd),
      creditsMicros: rate(r.unit) ? micros : Math.ceil(micros / 1_000_000) * 1_000_000,
    };
  });
}

/** "10.5" credits text → µcr, exactly. */
export function creditsTextToMicros(s: string): number {
  const [w, f = ""] = s.replace(/,/g, "").split(".");
  return Number(w) * 1_000_000 + Number(f.padEnd(6, "0"));
}
