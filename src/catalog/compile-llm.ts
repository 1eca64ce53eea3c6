// An LLM or embedding entry compiled into a model: its required fields checked and its USD prices turned into µcr
// per token (the ordinary block, long context, peak), each error naming the field. The Catalog calls it per entry.
import { usdPerMillionToMicrosPerToken, usdPerThousandToMicrosPerCall } from "../ledger/units";
import type { LlmEntry, LlmModel, TokenPriceSet } from "./model";
import { checkLlmFields } from "./entry-check";
import { peakSchedule, type PeakPrices } from "./peak";
import { FieldError, type Lifecycle } from "./lifecycle";

export function compileLlm(e: LlmEntry): LlmModel {
  if (!e || typeof e !== "object") throw new FieldError("id", "an entry must be an object");
  if (typeof e.id !== "string" || !e.id) throw new FieldError("id", "missing id");
  checkLlmFields(e as any);
  if (e.type !== "llm" && e.type !== "embedding") throw new FieldError("type", "must be llm or embedding");
  if (!e.endpoint) throw new FieldError("endpoint", "is required");
  if (!e.provider) throw new FieldError("provider", "is required");
  if (!e.upstream_model) throw new FieldError("upstream_model", "is required");
  if (!e.pricing || e.pricing.input == null || (e.type === "llm" && e.pricing.output == null))
    throw new FieldError("pricing", `needs input${e.type === "llm" ? " and output" : ""} (USD per million tokens)`);
  const prices: LlmModel["prices"] = tokenPrices(e.pricing, null, "pricing.");
  if (e.pricing.web_search_per_1k_calls != null)
    prices.webSearch = inField("pricing.web_search_per_1k_calls", () =>
      usdPerThousandToMicrosPerCall(e.pricing.web_search_per_1k_calls!),
    );
  const long = e.pricing.long_context;
  if (long != null) {
    if (!Number.isSafeInteger(long.above_input_tokens) || long.above_input_tokens <= 0)
      throw new FieldError(
        "pricing.long_context.above_input_tokens",
        "long_context.above_input_tokens must be a positive integer",
      );
    if (long.input == null)
      throw new FieldError("pricing.long_context.input", "long_context needs input (USD per million tokens)");
    prices.longContext = {
      aboveInputTokens: long.above_input_tokens,
      ...tokenPrices(long, prices, "pricing.long_context."),
    };
  }
  if (e.pricing.peak != null) prices.peak = peakPrices(e.pricing.peak, e.pricing, prices);
  const {
    status: _s,
    released: _r,
    retires_after: _a,
    successor: _n,
    provider_successor: _p,
    source: _o,
    checked: _c,
    ...entry
  } = e as LlmEntry & Lifecycle;
  return { ...entry, capabilities: e.capabilities ?? [], prices };
}

/**
 * The prices of a peak block and its schedule (catalog/peak.ts). The block names every kind the off-peak prices
 * name (a kind both leave out defaults as the ordinary block's does, from the peak input price), and none below its
 * off-peak price: the hold is sized at the peak prices, so they must be the most a call can cost.
 */
function peakPrices(
  peak: NonNullable<LlmEntry["pricing"]["peak"]>,
  pricing: LlmEntry["pricing"],
  offPeak: TokenPriceSet,
): PeakPrices {
  const schedule = peakSchedule(peak);
  const keys = {
    input: "input",
    output: "output",
    cacheRead: "cache_read",
    cacheWrite: "cache_write",
    cacheWrite1h: "cache_write_1h",
  } as const;
  for (const key of Object.values(keys))
    if (pricing[key] != null && peak[key] == null)
      throw new FieldError(`pricing.peak.${key}`, "is required: the off-peak prices name it");
  const inPeak = tokenPrices(peak, null, "pricing.peak.");
  for (const [kind, key] of Object.entries(keys) as [keyof TokenPriceSet, string][])
    if (inPeak[kind] < offPeak[kind])
      throw new FieldError(`pricing.peak.${key}`, "is below the off-peak price: the peak price must be the higher one");
  return { ...inPeak, schedule };
}

/** A price conversion whose error (too many decimals) names the field. */
function inField<T>(field: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new FieldError(field, (err as Error).message);
  }
}

/**
 * µcr per token of each kind a pricing block names (USD per million tokens). A kind it leaves out: in the ordinary
 * block (`base` null), cache reads and writes at the input price, one-hour writes as writes, output 0 (embeddings);
 * in a long-context block, the ordinary price of that kind.
 */
function tokenPrices(
  p: { input: number; output?: number; cache_read?: number; cache_write?: number; cache_write_1h?: number },
  base: TokenPriceSet | null,
  prefix: string,
): TokenPriceSet {
  const price = (key: keyof typeof p, otherwise: number) =>
    p[key] == null ? otherwise : inField(prefix + key, () => usdPerMillionToMicrosPerToken(p[key]!));
  const input = price("input", 0);
  const cacheWrite = price("cache_write", base?.cacheWrite ?? input);
  return {
    input,
    output: price("output", base?.output ?? 0),
    cacheRead: price("cache_read", base?.cacheRead ?? input),
    cacheWrite,
    cacheWrite1h: price("cache_write_1h", base?.cacheWrite1h ?? cacheWrite),
  };
}
