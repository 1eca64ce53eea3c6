// Token usage in one shape for every protocol, and its price in integer micro-credits (µcr, see ledger/units.ts).
// `input` is the UNCACHED input: each protocol reports cached tokens differently (Anthropic beside input, OpenAI
// inside it), so the normalisers below are the one place that knows, and everything after them only prices the
// four token counts, plus one-hour cache writes and web searches where an answer states them.

import type { LlmModel, TokenPriceSet } from "../catalog/model";

export interface TokenUsage {
  /** uncached input tokens, billed at the input price */
  input: number;
  /** generated tokens (reasoning/thinking included, as every vendor bills them) */
  output: number;
  /** input tokens served from the prompt cache */
  cacheRead: number;
  /** input tokens written to the prompt cache (Anthropic only today) */
  cacheWrite: number;
  /** of `cacheWrite`, the tokens written with a one-hour lifetime (Anthropic `ttl: "1h"`); absent: none */
  cacheWrite1h?: number;
  /** web searches the upstream ran for the answer (each billed at the model's web-search price); absent: none */
  webSearches?: number;
  /**
   * The sampling steps of one call, when the upstream ran more than one and bills each (Anthropic's server-side
   * compaction: a summarising step, then the answer). The counts above are then their sums; each step is priced on
   * its own, so a long-context tier applies to the step whose prompt is long, not to the sum. Absent: one step.
   */
  steps?: TokenUsage[];
}

/** Integer µcr per token. A missing cache price means "billed like ordinary input". */
export interface TokenPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** one-hour cache writes; absent: billed like other cache writes */
  cacheWrite1h?: number;
  /** µcr per web search; absent: the model prices none (requests offering the tool are refused, paid-tools.ts) */
  webSearch?: number;
}

export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** The tokens of a call's prompt, cached or not: what long-context prices are decided by. */
export function promptTokens(usage: TokenUsage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

/**
 * The prices of a call whose prompt is `prompt` tokens long: the model's long-context prices above their threshold
 * (every token of the call, as the upstreams bill), else its ordinary ones. A model with time-of-day prices not yet
 * stamped with the moment its call went upstream (catalog/peak.ts modelAt) is priced at its peak, the higher, prices:
 * what its hold is sized at.
 */
export function pricesFor(prices: LlmModel["prices"], prompt: number): TokenPriceSet & { webSearch?: number } {
  if (prices.peak) return { ...prices.peak, webSearch: prices.webSearch };
  const long = prices.longContext;
  return long && prompt > long.aboveInputTokens ? { ...long, webSearch: prices.webSearch } : prices;
}

/**
 * The charge for a call's stated usage: each sampling step at the prices its own prompt length selects, plus the
 * web searches of the call (counted once, at the call's level).
 */
export function chargeUsage(usage: TokenUsage, prices: LlmModel["prices"]): number {
  if (!usage.steps?.length) return priceUsage(usage, pricesFor(prices, promptTokens(usage)));
  let total = 0;
  for (const step of usage.steps) total += priceUsage(step, pricesFor(prices, promptTokens(step)));
  total += priceUsage({ ...ZERO_USAGE, webSearches: usage.webSearches }, prices);
  if (!Number.isSafeInteger(total)) throw new RangeError(`chargeUsage: charge beyond 2^53: ${total}`);
  return total;
}

// input×inputPrice + cacheRead×cacheReadPrice + cacheWrite×cacheWritePrice + output×outputPrice, plus what an
// upstream bills on top when the answer states it: one-hour cache writes at their own price (Anthropic, 2× input)
// and web searches at the per-search price (protocols/paid-tools.ts). Absent, they add nothing.
/** Exact charge in µcr. Throws on non-integer inputs rather than letting a float into the ledger. */
export function priceUsage(usage: TokenUsage, prices: TokenPrices): number {
  const cacheRead = prices.cacheRead ?? prices.input;
  const cacheWrite = prices.cacheWrite ?? prices.input;
  const cacheWrite1h = prices.cacheWrite1h ?? cacheWrite;
  const webSearch = prices.webSearch ?? 0;
  const written1h = usage.cacheWrite1h ?? 0;
  const searches = usage.webSearches ?? 0;
  for (const n of [
    usage.input,
    usage.output,
    usage.cacheRead,
    usage.cacheWrite,
    written1h,
    searches,
    prices.input,
    prices.output,
    cacheRead,
    cacheWrite,
    cacheWrite1h,
    webSearch,
  ]) {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`priceUsage: not a non-negative integer: ${n}`);
  }
  if (written1h > usage.cacheWrite)
    throw new RangeError(
      `priceUsage: one-hour cache writes (${written1h}) above all cache writes (${usage.cacheWrite})`,
    );
  const total =
    usage.input * prices.input +
    usage.cacheRead * cacheRead +
    (usage.cacheWrite - written1h) * cacheWrite +
    written1h * cacheWrite1h +
    usage.output * prices.output +
    searches * webSearch;
  if (!Number.isSafeInteger(total)) throw new RangeError(`priceUsage: charge beyond 2^53: ${total}`);
  return total;
}

/**
 * The partial-output estimate used when the client goes away mid-stream: about 4 characters per token, rounded
 * up. It is deliberately simple (no tokenizer on the hot path); the caller caps the charge at the hold anyway.
 */
export const CHARS_PER_TOKEN = 4;
export function estimateTokensFromChars(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Usage to settle when a stream was cut by the client: input as the stream stated it (Anthropic states it in
 * message_start) or else the caller's estimate from the request size; output as the larger of what the stream
 * stated and the estimate from the characters streamed so far.
 */
export function partialUsage(
  tap: { usage: TokenUsage | null; outputCharsSoFar: number; webSearchesSoFar?: number },
  inputEstimate: number,
): TokenUsage {
  const estimatedOutput = estimateTokensFromChars(tap.outputCharsSoFar);
  const usage: TokenUsage = tap.usage
    ? { ...tap.usage, output: Math.max(tap.usage.output, estimatedOutput) }
    : { input: inputEstimate, output: estimatedOutput, cacheRead: 0, cacheWrite: 0 };
  // Searches the stream showed before it was cut were run, and billed upstream, whatever came after.
  const searches = Math.max(usage.webSearches ?? 0, tap.webSearchesSoFar ?? 0);
  if (searches) usage.webSearches = searches;
  return usage;
}

// ---- normalisers: vendor usage object → TokenUsage (null when the object is missing or not usage) ----

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null;
}

/**
 * A usage object whose counts can be read: at least one of `fields` is a number and none holds anything else (a
 * count sent as a string would otherwise read as 0 and the call go free; unreadable usage is estimated instead).
 */
function readableUsage(stated: unknown, fields: readonly string[]): stated is Record<string, any> {
  if (!isObject(stated)) return false;
  let numbers = 0;
  for (const field of fields) {
    const value = stated[field];
    if (typeof value === "number" && Number.isFinite(value)) numbers++;
    else if (value != null) return false;
  }
  return numbers > 0;
}

/**
 * Anthropic: input_tokens already excludes cached; the cache counts stand beside it. cache_creation splits the
 * cache writes by lifetime; server_tool_use counts the web searches Anthropic ran (and bills per search).
 */
export function fromAnthropicUsage(stated: unknown): TokenUsage | null {
  if (
    !readableUsage(stated, ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"])
  )
    return null;
  const usage = anthropicCounts(stated);
  withAnthropicExtras(usage, stated);
  return usage;
}

function anthropicCounts(stated: Record<string, any>): TokenUsage {
  return {
    input: count(stated.input_tokens),
    output: count(stated.output_tokens),
    cacheRead: count(stated.cache_read_input_tokens),
    cacheWrite: count(stated.cache_creation_input_tokens),
  };
}

/** Adds the one-hour cache writes and web searches `raw` states (only when non-zero: the common usage stays four numbers). */
export function withAnthropicExtras(usage: TokenUsage, raw: Record<string, any>): void {
  const written1h = Math.min(usage.cacheWrite, count(raw.cache_creation?.ephemeral_1h_input_tokens));
  if (written1h) usage.cacheWrite1h = written1h;
  const searches = count(raw.server_tool_use?.web_search_requests);
  if (searches) usage.webSearches = searches;
  withIterations(usage, raw.iterations);
}

/**
 * Server-side compaction (compact_20260112): `usage.iterations` lists every sampling step of the call, the
 * compaction step and the answer, and Anthropic bills all of them; the top-level counts are only the last step.
 * The counts become the sums over the steps, and the steps are kept to be priced one by one.
 */
function withIterations(usage: TokenUsage, iterations: unknown): void {
  if (!Array.isArray(iterations) || iterations.length === 0) return;
  const steps = iterations.filter(isObject).map((it) => {
    const step = anthropicCounts(it);
    const written1h = Math.min(step.cacheWrite, count(it.cache_creation?.ephemeral_1h_input_tokens));
    if (written1h) step.cacheWrite1h = written1h;
    return step;
  });
  if (steps.length === 0) return;
  const sum = (k: "input" | "output" | "cacheRead" | "cacheWrite" | "cacheWrite1h") =>
    steps.reduce((n, s) => n + (s[k] ?? 0), 0);
  usage.input = sum("input");
  usage.output = sum("output");
  usage.cacheRead = sum("cacheRead");
  usage.cacheWrite = sum("cacheWrite");
  const written1h = sum("cacheWrite1h");
  if (written1h) usage.cacheWrite1h = written1h;
  else delete usage.cacheWrite1h;
  usage.steps = steps;
}

/**
 * Chat completions: prompt_tokens includes the cached ones. DeepSeek reports its cache hits as
 * prompt_cache_hit_tokens (sometimes without prompt_tokens_details), hence the fallback.
 */
export function fromChatUsage(stated: unknown): TokenUsage | null {
  if (!readableUsage(stated, ["prompt_tokens", "completion_tokens", "total_tokens"])) return null;
  const prompt = count(stated.prompt_tokens);
  const cached = Math.min(prompt, count(stated.prompt_tokens_details?.cached_tokens ?? stated.prompt_cache_hit_tokens));
  // OpenAI's completion_tokens includes reasoning, and total = prompt + completion. Some OpenAI-compatible upstreams
  // (Gemini's thinking models, by several gateways' reports) leave reasoning out of completion_tokens yet count it
  // in total_tokens, and bill it as output. When total says there is more than completion, the reasoning stated
  // beside it is added (at most up to total: anything else total counts, such as tool-use prompt tokens, is not).
  const completion = count(stated.completion_tokens);
  const beyond = count(stated.total_tokens) - prompt;
  const reasoning = count(stated.completion_tokens_details?.reasoning_tokens);
  const output = beyond <= completion ? completion : reasoning ? Math.min(beyond, completion + reasoning) : beyond;
  return { input: prompt - cached, output, cacheRead: cached, cacheWrite: 0 };
}

/**
 * Responses: input_tokens includes the cached ones and the ones written to the cache
 * (input_tokens_details.cache_write_tokens), which models such as GPT-6.2 Sol bill at their own price; a model
 * whose catalog entry names no cache-write price bills them as input, as before. Web searches are not in the usage
 * object but in the response's output, one `web_search_call` item per search: `output` counts them when given.
 */
export function fromResponsesUsage(stated: unknown, output?: unknown): TokenUsage | null {
  if (!readableUsage(stated, ["input_tokens", "output_tokens", "total_tokens"])) return null;
  const input = count(stated.input_tokens);
  const cached = Math.min(input, count(stated.input_tokens_details?.cached_tokens));
  const written = Math.min(input - cached, count(stated.input_tokens_details?.cache_write_tokens));
  const usage: TokenUsage = {
    input: input - cached - written,
    output: count(stated.output_tokens),
    cacheRead: cached,
    cacheWrite: written,
  };
  const searches = Array.isArray(output) ? output.filter((item) => item?.type === "web_search_call").length : 0;
  if (searches) usage.webSearches = searches;
  return usage;
}

/** Embeddings: only prompt_tokens. */
export function fromEmbeddingsUsage(stated: unknown): TokenUsage | null {
  if (!readableUsage(stated, ["prompt_tokens", "total_tokens"])) return null;
  return { input: count(stated.prompt_tokens), output: 0, cacheRead: 0, cacheWrite: 0 };
}
