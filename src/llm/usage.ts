// Token usage in one shape for every protocol, and its price in integer micro-credits (µcr, see ledger/units.ts).
//
// `input` is the UNCACHED input: the tokens billed at the input price. Each protocol reports cached tokens
// differently (Anthropic beside input, OpenAI inside it), so the normalisers below are the one place that
// knows; everything after them only ever computes
//   input×inputPrice + cacheRead×cacheReadPrice + cacheWrite×cacheWritePrice + output×outputPrice.

export interface TokenUsage {
  /** uncached input tokens, billed at the input price */
  input: number;
  /** generated tokens (reasoning/thinking included, as every vendor bills them) */
  output: number;
  /** input tokens served from the prompt cache */
  cacheRead: number;
  /** input tokens written to the prompt cache (Anthropic only today) */
  cacheWrite: number;
}

/** Integer µcr per token. A missing cache price means "billed like ordinary input". */
export interface TokenPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** Exact charge in µcr. Throws on non-integer inputs rather than letting a float into the ledger. */
export function priceUsage(u: TokenUsage, p: TokenPrices): number {
  const cacheRead = p.cacheRead ?? p.input;
  const cacheWrite = p.cacheWrite ?? p.input;
  for (const n of [u.input, u.output, u.cacheRead, u.cacheWrite, p.input, p.output, cacheRead, cacheWrite]) {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`priceUsage: not a non-negative integer: ${n}`);
  }
  const total = u.input * p.input + u.cacheRead * cacheRead + u.cacheWrite * cacheWrite + u.output * p.output;
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
  tap: { usage: TokenUsage | null; outputCharsSoFar: number },
  inputEstimate: number,
): TokenUsage {
  const estimatedOutput = estimateTokensFromChars(tap.outputCharsSoFar);
  if (!tap.usage) return { input: inputEstimate, output: estimatedOutput, cacheRead: 0, cacheWrite: 0 };
  return { ...tap.usage, output: Math.max(tap.usage.output, estimatedOutput) };
}

// ---- normalisers: vendor usage object → TokenUsage (null when the object is missing or not usage) ----

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null;
}

/** Anthropic: input_tokens already excludes cached; the cache counts stand beside it. */
export function fromAnthropicUsage(u: unknown): TokenUsage | null {
  if (!isObject(u)) return null;
  return {
    input: count(u.input_tokens),
    output: count(u.output_tokens),
    cacheRead: count(u.cache_read_input_tokens),
    cacheWrite: count(u.cache_creation_input_tokens),
  };
}

/**
 * Chat completions: prompt_tokens includes the cached ones. DeepSeek reports its cache hits as
 * prompt_cache_hit_tokens (sometimes without prompt_tokens_details), hence the fallback.
 */
export function fromChatUsage(u: unknown): TokenUsage | null {
  if (!isObject(u)) return null;
  const prompt = count(u.prompt_tokens);
  const cached = Math.min(prompt, count(u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens));
  return { input: prompt - cached, output: count(u.completion_tokens), cacheRead: cached, cacheWrite: 0 };
}

/**
 * Responses: input_tokens includes the cached ones. input_tokens_details.cache_write_tokens is reported by
 * OpenAI but not priced separately (issue 3's formula); it stays inside `input`.
 */
export function fromResponsesUsage(u: unknown): TokenUsage | null {
  if (!isObject(u)) return null;
  const input = count(u.input_tokens);
  const cached = Math.min(input, count(u.input_tokens_details?.cached_tokens));
  return { input: input - cached, output: count(u.output_tokens), cacheRead: cached, cacheWrite: 0 };
}

/** Embeddings: only prompt_tokens. */
export function fromEmbeddingsUsage(u: unknown): TokenUsage | null {
  if (!isObject(u)) return null;
  return { input: count(u.prompt_tokens), output: 0, cacheRead: 0, cacheWrite: 0 };
}
