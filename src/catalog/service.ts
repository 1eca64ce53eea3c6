import { readFileSync } from "node:fs";
import { usdPerMillionToMicrosPerToken, usdPerThousandToMicrosPerCall } from "../ledger/units";
import builtinLlm from "./models.json";
import builtinMedia from "./media-models.json";
import { endpointsOf, LLM_ENDPOINTS, TASK_ENDPOINT, type LlmEntry, type LlmModel, type TokenPriceSet } from "./model";
import { compileMediaModel, type MediaModel } from "../media/model";

// The catalog: every model the gateway sells, loaded and checked once at startup. A bad entry stops startup with a
// message naming it, so a price typo never reaches a customer. Lookups on the hot path are one Map.get.

export class CatalogError extends Error {}

export class Catalog {
  readonly llm = new Map<string, LlmModel>(); // by id and alias
  readonly media = new Map<string, MediaModel>();
  readonly llmList: LlmModel[] = [];
  readonly mediaList: MediaModel[] = [];
  /** A fingerprint of the loaded data (for ETags of pages rendered from it). */
  readonly version: string;

  constructor(llmEntries: LlmEntry[], mediaEntries: unknown[]) {
    for (const e of llmEntries) {
      const m = compileLlm(e);
      this.llmList.push(m);
      for (const name of [m.id, ...(m.aliases ?? [])]) {
        // An alias equal to another model's id (or alias) would silently take that name over: refuse at startup.
        if (this.llm.has(name)) throw new CatalogError(`catalog entry ${JSON.stringify(m.id)}: ${JSON.stringify(name)} already names ${this.llm.get(name)!.id}`);
        this.llm.set(name, m);
      }
    }
    for (const e of mediaEntries) {
      let m: MediaModel;
      try {
        m = compileMediaModel(e);
      } catch (err) {
        throw new CatalogError(`catalog entry ${JSON.stringify((e as any)?.id)}: ${(err as Error).message}`);
      }
      if (this.llm.has(m.id) || this.media.has(m.id)) throw new CatalogError(`catalog entry ${JSON.stringify(m.id)}: duplicate id`);
      this.mediaList.push(m);
      this.media.set(m.id, m);
    }
    this.version = new Bun.CryptoHasher("sha1").update(JSON.stringify([llmEntries, mediaEntries])).digest("hex").slice(0, 16);
  }

  /** A media model by id; a unique "vendor/" suffix match is accepted too ("seedance-2-fast" → "bytedance/seedance-2-fast"). */
  findMedia(id: unknown): MediaModel | undefined {
    if (typeof id !== "string" || !id) return undefined;
    const exact = this.media.get(id);
    if (exact) return exact;
    const hits = this.mediaList.filter((m) => m.id.endsWith("/" + id));
    return hits.length === 1 ? hits[0] : undefined;
  }

  /** The model list of GET /v1/models (OpenAI list shape plus our fields). */
  publicList(): object[] {
    return [...this.llmList.map(publicLlm), ...this.mediaList.map((m) => this.publicMedia(m))];
  }

  publicModel(id: string): object | undefined {
    const l = this.llm.get(id);
    if (l) return publicLlm(l);
    const m = this.media.get(id);
    return m && this.publicMedia(m);
  }

  private publicMedia(m: MediaModel) {
    return {
      id: m.id,
      object: "model",
      owned_by: m.routes[0]!.provider,
      type: m.type,
      kind: m.kind,
      name: m.name,
      description: m.description,
      endpoint: TASK_ENDPOINT,
      capabilities: [m.kind],
      pricing: { currency: "USD", unit: m.pricingRule.unit, rows: m.priceRows },
    };
  }
}

function publicLlm(m: LlmModel) {
  const pricing: Record<string, number> = { input: m.pricing.input };
  if (m.type === "llm") pricing.output = m.pricing.output!;
  if (m.pricing.cache_read != null) pricing.cache_read = m.pricing.cache_read;
  if (m.pricing.cache_write != null) pricing.cache_write = m.pricing.cache_write;
  if (m.pricing.cache_write_1h != null) pricing.cache_write_1h = m.pricing.cache_write_1h;
  if (m.pricing.web_search_per_1k_calls != null) pricing.web_search_per_1k_calls = m.pricing.web_search_per_1k_calls;
  const long = m.pricing.long_context;
  return {
    id: m.id,
    object: "model",
    owned_by: m.provider,
    type: m.type,
    name: m.name,
    description: m.description,
    endpoint: m.endpoint,
    endpoints: endpointsOf(m),
    aliases: m.aliases ?? [],
    context_window: m.context_window ?? null,
    max_output_tokens: m.max_output_tokens ?? null,
    capabilities: m.capabilities,
    pricing: { currency: "USD", unit: "per_million_tokens", ...pricing, ...(long && { long_context: long }) },
  };
}

function compileLlm(e: LlmEntry): LlmModel {
  const where = `catalog entry ${JSON.stringify(e?.id)}`;
  if (!e || typeof e.id !== "string" || !e.id) throw new CatalogError(`${where}: missing id`);
  if (e.type !== "llm" && e.type !== "embedding") throw new CatalogError(`${where}: type must be llm or embedding`);
  if (!LLM_ENDPOINTS.includes(e.endpoint)) throw new CatalogError(`${where}: endpoint must be one of ${LLM_ENDPOINTS.join(", ")}`);
  if (!e.provider || !e.upstream_model) throw new CatalogError(`${where}: provider and upstream_model are required`);
  if (!e.pricing || e.pricing.input == null || (e.type === "llm" && e.pricing.output == null))
    throw new CatalogError(`${where}: pricing needs input${e.type === "llm" ? " and output" : ""} (USD per million tokens)`);
  try {
    const prices: LlmModel["prices"] = tokenPrices(e.pricing, null);
    if (e.pricing.web_search_per_1k_calls != null) {
      prices.webSearch = usdPerThousandToMicrosPerCall(e.pricing.web_search_per_1k_calls);
      if (prices.webSearch < 0) throw new RangeError("prices must not be negative");
    }
    const long = e.pricing.long_context;
    if (long != null) {
      if (!Number.isSafeInteger(long.above_input_tokens) || long.above_input_tokens <= 0) throw new RangeError("long_context.above_input_tokens must be a positive integer");
      if (long.input == null) throw new RangeError("long_context needs input (USD per million tokens)");
      prices.longContext = { aboveInputTokens: long.above_input_tokens, ...tokenPrices(long, prices) };
    }
    return { ...e, capabilities: e.capabilities ?? [], prices };
  } catch (err) {
    throw new CatalogError(`${where}: ${(err as Error).message}`);
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
): TokenPriceSet {
  const price = (usd: number | undefined, otherwise: number) => (usd == null ? otherwise : usdPerMillionToMicrosPerToken(usd));
  const input = usdPerMillionToMicrosPerToken(p.input);
  const cacheWrite = price(p.cache_write, base?.cacheWrite ?? input);
  const set = {
    input,
    output: price(p.output, base?.output ?? 0),
    cacheRead: price(p.cache_read, base?.cacheRead ?? input),
    cacheWrite,
    cacheWrite1h: price(p.cache_write_1h, base?.cacheWrite1h ?? cacheWrite),
  };
  for (const v of Object.values(set)) if (v < 0) throw new RangeError("prices must not be negative");
  return set;
}

/** Built-in data merged with the operator's CATALOG_PATH file (same id replaces, new id adds). */
export function loadCatalog(overridePath?: string): Catalog {
  const llm = new Map<string, any>((builtinLlm as any[]).map((e) => [e.id, e]));
  const media = new Map<string, any>((builtinMedia as any[]).map((e) => [e.id, e]));
  if (overridePath) {
    let extra: unknown;
    try {
      extra = JSON.parse(readFileSync(overridePath, "utf8"));
    } catch (err) {
      throw new CatalogError(`CATALOG_PATH ${overridePath}: ${(err as Error).message}`);
    }
    if (!Array.isArray(extra)) throw new CatalogError(`CATALOG_PATH ${overridePath}: must hold a JSON array of model entries`);
    for (const e of extra as any[]) {
      const isLlm = e?.type === "llm" || e?.type === "embedding";
      (isLlm ? llm : media).set(e?.id, e);
      (isLlm ? media : llm).delete(e?.id);
    }
  }
  return new Catalog([...llm.values()], [...media.values()]);
}
