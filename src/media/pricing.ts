// Price rules of media models, as data in the catalog (format: docs/media-catalog-format.md). USD as the upstream
// publishes it becomes integer µcr once, when a rule is compiled, so every computation after that is exact. Tasks
// bill in whole credits, and the actual cost never exceeds the estimate: the estimate is what was held and what the
// caller agreed to (max_credits), and a pending transfer can only be posted for less.
import { ceilToWholeCredit, decimalToInteger, usdToMicros } from "../ledger/units";

export type PriceUnit = "image" | "megapixel" | "second" | "clip" | "1k_chars" | "request";
export type Usd = number | string;
export interface PriceTable {
  [key: string]: Usd | PriceTable;
}

export interface PricingRule {
  unit: PriceUnit;
  usd?: Usd;
  by?: string[];
  usd_by?: PriceTable;
  count_field?: string;
  images?: number;
  images_per_unit?: number;
  megapixels?: Usd;
  megapixels_by?: { field: string; values: Record<string, Usd> };
  seconds_field?: string;
  seconds?: number;
  estimate_seconds?: number;
  base_seconds?: number;
  extra_usd_per_second?: Usd;
  text_field?: string;
  settle?: "upstream_cost";
}

export interface CostFacts {
  images?: number;
  seconds?: number;
  characters?: number;
  upstreamCostUsd?: number;
}

/** A rule with its USD converted to µcr; built once per model. */
export interface CompiledPricing {
  readonly compiled: true;
  readonly rule: PricingRule;
  readonly flat?: number;
  readonly table?: Map<string, number>; // key: the `by` values joined with "|"
  readonly mpFixed?: number; // megapixels in millionths
  readonly mpBy?: Map<string, number>;
  readonly extraPerSecond?: number;
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

const UNITS: PriceUnit[] = ["image", "megapixel", "second", "clip", "1k_chars", "request"];
// Keys that only make sense for some units (a "seconds_field" on an image rule is a mistake, not a no-op).
const UNIT_KEYS: Record<string, PriceUnit[]> = {
  count_field: ["image", "megapixel"],
  images: ["image", "megapixel"],
  images_per_unit: ["image"],
  megapixels: ["megapixel"],
  megapixels_by: ["megapixel"],
  seconds_field: ["second", "clip"],
  seconds: ["second", "clip"],
  estimate_seconds: ["second"],
  base_seconds: ["clip"],
  extra_usd_per_second: ["clip"],
  text_field: ["1k_chars"],
};
const RULE_KEYS = new Set(["unit", "usd", "by", "usd_by", "settle", ...Object.keys(UNIT_KEYS)]);

export function checkPricingRule(rule: unknown): asserts rule is PricingRule {
  compilePricing(rule);
}

/** Validate a rule and convert its prices to µcr. Throws a clear error on anything malformed. */
export function compilePricing(rule: unknown): CompiledPricing {
  const fail = (m: string): never => {
    throw new Error(`pricing: ${m}`);
  };
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return fail("must be an object");
  const r = rule as PricingRule;
  for (const k of Object.keys(r)) if (!RULE_KEYS.has(k)) fail(`unknown key "${k}"`);
  if (!UNITS.includes(r.unit)) fail(`unit must be one of ${UNITS.join(", ")}`);
  for (const [k, units] of Object.entries(UNIT_KEYS)) {
    if ((r as unknown as Record<string, unknown>)[k] !== undefined && !units.includes(r.unit))
      fail(`"${k}" does not apply to unit ${r.unit}`);
  }
  const micros = (v: unknown, what: string): number => {
    if (typeof v !== "number" && typeof v !== "string") return fail(`${what} must be a USD amount`);
    const m = usdToMicros(v);
    if (m < 0) fail(`${what} must not be negative`);
    return m;
  };
  let flat: number | undefined;
  let table: Map<string, number> | undefined;
  if ((r.usd === undefined) === (r.usd_by === undefined)) fail("give exactly one of usd or usd_by");
  if (r.usd !== undefined) flat = r.by !== undefined ? fail("by needs usd_by, not usd") : micros(r.usd, "usd");
  else {
    if (!Array.isArray(r.by) || r.by.length === 0 || !r.by.every((f) => typeof f === "string"))
      fail("usd_by needs by: [field, ...]");
    table = new Map();
    flattenTable(r.usd_by, r.by!.length, [], table, micros, fail);
  }
  for (const k of ["images", "images_per_unit", "seconds", "estimate_seconds", "base_seconds"] as const) {
    const v = r[k];
    if (v !== undefined && (typeof v !== "number" || !(v > 0))) fail(`${k} must be a positive number`);
  }
  for (const k of ["count_field", "seconds_field", "text_field"] as const) {
    if (r[k] !== undefined && typeof r[k] !== "string") fail(`${k} must be a field name`);
  }
  if (r.unit === "1k_chars" && !r.text_field) fail("unit 1k_chars needs text_field");
  if (r.unit === "second" && !r.seconds_field && !r.seconds && !r.estimate_seconds)
    fail("unit second needs seconds_field, seconds or estimate_seconds");
  if ((r.base_seconds === undefined) !== (r.extra_usd_per_second === undefined))
    fail("base_seconds and extra_usd_per_second go together");
  if (r.base_seconds !== undefined && !r.seconds_field && r.seconds === undefined)
    fail("base_seconds needs seconds_field");
  if (r.unit === "megapixel" && (r.megapixels === undefined) === (r.megapixels_by === undefined))
    fail("unit megapixel needs one of megapixels, megapixels_by");
  const mp = (v: unknown) =>
    typeof v === "number" || typeof v === "string"
      ? decimalToInteger(v, 6, "megapixels")
      : fail("megapixels must be a decimal");
  let mpBy: Map<string, number> | undefined;
  if (r.megapixels_by !== undefined) {
    const { field, values } = r.megapixels_by;
    if (typeof field !== "string" || typeof values !== "object" || values === null)
      fail("megapixels_by is {field, values}");
    mpBy = new Map(Object.entries(values).map(([k, v]) => [k, mp(v)]));
  }
  if (r.settle !== undefined && r.settle !== "upstream_cost") fail(`settle must be "upstream_cost"`);
  return Object.freeze({
    compiled: true as const,
    rule: r,
    flat,
    table,
    mpFixed: r.megapixels !== undefined ? mp(r.megapixels) : undefined,
    mpBy,
    extraPerSecond:
      r.extra_usd_per_second !== undefined ? micros(r.extra_usd_per_second, "extra_usd_per_second") : undefined,
  });
}

function flattenTable(
  node: unknown,
  depth: number,
  path: string[],
  out: Map<string, number>,
  micros: (v: unknown, what: string) => number,
  fail: (m: string) => never,
): void {
  if (depth === 0) return void out.set(path.join("|"), micros(node, `usd_by[${path.join("][")}]`));
  if (typeof node !== "object" || node === null || Object.keys(node).length === 0) {
    fail(`usd_by${path.length ? `[${path.join("][")}]` : ""} must be a non-empty table ${depth} level(s) deep`);
  }
  for (const [k, v] of Object.entries(node as object)) flattenTable(v, depth - 1, [...path, k], out, micros, fail);
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
