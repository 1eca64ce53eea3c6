// What both sides of the chat codec share: stop reasons, usage, and the `reasoning_details` entries that carry a
// reasoning part's sealed opaque value through a chat client.

import { openOpaque, sealOpaque, type IrUsage, type ReasoningPart, type StopReason } from "../ir";

export const FINISH_REASON: Record<StopReason, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};

const STOP_REASON: Record<string, StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/**
 * An upstream's finish_reason as an IR stop reason. Some OpenAI-compatible upstreams (Gemini's) say "stop" on an
 * answer that called tools: the calls decide, or the client would not run them.
 */
export function stopReasonOf(finish: unknown, calledTools: boolean): StopReason {
  const stop = (typeof finish === "string" && STOP_REASON[finish]) || "end_turn";
  return calledTools && stop === "end_turn" ? "tool_use" : stop;
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * A chat usage object as IrUsage. Output is what the upstream counts as generated: completion_tokens, or more
 * when total_tokens says so (xAI leaves reasoning out of completion_tokens, Gemini may state thinking only through
 * total_tokens); reasoning is the stated reasoning_tokens, else that difference. DeepSeek states cache hits as
 * prompt_cache_hit_tokens.
 */
export function usageFromChat(u: any): IrUsage | null {
  if (typeof u !== "object" || u === null) return null;
  const input = count(u.prompt_tokens);
  const cacheRead = Math.min(input, count(u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens));
  const completion = count(u.completion_tokens);
  const stated = count(u.completion_tokens_details?.reasoning_tokens);
  const beyond = count(u.total_tokens) - input;
  const output = beyond > completion ? (stated ? Math.min(beyond, completion + stated) : beyond) : completion;
  const reasoning = stated || output - completion;
  return { input, cacheRead, cacheWrite: 0, output, reasoning: Math.min(reasoning, output) };
}

/** IrUsage in chat's fields: prompt_tokens include cached tokens, completion_tokens include reasoning. */
export function chatUsage(u: IrUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

/**
 * A reasoning part as a `reasoning_details` entry (the shape OpenRouter's chat API uses, which chat clients that
 * keep reasoning across turns already send back). The opaque value is sealed with its origin, so a later turn can
 * only hand it back to the provider that made it; a part with an origin but no opaque (DeepSeek) is sealed with an
 * empty value so its origin survives too.
 */
export function reasoningDetail(
  p: Pick<ReasoningPart, "text" | "origin" | "opaque" | "redacted" | "id">,
  index: number,
): Record<string, unknown> {
  const sealed = p.origin ? sealOpaque(p.origin, p.opaque ?? "") : p.opaque;
  const entry: Record<string, unknown> = p.redacted
    ? { type: "reasoning.encrypted", data: sealed ?? "" }
    : { type: "reasoning.text", text: p.text };
  if (!p.redacted && sealed !== undefined) entry.signature = sealed;
  if (p.id) entry.id = p.id;
  entry.index = index;
  return entry;
}

/** A `reasoning_details` entry back as a reasoning part; null for entries that carry nothing to send back. */
export function reasoningFromDetail(d: any): ReasoningPart | null {
  if (typeof d !== "object" || d === null) return null;
  const redacted = d.type === "reasoning.encrypted";
  const sealed = redacted ? d.data : d.signature;
  const text = d.type === "reasoning.text" ? d.text : d.type === "reasoning.summary" ? d.summary : "";
  if (typeof text !== "string" && typeof sealed !== "string") return null;
  const opened = typeof sealed === "string" ? openOpaque(sealed) : null;
  const part: ReasoningPart = {
    type: "reasoning",
    text: typeof text === "string" ? text : "",
    origin: opened?.origin ?? null,
  };
  // An unsealed value is no provider's we know: it travels with origin null, which every upstream encoder drops.
  const opaque = opened ? opened.value : typeof sealed === "string" ? sealed : "";
  if (opaque) part.opaque = opaque;
  if (redacted) part.redacted = true;
  if (typeof d.id === "string") part.id = d.id;
  return part;
}
