// The cost of a media task from its compiled price rule (pricing-rules.ts): the estimate from the validated input,
// the actual cost from what was produced, and the rule as rows for a pricing page. Tasks bill in whole credits, and
// the actual cost never exceeds the estimate: the estimate is what was held and what the caller agreed to
// (max_credits), and a pending transfer can only be posted for less.
import { ceilToWholeCredit, usdToMicros } from "../ledger/units";
import { type CompiledPricing, compilePricing, type PricingRule } from "./pricing-rules";

export interface CostFacts {
  images?: number;
  seconds?: number;
  characters?: number;
  upstreamCostUsd?: number;
}

/** The input asks for something the upstream has no price for (e.g. 1080P at 10 s): a 422 naming the field. */
export class UnpricedInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "UnpricedInputError";
  }
}

const cache = new WeakMap<object, CompiledPricing>();
function compiled(rule: PricingRule | CompiledPricing): CompiledPricing {
  if ("compiled" in rule) return rule;
  let c = cache.get(rule);
  if (!c) cache.set(rule, (c = compilePricing(rule)));
  return c;
}

/** Cost in µcr (whole credits, rounded up) of what the validated input asks for. */
export function estimateCost(rule: PricingRule | CompiledPricing, input: Record<string, unknown>): number {
  return ceilToWholeCredit(rawCost(compiled(rule), input, {}));
}

/** Cost in µcr (whole credits) of what was really produced; never above the estimate; with no facts = estimate. */
export function actualCost(
  rule: PricingRule | CompiledPricing,
  input: Record<string, unknown>,
  facts: CostFacts = {},
): number {
  const c = compiled(rule);
  const estimate = rawCost(c, input, {});
  let actual = rawCost(c, input, facts);
  if (c.rule.settle === "upstream_cost" && typeof facts.upstreamCostUsd === "number" && facts.upstreamCostUsd >= 0) {
    // A float from the wire: fix it to 9 decimals (the µcr scale) before the exact conversion.
    actual = usdToMicros(facts.upstreamCostUsd.toFixed(9));
  }
  return ceilToWholeCredit(Math.min(actual, estimate));
}

/** The facts a result would have if it matched the request exactly (what estimate == actual is tested with). */
export function requestedFacts(rule: PricingRule | CompiledPricing, input: Record<string, unknown>): CostFacts {
  const c = compiled(rule);
  const u = c.rule.unit;
  if (u === "image" || u === "megapixel") return { images: requestedImages(c, input) };
  if (u === "1k_chars") return { characters: characters(c, input) };
  return timed(c) ? { seconds: requestedSeconds(c, input) } : {};
}

function rawCost(c: CompiledPricing, input: Record<string, unknown>, facts: CostFacts): number {
  const r = c.rule;
  const seconds = timed(c) ? billableSeconds(c, input, facts) : undefined;
  const price = unitPrice(c, input, seconds);
  const images = () => facts.images ?? requestedImages(c, input);
  let cost = price; // clip and request
  if (r.unit === "image") cost = price * Math.ceil(images() / (r.images_per_unit ?? 1));
  else if (r.unit === "megapixel") cost = ceilDiv(price * megapixels(c, input) * images(), 1_000_000);
  else if (r.unit === "second") cost = ceilDiv(price * Math.round(seconds! * 1000), 1000);
  else if (r.unit === "1k_chars") cost = ceilDiv(price * (facts.characters ?? characters(c, input)), 1000);
  else if (r.unit === "clip" && r.base_seconds !== undefined) {
    const extraMs = Math.max(0, Math.round((seconds! - r.base_seconds) * 1000));
    cost = price + ceilDiv(c.extraPerSecond! * extraMs, 1000);
  }
  if (!Number.isSafeInteger(cost)) throw new RangeError(`cost overflow: ${cost}`);
  return cost;
}

/** Does the price depend on a length in seconds? (A clip without seconds is one fixed-price clip.) */
function timed(c: CompiledPricing): boolean {
  const r = c.rule;
  return r.unit === "second" || (r.unit === "clip" && (r.seconds_field !== undefined || r.seconds !== undefined));
}

function characters(c: CompiledPricing, input: Record<string, unknown>): number {
  return [...String(input[c.rule.text_field!] ?? "")].length;
}

function unitPrice(c: CompiledPricing, input: Record<string, unknown>, seconds: number | undefined): number {
  if (c.flat !== undefined) return c.flat;
  const by = c.rule.by!;
  const keys = by.map((f) => String(input[f]));
  // A clip table keyed by duration follows the real output length when the upstream delivered another length.
  const durAt = c.rule.seconds_field ? by.indexOf(c.rule.seconds_field) : -1;
  if (durAt >= 0 && seconds !== undefined && String(seconds) !== keys[durAt]) {
    const alt = [...keys];
    alt[durAt] = String(seconds);
    const p = c.table!.get(alt.join("|"));
    if (p !== undefined) return p;
  }
  const p = c.table!.get(keys.join("|"));
  if (p !== undefined) return p;
  const field = by.find((f) => input[f] === undefined) ?? by[by.length - 1]!;
  const combo = by.map((f, i) => `${f}=${keys[i]}`).join(", ");
  throw new UnpricedInputError(field, `no price for ${combo}: this combination is not offered`);
}

function requestedImages(c: CompiledPricing, input: Record<string, unknown>): number {
  const f = c.rule.count_field;
  const n = f !== undefined ? input[f] : undefined;
  return typeof n === "number" ? n : (c.rule.images ?? 1);
}

function megapixels(c: CompiledPricing, input: Record<string, unknown>): number {
  if (c.mpFixed !== undefined) return c.mpFixed;
  const { field } = c.rule.megapixels_by!;
  const mp = c.mpBy!.get(String(input[field]));
  if (mp === undefined) throw new UnpricedInputError(field, `no size known for ${field}=${String(input[field])}`);
  return mp;
}

function requestedSeconds(c: CompiledPricing, input: Record<string, unknown>): number {
  const f = c.rule.seconds_field;
  const v = f !== undefined ? input[f] : undefined;
  if (typeof v === "number") return v;
  const s = c.rule.seconds ?? c.rule.estimate_seconds;
  if (s === undefined) throw new UnpricedInputError(f ?? "duration", `"${f}" is needed to price this request`);
  return s;
}

// Output within half a second of the requested length counts as the request: containers gain or lose a frame.
function billableSeconds(c: CompiledPricing, input: Record<string, unknown>, facts: CostFacts): number {
  const asked = requestedSeconds(c, input);
  const real = facts.seconds;
  if (real === undefined || !Number.isFinite(real) || Math.abs(real - asked) < 0.5) return asked;
  return Math.max(0, Math.round(real * 1000) / 1000);
}

// Ceiling division of non-negative integers; the float quotient is only a first guess, corrected exactly.
function ceilDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  while (q * b > a) q--;
  while (q * b < a) q++;
  return q;
}

export interface PriceRow {
  label: string;
  usd: string;
  unit: string;
}

/** Rows for a pricing page or a model card; usd strings are exact decimals (at least two places). */
export function describePricing(rule: PricingRule | CompiledPricing): PriceRow[] {
  const c = compiled(rule);
  const r = c.rule;
  const unit = unitLabel(r);
  const rows: PriceRow[] =
    c.flat !== undefined
      ? [{ label: "any", usd: formatUsd(c.flat), unit }]
      : [...c.table!].map(([key, m]) => ({
          label: key
            .split("|")
            .map((v, i) => `${r.by![i]}=${v}`)
            .join(", "),
          usd: formatUsd(m),
          unit,
        }));
  if (c.extraPerSecond !== undefined) {
    rows.push({ label: `each second beyond ${r.base_seconds}`, usd: formatUsd(c.extraPerSecond), unit: "per second" });
  }
  return rows;
}

function unitLabel(r: PricingRule): string {
  if (r.unit === "image") return (r.images_per_unit ?? 1) > 1 ? `per ${r.images_per_unit} images` : "per image";
  if (r.unit === "clip" && r.base_seconds !== undefined) return `per clip of ${r.base_seconds} s`;
  if (r.unit === "clip") return r.seconds !== undefined ? `per ${r.seconds} s clip` : "per clip";
  if (r.unit === "1k_chars") return `per 1,000 characters of ${r.text_field}`;
  return `per ${r.unit}`;
}

/** Non-negative µcr → exact USD text: 32_500_000 → "0.0325", 100_000_000 → "0.10". Integer arithmetic only. */
export function formatUsd(micros: number): string {
  const frac = String(micros % 1_000_000_000)
    .padStart(9, "0")
    .replace(/0+$/, "")
    .padEnd(2, "0");
  return `${Math.floor(micros / 1_000_000_000)}.${frac}`;
}
