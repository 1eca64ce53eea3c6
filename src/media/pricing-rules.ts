// A media model's price rule as the catalog writes it (format: docs/media-catalog-format.md), checked and compiled
// once: every USD amount becomes integer µcr here, so every computation after that (pricing.ts) is exact. A
// malformed rule is refused with an error saying what is wrong (the first problem, in the order checked below).
import { decimalToInteger, usdToMicros } from "../ledger/units";

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
  const r = checkKeys(rule);
  const { flat, table } = compilePrices(r);
  checkQuantities(r);
  const mpBy = compileMegapixelsBy(r);
  if (r.settle !== undefined && r.settle !== "upstream_cost") fail(`settle must be "upstream_cost"`);
  return Object.freeze({
    compiled: true as const,
    rule: r,
    flat,
    table,
    mpFixed: r.megapixels !== undefined ? megapixelsOf(r.megapixels) : undefined,
    mpBy,
    extraPerSecond:
      r.extra_usd_per_second !== undefined ? micros(r.extra_usd_per_second, "extra_usd_per_second") : undefined,
  });
}

function fail(message: string): never {
  throw new Error(`pricing: ${message}`);
}

function micros(v: unknown, what: string): number {
  if (typeof v !== "number" && typeof v !== "string") return fail(`${what} must be a USD amount`);
  const m = usdToMicros(v);
  if (m < 0) fail(`${what} must not be negative`);
  return m;
}

/** An object with known keys only, a known unit, and no key that belongs to another unit. */
function checkKeys(rule: unknown): PricingRule {
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return fail("must be an object");
  const r = rule as PricingRule;
  for (const k of Object.keys(r)) if (!RULE_KEYS.has(k)) fail(`unknown key "${k}"`);
  if (!UNITS.includes(r.unit)) fail(`unit must be one of ${UNITS.join(", ")}`);
  for (const [k, units] of Object.entries(UNIT_KEYS)) {
    if ((r as unknown as Record<string, unknown>)[k] !== undefined && !units.includes(r.unit))
      fail(`"${k}" does not apply to unit ${r.unit}`);
  }
  return r;
}

/** One flat price (usd), or a table (usd_by) keyed by the values of the `by` fields. */
function compilePrices(r: PricingRule): { flat?: number; table?: Map<string, number> } {
  if ((r.usd === undefined) === (r.usd_by === undefined)) fail("give exactly one of usd or usd_by");
  if (r.usd !== undefined)
    return { flat: r.by !== undefined ? fail("by needs usd_by, not usd") : micros(r.usd, "usd") };
  if (!Array.isArray(r.by) || r.by.length === 0 || !r.by.every((f) => typeof f === "string"))
    fail("usd_by needs by: [field, ...]");
  const table = new Map<string, number>();
  flattenTable(r.usd_by, r.by!.length, [], table);
  return { table };
}

/** Counts and lengths are positive, fields are named, and each unit has what it is counted by. */
function checkQuantities(r: PricingRule): void {
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
}

/** Megapixels in millionths. */
function megapixelsOf(v: unknown): number {
  return typeof v === "number" || typeof v === "string"
    ? decimalToInteger(v, 6, "megapixels")
    : fail("megapixels must be a decimal");
}

function compileMegapixelsBy(r: PricingRule): Map<string, number> | undefined {
  if (r.megapixels_by === undefined) return undefined;
  const { field, values } = r.megapixels_by;
  if (typeof field !== "string" || typeof values !== "object" || values === null)
    fail("megapixels_by is {field, values}");
  return new Map(Object.entries(values).map(([k, v]) => [k, megapixelsOf(v)]));
}

function flattenTable(node: unknown, depth: number, path: string[], out: Map<string, number>): void {
  if (depth === 0) return void out.set(path.join("|"), micros(node, `usd_by[${path.join("][")}]`));
  if (typeof node !== "object" || node === null || Object.keys(node).length === 0) {
    fail(`usd_by${path.length ? `[${path.join("][")}]` : ""} must be a non-empty table ${depth} level(s) deep`);
  }
  for (const [k, v] of Object.entries(node as object)) flattenTable(v, depth - 1, [...path, k], out);
}
