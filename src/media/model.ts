// A media model as the catalog (src/catalog/media-models.json) describes it, and its compiled form: checked once
// at load, with everything the request path needs (validator, prices in µcr, JSON Schema, price rows) precomputed.
import { checkInputSchema, toJsonSchema, validateInput, type InputSchema, type PropertyDef } from "./input-schema";
import {
  actualCost,
  describePricing,
  estimateCost,
  UnpricedInputError,
  type CostFacts,
  type PriceRow,
} from "./pricing";
import { compilePricing, type CompiledPricing, type PricingRule } from "./pricing-rules";

export type { InputSchema, PropertyDef } from "./input-schema";
export type { CostFacts, PriceRow } from "./pricing";
export type { PricingRule } from "./pricing-rules";

export type MediaType = "image" | "video" | "audio";
export type MediaKind =
  | "text-to-image"
  | "image-edit"
  | "text-to-video"
  | "image-to-video"
  | "video-to-video"
  | "music"
  | "speech"
  | "sound";
export type MediaOutput = "images" | "video" | "audio";
export type MediaProvider = "kie" | "kie-suno" | "fal" | "replicate" | "openai-images" | "veo";

export interface MediaRoute {
  provider: MediaProvider;
  upstream_model: string;
  /**
   * How this upstream wants some fields on the wire: field → template where "{}" is the validated value as text.
   * kie and fal take durations as strings ("5"); fal's Veo takes "8s". Validation stays numeric (pricing needs it).
   */
  wire?: Record<string, string>;
}

/** One entry of media-models.json. */
export interface MediaModelEntry {
  id: string;
  type: MediaType;
  kind: MediaKind;
  name: string;
  description: string;
  routes: MediaRoute[];
  input: InputSchema;
  pricing: PricingRule;
  deadline_seconds: number;
  output: MediaOutput;
}

export type PrepareResult =
  | { ok: true; value: Record<string, unknown>; estimate: number }
  | { ok: false; field: string; message: string };

export interface MediaModel extends Readonly<Omit<MediaModelEntry, "pricing">> {
  readonly pricingRule: PricingRule;
  readonly pricing: CompiledPricing;
  readonly jsonSchema: Record<string, unknown>;
  readonly priceRows: PriceRow[];
  /** Validate (defaults applied) and estimate in one step: what createTask and the estimate endpoint need. */
  prepare(input: unknown): PrepareResult;
  /** µcr, whole credits, of the validated input. */
  estimate(value: Record<string, unknown>): number;
  /** µcr, whole credits, of the real output; never above the estimate. */
  actual(value: Record<string, unknown>, facts: CostFacts): number;
}

const KIND_TYPE: Record<MediaKind, MediaType> = {
  "text-to-image": "image",
  "image-edit": "image",
  "text-to-video": "video",
  "image-to-video": "video",
  "video-to-video": "video",
  music: "audio",
  speech: "audio",
  sound: "audio",
};
const TYPE_OUTPUT: Record<MediaType, MediaOutput> = { image: "images", video: "video", audio: "audio" };
const PROVIDERS: MediaProvider[] = ["kie", "kie-suno", "fal", "replicate", "openai-images", "veo"];
const ENTRY_KEYS = new Set([
  "id",
  "type",
  "kind",
  "name",
  "description",
  "routes",
  "input",
  "pricing",
  "deadline_seconds",
  "output",
]);

export function compileMediaModel(entry: unknown): MediaModel {
  if (typeof entry !== "object" || entry === null) throw new Error("media model: entry must be an object");
  const e = entry as MediaModelEntry;
  const where = `media model ${JSON.stringify(e.id ?? "?")}`;
  const fail = (m: string): never => {
    throw new Error(`${where}: ${m}`);
  };
  checkEntry(e, fail);
  checkRoutes(e, fail);
  let pricing: CompiledPricing;
  try {
    pricing = compilePricing(e.pricing);
    checkPricingAgainstInput(e.pricing, e.input);
  } catch (err) {
    return fail((err as Error).message);
  }
  return Object.freeze(modelOf(e, pricing));
}

/** The entry's own fields: id, known keys, a kind that matches its type and output, texts, deadline, input. */
function checkEntry(e: MediaModelEntry, fail: (m: string) => never): void {
  if (typeof e.id !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(e.id)) fail("id must be a model id");
  for (const k of Object.keys(e)) if (!ENTRY_KEYS.has(k)) fail(`unknown key "${k}"`);
  if (!(e.kind in KIND_TYPE)) fail(`kind must be one of ${Object.keys(KIND_TYPE).join(", ")}`);
  if (KIND_TYPE[e.kind] !== e.type) fail(`type must be "${KIND_TYPE[e.kind]}" for kind ${e.kind}`);
  if (TYPE_OUTPUT[e.type] !== e.output) fail(`output must be "${TYPE_OUTPUT[e.type]}" for type ${e.type}`);
  for (const k of ["name", "description"] as const)
    if (typeof e[k] !== "string" || !e[k].trim()) fail(`${k} is required`);
  if (!Number.isInteger(e.deadline_seconds) || e.deadline_seconds <= 0)
    fail("deadline_seconds must be a positive integer");
  try {
    checkInputSchema(e.input);
  } catch (err) {
    fail((err as Error).message);
  }
}

/** At least one route, each to a known provider, none twice; wire templates only for fields of the input. */
function checkRoutes(e: MediaModelEntry, fail: (m: string) => never): void {
  const props = e.input.properties;
  if (!Array.isArray(e.routes) || e.routes.length === 0) fail("routes must list at least one upstream");
  const seen = new Set<string>();
  for (const r of e.routes) {
    if (!PROVIDERS.includes(r?.provider)) fail(`route provider must be one of ${PROVIDERS.join(", ")}`);
    if (typeof r.upstream_model !== "string" || !r.upstream_model) fail("route upstream_model is required");
    if (seen.has(`${r.provider} ${r.upstream_model}`)) fail(`duplicate route ${r.provider} ${r.upstream_model}`);
    seen.add(`${r.provider} ${r.upstream_model}`);
    for (const k of Object.keys(r))
      if (!["provider", "upstream_model", "wire"].includes(k)) fail(`route: unknown key "${k}"`);
    for (const [f, t] of Object.entries(r.wire ?? {})) {
      if (!(f in props)) fail(`route wire names unknown field "${f}"`);
      if (typeof t !== "string" || !t.includes("{}")) fail(`route wire for "${f}" must be a template with {}`);
    }
  }
}

/** The checked entry with what the request path needs precomputed. */
function modelOf(e: MediaModelEntry, pricing: CompiledPricing): MediaModel {
  return {
    id: e.id,
    type: e.type,
    kind: e.kind,
    name: e.name,
    description: e.description,
    routes: Object.freeze(e.routes.map((r) => Object.freeze({ ...r }))) as MediaRoute[],
    input: e.input,
    pricingRule: e.pricing,
    pricing,
    deadline_seconds: e.deadline_seconds,
    output: e.output,
    jsonSchema: toJsonSchema(e.input),
    priceRows: describePricing(pricing),
    prepare(input) {
      const v = validateInput(e.input, input);
      if (!v.ok) return v;
      try {
        return { ok: true, value: v.value, estimate: estimateCost(pricing, v.value) };
      } catch (err) {
        if (err instanceof UnpricedInputError) return { ok: false, field: err.field, message: err.message };
        throw err;
      }
    },
    estimate: (value) => estimateCost(pricing, value),
    actual: (value, facts) => actualCost(pricing, value, facts),
  };
}

/** The rule may only refer to fields the input has, with types and values that can actually occur. */
function checkPricingAgainstInput(rule: PricingRule, input: InputSchema): void {
  const props = input.properties;
  const present = (f: string) => input.required.includes(f) || props[f]!.default !== undefined;
  const field = (f: string, what: string, types: PropertyDef["type"][]): PropertyDef => {
    const def = props[f];
    if (!def) throw new Error(`pricing: ${what} "${f}" is not an input field`);
    if (!types.includes(def.type)) throw new Error(`pricing: ${what} "${f}" must be ${types.join(" or ")}`);
    return def;
  };
  (rule.by ?? []).forEach((f, depth) => {
    const def = field(f, "by", ["string", "integer", "number", "boolean"]);
    if (def.type !== "boolean" && !def.enum) throw new Error(`pricing: by field "${f}" needs an enum`);
    if (!present(f)) throw new Error(`pricing: by field "${f}" must be required or have a default`);
    const allowed = def.type === "boolean" ? ["true", "false"] : def.enum!.map(String);
    for (const key of keysAt(rule.usd_by!, depth)) {
      if (!allowed.includes(key)) throw new Error(`pricing: usd_by key "${key}" is not a value of "${f}"`);
    }
  });
  if (rule.count_field) field(rule.count_field, "count_field", ["integer"]);
  if (rule.text_field) {
    field(rule.text_field, "text_field", ["string"]);
    if (!input.required.includes(rule.text_field))
      throw new Error(`pricing: text_field "${rule.text_field}" must be required`);
  }
  if (rule.seconds_field) {
    field(rule.seconds_field, "seconds_field", ["integer", "number"]);
    if (!present(rule.seconds_field) && rule.seconds === undefined && rule.estimate_seconds === undefined) {
      throw new Error(`pricing: "${rule.seconds_field}" may be absent: give it a default or the rule estimate_seconds`);
    }
  }
  if (rule.megapixels_by) {
    const def = field(rule.megapixels_by.field, "megapixels_by", ["string"]);
    if (!def.enum || !present(rule.megapixels_by.field))
      throw new Error("pricing: megapixels_by field needs an enum and a default");
    for (const v of def.enum) {
      if (!(String(v) in rule.megapixels_by.values))
        throw new Error(`pricing: no megapixels for ${rule.megapixels_by.field}=${v}`);
    }
  }
}

function keysAt(table: object, depth: number): string[] {
  if (depth === 0) return Object.keys(table);
  return Object.values(table).flatMap((t) => keysAt(t as object, depth - 1));
}

/** Compile every entry of the catalog; ids must be unique. */
export function compileMediaCatalog(entries: unknown): Map<string, MediaModel> {
  if (!Array.isArray(entries)) throw new Error("media catalog: must be an array of models");
  const out = new Map<string, MediaModel>();
  for (const entry of entries) {
    const m = compileMediaModel(entry);
    if (out.has(m.id)) throw new Error(`media catalog: duplicate id ${m.id}`);
    out.set(m.id, m);
  }
  return out;
}

/** The validated input as this route sends it: wire templates applied ("5" → "5", 8 → "8s"). */
export function toUpstreamInput(route: MediaRoute, value: Record<string, unknown>): Record<string, unknown> {
  if (!route.wire) return value;
  const out = { ...value };
  for (const [f, t] of Object.entries(route.wire)) {
    if (out[f] !== undefined) out[f] = t.replaceAll("{}", String(out[f]));
  }
  return out;
}
