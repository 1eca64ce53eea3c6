// The shape of an LLM or embedding entry, checked field by field before its prices are compiled: a key the
// catalog does not know (a typo such as "cache_reed" would otherwise price cache reads as input without a word)
// or a price that is not a plain non-negative number stops loading, naming the field.

import { LIFECYCLE_KEYS, FieldError } from "./lifecycle";
import { LLM_ENDPOINTS } from "./model";
import { PEAK_SCHEDULE_KEYS } from "./peak";

const ENTRY_KEYS = new Set<string>([
  "id",
  "aliases",
  "type",
  "name",
  "description",
  "endpoint",
  "provider",
  "upstream_model",
  "context_window",
  "max_output_tokens",
  "capabilities",
  "pricing",
  ...LIFECYCLE_KEYS,
]);
/** a provider snapshot id: the model name followed by its date (claude-opus-4-5-20251101) */
const DATED = /-\d{8}$/;
const TOKEN_PRICE_KEYS = ["input", "output", "cache_read", "cache_write", "cache_write_1h"];
/** per-call fees beside the token prices (USD per 1,000 calls) */
export const CALL_FEE_KEYS = ["web_search_per_1k_calls"];
const PRICING_KEYS = new Set([...TOKEN_PRICE_KEYS, ...CALL_FEE_KEYS, "long_context", "peak"]);
const LONG_CONTEXT_KEYS = new Set(["above_input_tokens", ...TOKEN_PRICE_KEYS]);
const PEAK_KEYS = new Set([...PEAK_SCHEDULE_KEYS, ...TOKEN_PRICE_KEYS]);

export function checkLlmFields(e: Record<string, any>): void {
  unknownKeys(e, ENTRY_KEYS, "");
  if (e.endpoint !== undefined && !LLM_ENDPOINTS.includes(e.endpoint))
    throw new FieldError("endpoint", `${JSON.stringify(e.endpoint)} is not one of ${LLM_ENDPOINTS.join(", ")}`);
  if (
    e.aliases !== undefined &&
    (!Array.isArray(e.aliases) || e.aliases.some((a: unknown) => typeof a !== "string" || !a))
  )
    throw new FieldError("aliases", "must be a list of model ids");
  // A dated alias names a provider snapshot: calls by either name must reach that snapshot, not a moving alias.
  const dated = (e.aliases ?? []).find((a: string) => DATED.test(a) && a !== e.upstream_model);
  if (dated)
    throw new FieldError(
      "aliases",
      `${JSON.stringify(dated)} is a dated snapshot id, so upstream_model must be it (not ${JSON.stringify(e.upstream_model)})`,
    );
  for (const k of ["context_window", "max_output_tokens"]) {
    if (e[k] !== undefined && (!Number.isSafeInteger(e[k]) || e[k] <= 0))
      throw new FieldError(k, "must be a positive whole number of tokens");
  }
  const p = e.pricing;
  if (p === undefined) return; // compileLlm names what is missing
  if (typeof p !== "object" || p === null || Array.isArray(p))
    throw new FieldError("pricing", "must be an object of USD prices");
  unknownKeys(p, PRICING_KEYS, "pricing.");
  for (const k of [...TOKEN_PRICE_KEYS, ...CALL_FEE_KEYS]) price(p[k], `pricing.${k}`);
  priceBlock(p.long_context, LONG_CONTEXT_KEYS, "pricing.long_context");
  priceBlock(p.peak, PEAK_KEYS, "pricing.peak");
  // Which tier a call of both would fall in has no provider behind it yet: refused rather than guessed.
  if (p.long_context !== undefined && p.peak !== undefined)
    throw new FieldError("pricing.peak", "cannot be combined with pricing.long_context");
}

function priceBlock(block: unknown, known: Set<string>, field: string): void {
  if (block === undefined) return;
  if (typeof block !== "object" || block === null || Array.isArray(block))
    throw new FieldError(field, "must be an object of USD prices");
  unknownKeys(block as Record<string, unknown>, known, field + ".");
  for (const k of TOKEN_PRICE_KEYS) price((block as Record<string, unknown>)[k], `${field}.${k}`);
}

function unknownKeys(o: Record<string, unknown>, known: Set<string>, prefix: string): void {
  for (const k of Object.keys(o)) if (!known.has(k)) throw new FieldError(prefix + k, "unknown field");
}

function price(v: unknown, field: string): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
    throw new FieldError(field, `must be a non-negative number in USD, not ${JSON.stringify(v)}`);
}
