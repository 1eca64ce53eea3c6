import { describeSchedule } from "../catalog/peak";
import type { Catalog } from "../catalog/service";
import { endpointsOf, MODEL_TYPES, TASK_ENDPOINT, type LlmModel, type ModelType } from "../catalog/model";
import { ceilToWholeCredit, MICROS_PER_CREDIT, usdToMicros } from "../ledger/units";
import type { MediaModel } from "../media/model";
import { MODEL_STATUSES, type ModelStatus } from "../catalog/lifecycle";

// The price list every public page is rendered from: one listing per model with its price rows already in display
// form. Built from the same compiled catalog the request path bills with (LLM: integer µcr per token; media: the
// rule's describePricing rows), so the page cannot show a price the gateway does not charge.

export interface PriceRow {
  /** What the row prices: "input", "output", "cache read", "cache write", or a media rule's label. */
  label: string;
  /** Exact USD text, e.g. "3.00" or "0.0325". */
  usd: string;
  /** Exact credits text (1 credit = 0.001 USD), e.g. "3,000" or "32.5". */
  credits: string;
  /** The billing unit, e.g. "per million tokens", "per image", "per second". */
  unit: string;
}

export interface Listing {
  id: string;
  name: string;
  type: ModelType;
  /** Who serves it: the LLM provider, or the media model's first upstream route. */
  provider: string;
  endpoint: string;
  /** every endpoint serving it: `endpoint` (native) first, then those it is translated on, at the same price */
  endpoints: string[];
  description: string;
  rows: PriceRow[];
  /** when the rows apply, for prices that change by the hour (catalog/peak.ts describeSchedule) */
  note?: string;
  /** where the model stands with its provider (catalog/lifecycle.ts); set by allListings */
  status?: ModelStatus;
}

export const TYPE_ORDER = MODEL_TYPES;
export const TYPE_LABEL: Record<ModelType, string> = {
  llm: "LLM",
  embedding: "Embedding",
  image: "Image",
  video: "Video",
  audio: "Audio",
};

const PER_MILLION = "per million tokens";

export function llmListing(m: LlmModel): Listing {
  // A row from what `unit` costs in µcr: USD and credits are the same integer at 9 and 6 decimals.
  const row = (label: string, micros: number, unit: string): PriceRow => ({
    label,
    usd: formatMicros(micros, 9, 2),
    credits: formatMicros(micros, 6, 0),
    unit,
  });
  // A million tokens at µcr per token; the amount is numerically the price in credits per million tokens.
  const perMillion = (label: string, microsPerToken: number) => row(label, microsPerToken * 1_000_000, PER_MILLION);
  const rows = [perMillion("input", m.prices.input)];
  if (m.type === "llm") rows.push(perMillion("output", m.prices.output));
  // Cache prices are listed only where the catalog names them; otherwise cached tokens bill at the input price.
  if (m.pricing.cache_read != null) rows.push(perMillion("cache read", m.prices.cacheRead));
  if (m.pricing.cache_write != null) rows.push(perMillion("cache write", m.prices.cacheWrite));
  if (m.pricing.cache_write_1h != null) rows.push(perMillion("cache write, 1 hour", m.prices.cacheWrite1h));
  const long = m.prices.longContext;
  if (long) {
    // Every token of a call whose prompt is longer than the threshold bills at these.
    const over = `, prompts over ${long.aboveInputTokens.toLocaleString("en-US")} tokens`;
    rows.push(perMillion("input" + over, long.input));
    if (m.type === "llm") rows.push(perMillion("output" + over, long.output));
    if (m.pricing.long_context?.cache_read != null) rows.push(perMillion("cache read" + over, long.cacheRead));
    if (m.pricing.long_context?.cache_write != null) rows.push(perMillion("cache write" + over, long.cacheWrite));
    if (m.pricing.long_context?.cache_write_1h != null)
      rows.push(perMillion("cache write, 1 hour" + over, long.cacheWrite1h));
  }
  const peak = m.prices.peak;
  if (peak) {
    // The rows above are then the off-peak prices; these bill in the schedule's hours (note).
    const at = ", peak hours";
    rows.push(perMillion("input" + at, peak.input));
    if (m.type === "llm") rows.push(perMillion("output" + at, peak.output));
    if (m.pricing.peak?.cache_read != null) rows.push(perMillion("cache read" + at, peak.cacheRead));
    if (m.pricing.peak?.cache_write != null) rows.push(perMillion("cache write" + at, peak.cacheWrite));
    if (m.pricing.peak?.cache_write_1h != null) rows.push(perMillion("cache write, 1 hour" + at, peak.cacheWrite1h));
  }
  if (m.prices.webSearch !== undefined) rows.push(row("web search", m.prices.webSearch * 1000, "per 1,000 searches"));
  return {
    id: m.id,
    name: m.name,
    type: m.type,
    provider: m.provider,
    endpoint: m.endpoint,
    endpoints: endpointsOf(m),
    description: m.description,
    rows,
    ...(peak && { note: describeSchedule(peak.schedule) }),
  };
}

/**
 * Media units a task is charged a rate of (its seconds, megapixels, characters): shown exactly, the task's total is
 * rounded up. Any other unit (an image, a clip, a request) is what one task buys: shown as the whole credits that
 * task is charged, as the estimate endpoint gives them.
 */
const RATE_UNITS = ["per second", "per megapixel", "per 1,000 characters"];
export const isRateUnit = (unit: string) => RATE_UNITS.some((u) => unit.startsWith(u));

export function mediaListing(m: MediaModel): Listing {
  const rows = m.priceRows.map((r) => {
    const micros = usdToMicros(r.usd);
    return {
      label: r.label,
      usd: r.usd,
      credits: formatMicros(isRateUnit(r.unit) ? micros : ceilToWholeCredit(micros), 6, 0),
      unit: r.unit,
    };
  });
  return {
    id: m.id,
    name: m.name,
    type: m.type,
    provider: m.routes[0]!.provider,
    endpoint: TASK_ENDPOINT,
    endpoints: [TASK_ENDPOINT],
    description: m.description,
    rows,
  };
}

/**
 * Every model on sale, LLMs first, then embeddings, image, video, audio; within a type current models before legacy
 * ones, then by name. Retired models are not on sale (they answer 410) and are left out.
 */
export function allListings(catalog: Catalog): Listing[] {
  const all = [...catalog.llmList.map(llmListing), ...catalog.mediaList.map(mediaListing)];
  for (const l of all) l.status = catalog.lifecycle.get(l.id)?.status ?? "current";
  const rank = (l: Listing) => MODEL_STATUSES.indexOf(l.status!);
  return all
    .filter((l) => l.status !== "retired")
    .sort(
      (a, b) =>
        TYPE_ORDER.indexOf(a.type) - TYPE_ORDER.indexOf(b.type) || rank(a) - rank(b) || a.name.localeCompare(b.name),
    );
}

/**
 * Exact decimal text of an integer amount scaled by 10^scale (µcr: scale 6 → credits, scale 9 → USD), with
 * thousands separators, trailing zeros trimmed but at least `minDecimals` kept. Integer arithmetic only.
 */
export function formatMicros(amount: number, scale: number, minDecimals: number): string {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`not an exact amount: ${amount}`);
  const neg = amount < 0;
  const digits = String(Math.abs(amount)).padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = digits
    .slice(digits.length - scale)
    .replace(/0+$/, "")
    .padEnd(minDecimals, "0");
  return (neg ? "-" : "") + whole + (frac ? "." + frac : "");
}

/** µcr → credits text ("10.5", "1,200"). */
export const creditsText = (micros: number) => formatMicros(micros, 6, 0);
/** µcr → USD text ("0.0105"). */
export const usdText = (micros: number) => formatMicros(micros, 9, 2);
/** µcr → credits as a JSON number (display only, never fed back into money). */
export const creditsNumber = (micros: number) => micros / MICROS_PER_CREDIT;
