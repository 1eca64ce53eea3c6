// What both sides of the Anthropic codec share: usage and stop-reason mapping, error types, cache hints, tool ids,
// and how another provider's reasoning rides in a thinking block's `signature`.

import { deeperThan, MAX_NESTING } from "../../protocols/common";
import {
  openOpaque,
  sealOpaque,
  TranslationError,
  type CacheHint,
  type IrUsage,
  type ReasoningPart,
  type StopReason,
} from "../ir";

const STOPS: ReadonlySet<string> = new Set([
  "end_turn",
  "tool_use",
  "max_tokens",
  "stop_sequence",
  "refusal",
  "pause_turn",
]);

/** Anthropic's stop_reason as an IR one; running out of context window is running out of tokens to the client. */
export function stopFromAnthropic(v: unknown): StopReason {
  if (typeof v === "string" && STOPS.has(v)) return v as StopReason;
  return v === "model_context_window_exceeded" ? "max_tokens" : "end_turn";
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/** Anthropic usage (input_tokens excludes cache reads and writes) as IrUsage (input includes them). */
export function usageFromAnthropic(u: any): IrUsage | null {
  if (!u || typeof u !== "object") return null;
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return {
    input: count(u.input_tokens) + cacheRead + cacheWrite,
    cacheRead,
    cacheWrite,
    output: count(u.output_tokens),
    reasoning: count(u.output_tokens_details?.thinking_tokens),
  };
}

/** IrUsage in Anthropic's fields; thinking tokens only when there were some (the field is recent). */
export function usageToAnthropic(u: IrUsage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    input_tokens: Math.max(0, u.input - u.cacheRead - u.cacheWrite),
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    output_tokens: u.output,
  };
  if (u.reasoning > 0) out.output_tokens_details = { thinking_tokens: u.reasoning };
  return out;
}

// Anthropic's error type follows the HTTP status; this is the reverse, for in-stream errors that have only a type.
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function statusOfErrorType(type: unknown): number {
  return (typeof type === "string" && STATUS_BY_TYPE[type]) || 500;
}

export function cacheFromAnthropic(c: any): CacheHint | undefined {
  if (c?.type !== "ephemeral") return undefined;
  return c.ttl === "5m" || c.ttl === "1h" ? { type: "ephemeral", ttl: c.ttl } : { type: "ephemeral" };
}

export function cacheToAnthropic(c: CacheHint | undefined): Record<string, unknown> {
  return c ? { cache_control: c.ttl ? { type: c.type, ttl: c.ttl } : { type: c.type } } : {};
}

// Anthropic tool ids allow only [A-Za-z0-9_-]. Other providers' ids that fit pass unchanged (so ids stay the same
// string both ways); any other id is written as a prefix + base64url of its UTF-8 bytes, which only uses allowed
// characters and decodes back to the original. An id that happens to start with the prefix is encoded too.
const ID_OK = /^[A-Za-z0-9_-]+$/;
const ID_PREFIX = "syid_";

export function toAnthropicToolId(id: string): string {
  if (ID_OK.test(id) && !id.startsWith(ID_PREFIX)) return id;
  return ID_PREFIX + Buffer.from(id, "utf8").toString("base64url");
}

export function fromAnthropicToolId(id: string): string {
  return id.startsWith(ID_PREFIX) ? Buffer.from(id.slice(ID_PREFIX.length), "base64url").toString("utf8") : id;
}

/** A tool call's arguments as Anthropic's `input` object: anything that is not a JSON object becomes `{}`. */
export function inputObject(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** Anthropic `input` (an object) as the JSON text IR tool calls carry. */
export function argumentsText(input: unknown, param: string): string {
  if (input === undefined || input === null) return "{}";
  if (deeperThan(input, MAX_NESTING))
    throw new TranslationError(`${param} is nested more than ${MAX_NESTING} levels deep`, param);
  return JSON.stringify(input);
}

// A reasoning part's item id (Responses reasoning items have one, and OpenAI wants it back with the encrypted
// value) rides in the seal's origin as "origin@id" when it is a plain token; provider names have no "@".
const PLAIN_ID = /^[A-Za-z0-9_-]+$/;

/**
 * The `signature` (or redacted `data`) a client is given for a reasoning part made by a provider other than
 * Anthropic: sealed with its origin, so the next turn knows whose it is (an empty value keeps just the origin, for
 * providers that want their reasoning text back without a proof). Reasoning of unknown origin gets "".
 */
export function signatureFor(part: { origin: string | null; opaque?: string; id?: string }): string {
  if (!part.origin) return "";
  const origin = part.id && PLAIN_ID.test(part.id) ? `${part.origin}@${part.id}` : part.origin;
  return sealOpaque(origin, part.opaque ?? "");
}

/** A client's thinking-block signature read back: ours (sealed) names its origin; any other is Anthropic's own. */
export function reasoningFromSignature(sig: unknown): Pick<ReasoningPart, "origin" | "opaque" | "id"> {
  if (typeof sig !== "string" || sig === "") return { origin: null };
  const sealed = openOpaque(sig);
  if (!sealed) return { origin: "anthropic", opaque: sig };
  const at = sealed.origin.indexOf("@");
  const origin = at === -1 ? sealed.origin : sealed.origin.slice(0, at);
  return {
    origin,
    ...(sealed.value && { opaque: sealed.value }),
    ...(at !== -1 && { id: sealed.origin.slice(at + 1) }),
  };
}
