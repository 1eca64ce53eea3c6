import type { LlmModel } from "../catalog/model";
import type { Catalog } from "../catalog/service";
import type { InputSchema, MediaModel } from "../media/model";
import { llmExample, mediaExamples } from "./model-card-examples";
import { creditsNumber, creditsText, llmListing, mediaListing, usdText, type Listing } from "./pricing-data";

// The facts of one model card, computed once per model: the HTML card (model-card.ts) and the JSON of
// GET /v1/models/{id} are two renderings of the same object, so they cannot disagree.

export type ModelRef = { kind: "llm"; model: LlmModel } | { kind: "media"; model: MediaModel };

/** By id or alias; undefined when the catalog has no such model. */
export function findModel(catalog: Catalog, id: string): ModelRef | undefined {
  const l = catalog.llm.get(id);
  if (l) return { kind: "llm", model: l };
  const m = catalog.media.get(id);
  return m && { kind: "media", model: m };
}

export interface InputField {
  name: string;
  type: string;
  required: boolean;
  description: string;
  /** The allowed values (enum), when the field has a closed set. */
  allowed?: Array<string | number>;
  /** Bounds as text ("4 – 15", "1 – 5000 characters", "at most 4 items"), when the field has any. */
  range?: string;
  default?: unknown;
}

/** Every field of a media model's input definition, in definition order: the card's input table. */
export function inputFields(def: InputSchema): InputField[] {
  return Object.entries(def.properties).map(([name, p]) => {
    const type = p.type === "array" ? `array of ${p.items ?? "url"}` : p.type;
    const f: InputField = { name, type, required: def.required.includes(name), description: p.description };
    if (p.enum) f.allowed = [...p.enum];
    const range =
      bounds(p.minimum, p.maximum, "") ??
      bounds(p.minLength, p.maxLength, " characters") ??
      bounds(p.minItems, p.maxItems, " items");
    if (range) f.range = range;
    if (p.default !== undefined) f.default = p.default;
    return f;
  });
}

function bounds(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  if (min !== undefined && max !== undefined) return `${min} – ${max}${unit}`;
  if (min !== undefined) return `at least ${min}${unit}`;
  if (max !== undefined) return `at most ${max}${unit}`;
  return undefined;
}

export interface WorkedExample {
  tokens: { input: number; output?: number };
  micros: number;
  credits: number;
  usd: string;
  /** e.g. "1,000 input + 500 output tokens = 10.5 credits (0.0105 USD)". */
  text: string;
}

/** 1,000 input (+ 500 output) tokens priced with the integer µcr-per-token prices the gateway charges with. */
export function llmWorkedExample(m: LlmModel): WorkedExample {
  const input = 1000;
  const output = m.type === "llm" ? 500 : undefined;
  const micros = input * m.prices.input + (output ?? 0) * m.prices.output;
  const what = output === undefined ? "1,000 input tokens" : "1,000 input + 500 output tokens";
  // Prices that change by the hour: the example is the off-peak price, and says what the same call costs in peak.
  const peak = m.prices.peak;
  const inPeak = peak && input * peak.input + (output ?? 0) * peak.output;
  const when =
    inPeak === undefined ? "" : ` off-peak; ${creditsText(inPeak)} credits (${usdText(inPeak)} USD) in peak hours`;
  return {
    tokens: output === undefined ? { input } : { input, output },
    micros,
    credits: creditsNumber(micros),
    usd: usdText(micros),
    text: `${what} = ${creditsText(micros)} credits (${usdText(micros)} USD)${when}`,
  };
}

export interface CardFacts {
  id: string;
  cardPath: string;
  ref: ModelRef;
  listing: Listing;
  worked?: WorkedExample;
  llm?: ReturnType<typeof llmExample>;
  media?: ReturnType<typeof mediaExamples>;
  fields?: InputField[];
  /** The JSON of GET /v1/models/{id}: the public model record plus what the card shows. */
  json: Record<string, unknown>;
}

export function cardPath(id: string): string {
  return `/models/${id.split("/").map(encodeURIComponent).join("/")}`;
}

export function cardFacts(catalog: Catalog, ref: ModelRef, baseUrl: string): CardFacts {
  const base = catalog.publicModel(ref.model.id) as Record<string, unknown>;
  const path = cardPath(ref.model.id);
  // A retired model is not served: its record keeps the prices it was sold at, but no request to copy (each
  // would answer 410), as its HTML card does.
  if (base.status === "retired") {
    const listing = ref.kind === "llm" ? llmListing(ref.model) : mediaListing(ref.model);
    return {
      id: ref.model.id,
      cardPath: path,
      ref,
      listing,
      json: { ...base, card_url: baseUrl + path, price_rows: listing.rows },
    };
  }
  if (ref.kind === "llm") {
    const m = ref.model;
    const listing = llmListing(m);
    const worked = llmWorkedExample(m);
    const ex = llmExample(m, baseUrl);
    return {
      id: m.id,
      cardPath: path,
      ref,
      listing,
      worked,
      llm: ex,
      json: {
        ...base,
        card_url: baseUrl + path,
        price_rows: listing.rows,
        worked_example: { tokens: worked.tokens, credits: worked.credits, usd: worked.usd, text: worked.text },
        example: { request: ex.request, sdk: ex.sdk },
      },
    };
  }
  const m = ref.model;
  const listing = mediaListing(m);
  const ex = mediaExamples(m);
  return {
    id: m.id,
    cardPath: path,
    ref,
    listing,
    media: ex,
    fields: inputFields(m.input),
    json: {
      ...base,
      card_url: baseUrl + path,
      price_rows: listing.rows,
      input_schema: m.jsonSchema,
      example: {
        input: ex.input,
        estimated_credits: creditsNumber(ex.estimateMicros),
        estimated_usd: usdText(ex.estimateMicros),
        requests: { native: ex.native, alias: ex.alias, estimate: ex.estimate },
      },
    },
  };
}

/**
 * Facts per model, computed on first use and kept: the catalog is immutable while the process runs, so a card is
 * built once per model, not once per request.
 */
export class CardCache {
  private readonly byId = new Map<string, CardFacts>();
  constructor(
    private readonly catalog: Catalog,
    private readonly baseUrl: string,
  ) {}

  get(id: string): CardFacts | undefined {
    const ref = findModel(this.catalog, id);
    if (!ref) return undefined;
    let f = this.byId.get(ref.model.id);
    if (!f) this.byId.set(ref.model.id, (f = cardFacts(this.catalog, ref, this.baseUrl)));
    return f;
  }
}

const shared = new WeakMap<Catalog, CardCache>();
/** One CardCache per catalog, shared by the HTML cards and GET /v1/models/{id}. */
export function cardsFor(catalog: Catalog, baseUrl: string): CardCache {
  let c = shared.get(catalog);
  if (!c) shared.set(catalog, (c = new CardCache(catalog, baseUrl)));
  return c;
}
