// Types of the model catalog (data in models.json and media-models.json; operators extend it with CATALOG_PATH).

import type { PeakPrices } from "./peak";

export type ModelType = "llm" | "embedding" | "image" | "video" | "audio";
/** Every model type, in the order pages list them. */
export const MODEL_TYPES: readonly ModelType[] = ["llm", "embedding", "image", "video", "audio"];
export type LlmEndpoint = "/v1/messages" | "/v1/responses" | "/v1/chat/completions" | "/v1/embeddings";
export const TASK_ENDPOINT = "/api/v1/jobs/createTask";

/** An LLM or embedding entry as written in the data file (prices in USD per million tokens). */
export interface LlmEntry {
  id: string;
  aliases?: string[];
  type: "llm" | "embedding";
  name: string;
  description: string;
  endpoint: LlmEndpoint;
  provider: string;
  upstream_model: string;
  context_window?: number;
  max_output_tokens?: number;
  capabilities: string[];
  /**
   * USD per million tokens, except web_search_per_1k_calls (USD per 1,000 web searches the upstream runs; absent:
   * requests offering the model a web-search tool are refused). cache_write_1h: cache writes with a one-hour
   * lifetime (absent: priced as cache_write). long_context: the prices of every token of a call whose prompt
   * (input, cached or not) is longer than `above_input_tokens`, as Gemini Pro (200k), Claude Sonnet with its 1M
   * context (200k) and Grok 4.20 (199,999: xAI's tier starts at a prompt of 200k) bill; a kind it leaves out keeps
   * its ordinary price. peak: prices in set hours of the week (catalog/peak.ts), the ordinary prices being the
   * off-peak ones.
   */
  pricing: {
    input: number;
    output?: number;
    cache_read?: number;
    cache_write?: number;
    cache_write_1h?: number;
    web_search_per_1k_calls?: number;
    long_context?: {
      above_input_tokens: number;
      input: number;
      output?: number;
      cache_read?: number;
      cache_write?: number;
      cache_write_1h?: number;
    };
    peak?: {
      utc_offset: string;
      days: string[];
      windows: [string, string][];
      holidays?: string[];
      holidays_through?: string;
      input: number;
      output?: number;
      cache_read?: number;
      cache_write?: number;
      cache_write_1h?: number;
    };
  };
}

/** Integer µcr per token of each kind. */
export interface TokenPriceSet {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h: number;
}

/** An LLM entry ready for the hot path: integer µcr per token, looked up once at startup. */
export interface LlmModel extends LlmEntry {
  prices: TokenPriceSet & {
    webSearch?: number;
    /** the prices of a call whose prompt is longer than `aboveInputTokens` (pricing.long_context) */
    longContext?: TokenPriceSet & { aboveInputTokens: number };
    /** the prices in peak hours and their schedule (pricing.peak); the others are then the off-peak prices */
    peak?: PeakPrices;
  };
}

export const LLM_ENDPOINTS: LlmEndpoint[] = ["/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/embeddings"];

/** The three protocols every LLM is served on: natively on its `endpoint`, translated on the others. */
export const CHAT_ENDPOINTS: LlmEndpoint[] = ["/v1/messages", "/v1/responses", "/v1/chat/completions"];

/** The endpoints serving a model: its native one first, then the translated ones; embeddings only their own. */
export function endpointsOf(m: Pick<LlmEntry, "type" | "endpoint">): LlmEndpoint[] {
  if (m.type !== "llm") return [m.endpoint];
  return [m.endpoint, ...CHAT_ENDPOINTS.filter((e) => e !== m.endpoint)];
}

/**
 * The day the built-in catalog (models.json, media-models.json) was last checked against the providers' own pages:
 * every built-in entry's `checked` date is this day or later (test/catalog/sources.test.ts).
 */
export const CATALOG_RELEASED = "2026-11-27";
